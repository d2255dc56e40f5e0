#include "operator/server/lifecycle_overlay.h"

#include <cstdint>
#include <utility>

#include "absl/strings/numbers.h"

namespace phalanx::operator_server {

bool CaughtUp(const std::string& seen, const std::string& written) {
  if (seen == written) return true;
  uint64_t a = 0;
  uint64_t b = 0;
  return absl::SimpleAtoi(seen, &a) && absl::SimpleAtoi(written, &b) && a > b;
}

void LifecycleOverlay::Record(const kube::ObjectMeta& job, LifecycleStatus written,
                              std::string resource_version) {
  absl::MutexLock lock(&mu_);
  in_flight_[job.Key()] = {.uid = job.uid,
                           .resource_version = std::move(resource_version),
                           .status = std::move(written)};
}

bool LifecycleOverlay::Apply(const kube::ObjectMeta& job, LifecycleStatus& current) {
  absl::MutexLock lock(&mu_);
  auto it = in_flight_.find(job.Key());
  if (it == in_flight_.end()) return false;
  const Written& w = it->second;
  if (w.uid != job.uid || CaughtUp(job.resource_version, w.resource_version) ||
      w.status == current) {
    in_flight_.erase(it);
    return false;
  }
  current = w.status;
  return true;
}

void LifecycleOverlay::Forget(const std::string& key) {
  absl::MutexLock lock(&mu_);
  in_flight_.erase(key);
}

size_t LifecycleOverlay::size() const {
  absl::MutexLock lock(&mu_);
  return in_flight_.size();
}

}  // namespace phalanx::operator_server
