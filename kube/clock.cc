#include "kube/clock.h"

#include <thread>

#include "absl/time/clock.h"

namespace kube {
namespace {

class SystemClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  bool SleepFor(absl::Duration duration, const Cancellation* cancel) override {
    if (cancel == nullptr) {
      absl::SleepFor(duration);
      return true;
    }
    return !cancel->WaitFor(duration);
  }
};

}  // namespace

Clock& RealClock() {
  static SystemClock* clock = new SystemClock();
  return *clock;
}

}  // namespace kube
