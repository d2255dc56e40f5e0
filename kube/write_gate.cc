#include "kube/write_gate.h"

#include <algorithm>
#include <chrono>

#include "absl/time/clock.h"

namespace kube {

void WriteGate::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  ++holds_;
}

void WriteGate::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --holds_;
  }
  cv_.notify_all();
}

absl::Duration WriteGate::Yield(absl::Duration max, const Cancellation* cancel) {
  std::unique_lock<std::mutex> lock(mu_);
  if (holds_ == 0 || max <= absl::ZeroDuration()) return absl::ZeroDuration();
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + max;
  // A cancel does not notify cv_: wake up now and then to look at it.
  constexpr absl::Duration kPoll = absl::Milliseconds(50);
  ++waiters_;
  while (holds_ > 0 && (cancel == nullptr || !cancel->cancelled())) {
    const absl::Time now = absl::Now();
    if (now >= deadline) break;
    cv_.wait_for(lock, absl::ToChronoMilliseconds(std::min(deadline - now, kPoll)) +
                           std::chrono::milliseconds(1));
  }
  --waiters_;
  const absl::Duration waited = absl::Now() - start;
  ++deferrals_;
  deferred_ += waited;
  return waited;
}

bool WriteGate::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return holds_ > 0;
}

int WriteGate::waiters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiters_;
}

int64_t WriteGate::deferrals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return deferrals_;
}

absl::Duration WriteGate::deferred() const {
  std::lock_guard<std::mutex> lock(mu_);
  return deferred_;
}

}  // namespace kube
