#include "kube/fenced_client.h"

#include "absl/strings/str_cat.h"

namespace kube {

absl::Status LeaseFence::Check(absl::Time now, const std::string& what) const {
  const int64_t until = until_ns_.load();
  if (until != 0 && absl::ToUnixNanos(now) < until) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(
      "not writing: this replica does not surely hold Lease ", what,
      until == 0 ? " (not acquired, or lost)"
                 : absl::StrCat(" (not renewed in time: the fence ended at ",
                                absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixNanos(until),
                                                 absl::UTCTimeZone()),
                                "; another replica may lead now)")));
}

}  // namespace kube
