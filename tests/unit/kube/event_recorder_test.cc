#include "kube/event_recorder.h"

#include <atomic>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/errors.h"
#include "kube/json.h"
#include "tests/mocks/kube/mock_client.h"
#include "tests/mocks/kube/mock_clock.h"
#include "tests/unit/kube/testdata.h"

namespace kube {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Return;

const ObjectReference kJob{.api_version = "phalanx.dev/v1alpha1",
                           .kind = "TrainingJob",
                           .namespace_ = "ml",
                           .name = "llama",
                           .uid = "j-1"};

class EventRecorderTest : public ::testing::Test {
 protected:
  // Expects `creates` new Events, each answered with "{}".
  void ExpectCreates(int creates) {
    EXPECT_CALL(client, DoCreate(_, _, _, _, _, _))
        .Times(creates)
        .WillRepeatedly(Return(std::string("{}")));
  }

  MockClient client;
  FakeClock clock;
  EventRecorder recorder{client, {.component = "c"}, clock};
};

TEST(EventRecorderCreateTest, CreatesACoreV1Event) {
  MockClient client;
  FakeClock clock;
  EventRecorder recorder(client, {.component = "phalanx-operator", .host = "op-0"}, clock);
  std::string body;
  EXPECT_CALL(client, DoCreate(_, "ml", _, _, "", ""))
      .WillOnce(Invoke([&](const Resource& r, std::string_view, std::string_view b,
                           const WriteOptions&, std::string_view, std::string_view) {
        EXPECT_EQ(r.plural, "events");
        body = std::string(b);
        return std::string("{}");
      }));
  ASSERT_OK(recorder.Record(kJob, EventType::kNormal, "Admitted", "admitted to gpu-a"));
  ASSERT_OK_AND_ASSIGN(rapidjson::Document doc, ParseJson(body));
  EXPECT_EQ(StringMember(doc, "kind"), "Event");
  EXPECT_THAT(std::string(StringMember(doc["metadata"], "name")), HasSubstr("llama."));
  EXPECT_EQ(StringMember(doc["involvedObject"], "uid"), "j-1");
  EXPECT_EQ(StringMember(doc["involvedObject"], "kind"), "TrainingJob");
  EXPECT_EQ(StringMember(doc, "reason"), "Admitted");
  EXPECT_EQ(StringMember(doc, "type"), "Normal");
  EXPECT_EQ(StringMember(doc["source"], "component"), "phalanx-operator");
  EXPECT_EQ(StringMember(doc, "firstTimestamp"), "2026-01-01T00:00:00Z");
  EXPECT_EQ(doc["count"].GetInt(), 1);
}

TEST_F(EventRecorderTest, RepeatsAreAggregatedIntoCount) {
  ExpectCreates(2);
  std::vector<std::string> patches;
  EXPECT_CALL(client, DoPatch(_, "ml", HasSubstr("llama."), PatchType::kMerge, _, _, ""))
      .WillRepeatedly(Invoke([&](const Resource&, std::string_view, std::string_view, PatchType,
                                 std::string_view b, const WriteOptions&, std::string_view) {
        patches.emplace_back(b);
        return std::string("{}");
      }));
  ASSERT_OK(recorder.Record(kJob, EventType::kWarning, "Unplaceable", "no domain fits"));
  clock.Advance(absl::Seconds(30));
  ASSERT_OK(recorder.Record(kJob, EventType::kWarning, "Unplaceable", "no domain fits"));
  ASSERT_OK(recorder.Record(kJob, EventType::kWarning, "Unplaceable", "no domain fits"));
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_THAT(patches[1], HasSubstr("\"count\":3"));
  EXPECT_THAT(patches[0], HasSubstr("\"lastTimestamp\":\"2026-01-01T00:00:30Z\""));
  // A different message is a different event.
  ASSERT_OK(recorder.Record(kJob, EventType::kWarning, "Unplaceable", "quota exhausted"));
}

TEST_F(EventRecorderTest, ExpiredEventIsRecreated) {
  ExpectCreates(2);
  EXPECT_CALL(client, DoPatch(_, _, _, _, _, _, _))
      .WillOnce(Return(
          StatusFromResponse({.status = 404, .body = testing::Testdata("status_404.json")})));
  ASSERT_OK(recorder.Record(kJob, EventType::kNormal, "R", "m"));
  ASSERT_OK(recorder.Record(kJob, EventType::kNormal, "R", "m"));
}

TEST_F(EventRecorderTest, ForgetsEventsOnceTheWindowHasPassed) {
  // One Event per job for a thousand jobs, then one more an aggregation window later: only the
  // last is remembered, and a repeat of an old one is a new Event, not a patch of a stale one.
  ExpectCreates(1002);
  EXPECT_CALL(client, DoPatch(_, _, _, _, _, _, _)).Times(0);
  for (int i = 0; i < 1000; ++i) {
    ObjectReference job = kJob;
    job.uid = absl::StrCat("j-", i);
    ASSERT_OK(recorder.Record(job, EventType::kNormal, "Admitted", "admitted"));
  }
  EXPECT_EQ(recorder.remembered(), 1000u);
  clock.Advance(absl::Minutes(10));
  ASSERT_OK(recorder.Record(kJob, EventType::kNormal, "Running", "all ranks are running"));
  EXPECT_EQ(recorder.remembered(), 1u);
  ASSERT_OK(recorder.Record(kJob, EventType::kNormal, "Admitted", "admitted"));
}

TEST_F(EventRecorderTest, ClusterScopedObjectsGoToDefault) {
  EXPECT_CALL(client, DoCreate(_, "default", _, _, _, _)).WillOnce(Return(std::string("{}")));
  ASSERT_OK(recorder.Record({.api_version = "v1", .kind = "Node", .name = "n-1", .uid = "n"},
                            EventType::kWarning, "Unhealthy", "GPU XID 79"));
}

// Asynchronous: Record() returns while the API server has not answered; the Event, and the
// repeat that follows it (aggregated on the same writer), are written in order afterwards.
TEST(EventRecorderAsyncTest, RecordReturnsBeforeTheWriteAndWritesInOrder) {
  MockClient client;
  FakeClock clock;
  absl::Notification release;
  std::atomic<int> creates{0};
  std::vector<std::string> patches;
  EXPECT_CALL(client, DoCreate(_, "ml", _, _, _, _))
      .WillOnce(Invoke([&](const Resource&, std::string_view, std::string_view,
                           const WriteOptions&, std::string_view, std::string_view) {
        release.WaitForNotification();
        ++creates;
        return std::string("{}");
      }));
  EXPECT_CALL(client, DoPatch(_, "ml", HasSubstr("llama."), PatchType::kMerge, _, _, ""))
      .WillOnce(Invoke([&](const Resource&, std::string_view, std::string_view, PatchType,
                           std::string_view b, const WriteOptions&, std::string_view) {
        patches.emplace_back(b);
        return std::string("{}");
      }));
  EventRecorder recorder(client, {.component = "c", .async_writers = 3}, clock);
  absl::Cleanup unblock = [&] { if (!release.HasBeenNotified()) release.Notify(); };
  ASSERT_OK(recorder.Record(kJob, EventType::kWarning, "Unplaceable", "no domain fits"));
  clock.Advance(absl::Seconds(5));
  ASSERT_OK(recorder.Record(kJob, EventType::kWarning, "Unplaceable", "no domain fits"));
  EXPECT_EQ(creates.load(), 0);  // both queued, the first write still waiting on the server
  EXPECT_FALSE(recorder.Flush(absl::Milliseconds(50)));
  std::move(unblock).Invoke();
  ASSERT_TRUE(recorder.Flush(absl::Seconds(30)));
  EXPECT_EQ(creates.load(), 1);
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_THAT(patches[0], HasSubstr("\"count\":2"));
  // Stamped when recorded, not when written.
  EXPECT_THAT(patches[0], HasSubstr("\"lastTimestamp\":\"2026-01-01T00:00:05Z\""));
  EXPECT_EQ(recorder.dropped(), 0);
}

// A full queue drops the Event with a clear error and counts it; nothing blocks.
TEST(EventRecorderAsyncTest, AFullQueueDropsAndCounts) {
  MockClient client;
  FakeClock clock;
  absl::Notification release;
  EXPECT_CALL(client, DoCreate(_, _, _, _, _, _))
      .Times(3)  // the one being written, then the two that were queued
      .WillRepeatedly(Invoke([&](const Resource&, std::string_view, std::string_view,
                                 const WriteOptions&, std::string_view, std::string_view) {
        release.WaitForNotification();
        return std::string("{}");
      }));
  EventRecorder recorder(client, {.component = "c", .async_writers = 1, .max_queued = 2}, clock);
  absl::Cleanup unblock = [&] { if (!release.HasBeenNotified()) release.Notify(); };
  ObjectReference job = kJob;
  for (int i = 0; i < 2; ++i) {
    job.uid = absl::StrCat("j-", i);
    ASSERT_OK(recorder.Record(job, EventType::kNormal, "Admitted", "admitted"));
  }
  // The writer may have taken the first off the queue already, but still counts it as queued
  // until written: two are pending, so the third is dropped.
  job.uid = "j-2";
  absl::Status full = recorder.Record(job, EventType::kNormal, "Admitted", "admitted");
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(full.message()), HasSubstr("TrainingJob ml/llama"));
  EXPECT_EQ(recorder.dropped(), 1);
  EXPECT_EQ(recorder.queued(), 2u);
  std::move(unblock).Invoke();
  ASSERT_TRUE(recorder.Flush(absl::Seconds(30)));
  job.uid = "j-3";
  ASSERT_OK(recorder.Record(job, EventType::kNormal, "Admitted", "admitted"));
  ASSERT_TRUE(recorder.Flush(absl::Seconds(30)));
}

// A failed write is logged, not retried, and does not stop the writer.
TEST(EventRecorderAsyncTest, AFailedWriteDoesNotStopTheWriter) {
  MockClient client;
  FakeClock clock;
  EXPECT_CALL(client, DoCreate(_, _, _, _, _, _))
      .WillOnce(Return(absl::UnavailableError("connection refused")))
      .WillOnce(Return(std::string("{}")));
  EventRecorder recorder(client, {.component = "c", .async_writers = 1}, clock);
  ASSERT_OK(recorder.Record(kJob, EventType::kNormal, "Admitted", "admitted"));
  ASSERT_OK(recorder.Record(kJob, EventType::kNormal, "Running", "all ranks are running"));
  ASSERT_TRUE(recorder.Flush(absl::Seconds(30)));
  EXPECT_EQ(recorder.dropped(), 0);
}

}  // namespace
}  // namespace kube
