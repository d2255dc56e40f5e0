// Clocks for tests: MockClock (gMock twin of kube::Clock) and FakeClock, whose time moves only
// when a test advances it or something sleeps on it (a sleep advances it at once, so timing
// loops run instantly and deterministically).
//
//   kube::FakeClock clock;                 // starts at 2026-01-01T00:00:00Z
//   clock.Advance(absl::Seconds(16));      // a lease expires without waiting 16 s
#pragma once

#include <atomic>
#include <mutex>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "kube/clock.h"

namespace kube {

class MockClock : public Clock {
 public:
  MOCK_METHOD(absl::Time, Now, (), (override));
  MOCK_METHOD(bool, SleepFor, (absl::Duration duration, const Cancellation* cancel), (override));
};

class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromCivil(absl::CivilSecond(2026, 1, 1, 0, 0, 0),
                                                        absl::UTCTimeZone()))
      : now_(start) {}

  absl::Time Now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  // Returns false without advancing if `cancel` has fired.
  bool SleepFor(absl::Duration duration, const Cancellation* cancel) override {
    if (cancel != nullptr && cancel->cancelled()) return false;
    Advance(duration);
    ++sleeps_;
    return cancel == nullptr || !cancel->cancelled();
  }
  void Advance(absl::Duration duration) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += duration;
  }
  int sleeps() const { return sleeps_; }

 private:
  std::mutex mu_;
  absl::Time now_;
  std::atomic<int> sleeps_{0};
};

}  // namespace kube
