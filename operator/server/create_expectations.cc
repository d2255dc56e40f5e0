#include "operator/server/create_expectations.h"

#include <algorithm>

// Lookups below convert string_view keys to std::string: this Abseil's heterogeneous lookup
// takes absl::string_view, which is not std::string_view here.
namespace phalanx::operator_server {

void CreateExpectations::Expect(std::string_view owner, std::string_view name, absl::Time now) {
  absl::MutexLock lock(&mu_);
  expected_[std::string(owner)].insert_or_assign(std::string(name), now);
}

void CreateExpectations::Observed(std::string_view owner, std::string_view name) {
  absl::MutexLock lock(&mu_);
  // Most informer events are of pods nobody waits for.
  auto it = expected_.find(std::string(owner));
  if (it == expected_.end()) return;
  it->second.erase(std::string(name));
  if (it->second.empty()) expected_.erase(it);
}

CreateExpectations::Pending CreateExpectations::PendingOf(std::string_view owner,
                                                          absl::Time now) {
  Pending out;
  absl::MutexLock lock(&mu_);
  auto it = expected_.find(std::string(owner));
  if (it == expected_.end()) return out;
  auto& names = it->second;
  for (auto n = names.begin(); n != names.end();) {
    const absl::Duration left = n->second + ttl_ - now;
    if (left <= absl::ZeroDuration()) {
      names.erase(n++);
      continue;
    }
    out.names.insert(n->first);
    out.wait = std::min(out.wait, left);
    ++n;
  }
  if (names.empty()) expected_.erase(it);
  return out;
}

size_t CreateExpectations::size() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [owner, names] : expected_) n += names.size();
  return n;
}

}  // namespace phalanx::operator_server
