#include "kube/event_recorder.h"

#include "absl/strings/str_cat.h"
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

}  // namespace
}  // namespace kube
