// kube::WriteGate: a yield waits exactly as long as a hold lasts, bounded by its maximum and a
// cancel; and an EventRecorder given one sends nothing while it is held.
#include "kube/write_gate.h"

#include <atomic>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/event_recorder.h"
#include "tests/mocks/kube/mock_client.h"
#include "tests/mocks/kube/mock_clock.h"

namespace kube {
namespace {

using ::testing::_;
using ::testing::Return;

TEST(WriteGateTest, AnOpenGateDoesNotWait) {
  WriteGate gate;
  EXPECT_FALSE(gate.held());
  EXPECT_EQ(gate.Yield(absl::Hours(1)), absl::ZeroDuration());
  EXPECT_EQ(gate.deferrals(), 0);
  {
    WriteGate::Hold hold(gate);
    EXPECT_TRUE(gate.held());
    // A zero bound never waits, held or not.
    EXPECT_EQ(gate.Yield(absl::ZeroDuration()), absl::ZeroDuration());
  }
  EXPECT_FALSE(gate.held());
  EXPECT_EQ(gate.deferrals(), 0);
}

// The yield ends when the last of two holds ends, not at the first, and not before.
TEST(WriteGateTest, AYieldWaitsUntilEveryHoldHasEnded) {
  WriteGate gate;
  std::atomic<int> released{0};
  absl::Notification yielding;
  gate.Acquire();
  gate.Acquire();
  std::atomic<int> seen_at_return{-1};
  std::thread writer([&] {
    yielding.Notify();
    gate.Yield(absl::Hours(1));
    seen_at_return = released.load();
  });
  yielding.WaitForNotification();
  released = 1;
  gate.Release();
  absl::SleepFor(absl::Milliseconds(20));  // a yield that ended early would show 1
  released = 2;
  gate.Release();
  writer.join();
  EXPECT_EQ(seen_at_return.load(), 2);
  EXPECT_EQ(gate.deferrals(), 1);
  EXPECT_GT(gate.deferred(), absl::ZeroDuration());
}

// A hold that never ends holds a yield only up to its bound.
TEST(WriteGateTest, AYieldGivesUpAfterItsBound) {
  WriteGate gate;
  WriteGate::Hold hold(gate);
  const absl::Duration waited = gate.Yield(absl::Milliseconds(30));
  EXPECT_GE(waited, absl::Milliseconds(30));
  EXPECT_EQ(gate.deferrals(), 1);
  EXPECT_EQ(gate.deferred(), waited);
}

TEST(WriteGateTest, ACancelEndsAYield) {
  WriteGate gate;
  WriteGate::Hold hold(gate);
  Cancellation stop;
  std::thread canceller([&] {
    absl::SleepFor(absl::Milliseconds(10));
    stop.Cancel();
  });
  gate.Yield(absl::Hours(1), &stop);  // returns: the test would time out otherwise
  canceller.join();
  EXPECT_TRUE(stop.cancelled());
}

// An Event recorded while the gate is held is queued and sent only once the hold ends.
TEST(WriteGateTest, AnEventWriterYieldsToTheGate) {
  MockClient client;
  FakeClock clock;
  WriteGate gate;
  std::atomic<int> creates{0};
  EXPECT_CALL(client, DoCreate(_, _, _, _, _, _)).WillRepeatedly([&](auto&&...) {
    ++creates;
    return std::string("{}");
  });
  EventRecorder recorder(
      client, {.component = "c", .async_writers = 1, .yield_to = &gate, .max_yield = absl::Hours(1)},
      clock);
  const ObjectReference job{.api_version = "phalanx.dev/v1alpha1", .kind = "TrainingJob",
                            .namespace_ = "ml", .name = "llama", .uid = "j-1"};
  {
    WriteGate::Hold hold(gate);
    ASSERT_OK(recorder.Record(job, EventType::kNormal, "Admitted", "admitted"));
    EXPECT_FALSE(recorder.Flush(absl::Milliseconds(50)));
    EXPECT_EQ(creates.load(), 0);
  }
  ASSERT_TRUE(recorder.Flush(absl::Seconds(30)));
  EXPECT_EQ(creates.load(), 1);
  EXPECT_EQ(gate.deferrals(), 1);
}

// Destroying a recorder whose writer is yielding to a hold that never ends does not wait for
// the hold (nor for max_yield).
TEST(WriteGateTest, ARecorderStopsWhileItsWriterYields) {
  MockClient client;
  FakeClock clock;
  WriteGate gate;
  WriteGate::Hold hold(gate);
  EXPECT_CALL(client, DoCreate(_, _, _, _, _, _))
      .Times(::testing::AtMost(1))
      .WillRepeatedly(Return(std::string("{}")));
  {
    EventRecorder recorder(client,
                           {.component = "c", .async_writers = 1, .yield_to = &gate,
                            .max_yield = absl::Hours(1)},
                           clock);
    ObjectReference job{.kind = "TrainingJob", .namespace_ = "ml", .name = "llama"};
    ASSERT_OK(recorder.Record(job, EventType::kNormal, "Admitted", "admitted"));
    // Until the writer has taken it and is yielding.
    for (int i = 0; i < 3000 && gate.waiters() == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
    ASSERT_EQ(gate.waiters(), 1);
  }
  EXPECT_EQ(gate.deferrals(), 1);
}

}  // namespace
}  // namespace kube
