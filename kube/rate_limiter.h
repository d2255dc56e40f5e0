// How long a work-queue item waits before it is retried, as in client-go's workqueue: per-item
// exponential backoff (a failing item slows down; the others don't) combined with an overall
// token bucket (a storm of failures cannot flood the API server).
//
//   auto limiter = kube::DefaultControllerRateLimiter(clock);  // max(5ms*2^n up to 1000s,
//   10qps/100 burst) absl::Duration delay = limiter->When("ml/job-a"); limiter->Forget("ml/job-a");
//   // after a success: the next failure starts from 5 ms again
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/time/time.h"
#include "kube/clock.h"

namespace kube {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // The delay before `item` should be processed again; counts as one more failure of it.
  virtual absl::Duration When(const std::string& item) = 0;
  // Stop tracking `item` (it succeeded).
  virtual void Forget(const std::string& item) = 0;
  virtual int NumRequeues(const std::string& item) = 0;
};

// base * 2^failures, capped at `max`.
class ItemExponentialRateLimiter : public RateLimiter {
 public:
  ItemExponentialRateLimiter(absl::Duration base, absl::Duration max) : base_(base), max_(max) {}
  absl::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  const absl::Duration base_, max_;
  std::mutex mu_;
  std::unordered_map<std::string, int> failures_;
};

// A token bucket of `burst` tokens refilled at `qps`: When() reserves the next token and returns
// how long until it is available (zero while the bucket has tokens).
class TokenBucketRateLimiter : public RateLimiter {
 public:
  TokenBucketRateLimiter(Clock& clock, double qps, int burst);
  absl::Duration When(const std::string& item) override;
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) override { return 0; }

 private:
  Clock& clock_;
  const double qps_;
  const double burst_;
  std::mutex mu_;
  double tokens_;
  absl::Time last_;
};

// The longest delay of its parts.
class MaxOfRateLimiter : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  absl::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// client-go's DefaultControllerRateLimiter: max(5 ms * 2^n capped at 1000 s, 10 qps burst 100).
std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock = RealClock());

}  // namespace kube
