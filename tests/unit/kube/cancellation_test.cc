#include "kube/cancellation.h"

#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace kube {
namespace {

// Found by the sanitizer build (UBSan, signed overflow in std::chrono): an infinite timeout
// overflowed steady_clock::now() + timeout, and WaitFor returned false at once instead of waiting.
TEST(CancellationTest, AnInfiniteWaitEndsOnlyWithTheCancellation) {
  Cancellation cancel;
  std::thread canceller([&] {
    absl::SleepFor(absl::Milliseconds(50));
    cancel.Cancel();
  });
  EXPECT_TRUE(cancel.WaitFor(absl::InfiniteDuration()));
  EXPECT_TRUE(cancel.cancelled());
  canceller.join();
}

TEST(CancellationTest, AFiniteWaitTimesOutUncancelled) {
  Cancellation cancel;
  EXPECT_FALSE(cancel.WaitFor(absl::Milliseconds(1)));
  cancel.Cancel();
  EXPECT_TRUE(cancel.WaitFor(absl::Hours(1)));
}

}  // namespace
}  // namespace kube
