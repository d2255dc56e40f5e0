#include "kube/backoff.h"

#include <algorithm>

#include "kube/errors.h"

namespace kube {

absl::Duration Backoff::Next() {
  absl::Duration base = current_;
  current_ = std::min(options_.max, current_ * options_.factor);
  if (options_.jitter <= 0) return base;
  std::uniform_real_distribution<double> fraction(0.0, options_.jitter);
  return base + base * fraction(rng_);
}

absl::Status RetryOnConflict(const std::function<absl::Status()>& fn, Clock& clock,
                             const RetryOptions& options) {
  Backoff backoff(options.backoff);
  absl::Status status;
  for (int attempt = 0; attempt < std::max(1, options.attempts); ++attempt) {
    if (attempt > 0) clock.SleepFor(backoff.Next(), nullptr);
    status = fn();
    if (!IsConflict(status)) return status;
  }
  return status;
}

}  // namespace kube
