#include "kube/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace kube {

absl::Duration ItemExponentialRateLimiter::When(const std::string& item) {
  std::lock_guard<std::mutex> lock(mu_);
  int failures = failures_[item]++;
  // 2^failures overflows quickly; past 62 doublings anything is beyond max anyway.
  if (failures >= 62) return max_;
  double delay_seconds = absl::ToDoubleSeconds(base_) * std::ldexp(1.0, failures);
  if (delay_seconds >= absl::ToDoubleSeconds(max_)) return max_;
  return absl::Seconds(delay_seconds);
}

void ItemExponentialRateLimiter::Forget(const std::string& item) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(item);
}

int ItemExponentialRateLimiter::NumRequeues(const std::string& item) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

TokenBucketRateLimiter::TokenBucketRateLimiter(Clock& clock, double qps, int burst)
    : clock_(clock), qps_(qps), burst_(burst), tokens_(burst), last_(clock.Now()) {}

absl::Duration TokenBucketRateLimiter::When(const std::string&) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_.Now();
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * qps_);
    last_ = now;
  }
  // Reserve a token; a negative balance is the queue of reservations ahead of this one.
  tokens_ -= 1.0;
  if (tokens_ >= 0) return absl::ZeroDuration();
  return absl::Seconds(-tokens_ / qps_);
}

absl::Duration MaxOfRateLimiter::When(const std::string& item) {
  absl::Duration longest = absl::ZeroDuration();
  for (auto& limiter : limiters_) longest = std::max(longest, limiter->When(item));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& item) {
  for (auto& limiter : limiters_) limiter->Forget(item);
}

int MaxOfRateLimiter::NumRequeues(const std::string& item) {
  int most = 0;
  for (auto& limiter : limiters_) most = std::max(most, limiter->NumRequeues(item));
  return most;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> parts;
  parts.push_back(
      std::make_unique<ItemExponentialRateLimiter>(absl::Milliseconds(5), absl::Seconds(1000)));
  parts.push_back(std::make_unique<TokenBucketRateLimiter>(clock, 10.0, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(parts));
}

}  // namespace kube
