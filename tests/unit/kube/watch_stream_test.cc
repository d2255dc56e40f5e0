#include "kube/watch_stream.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/errors.h"
#include "tests/unit/kube/testdata.h"

namespace kube {
namespace {

using ::phalanx::testing::StatusIs;
using testing::Testdata;
using Type = WatchEvent::Type;

std::vector<Type> Types(const std::vector<WatchEvent>& events) {
  std::vector<Type> types;
  for (const WatchEvent& e : events) types.push_back(e.type);
  return types;
}

TEST(WatchStreamTest, ParsesEveryEventType) {
  WatchStreamParser parser;
  std::vector<WatchEvent> events;
  ASSERT_OK(parser.Feed(Testdata("watch_stream.jsonl"), &events));
  ASSERT_EQ(events.size(), 5u);
  EXPECT_THAT(Types(events), ::testing::ElementsAre(Type::kAdded, Type::kModified, Type::kBookmark,
                                                    Type::kDeleted, Type::kError));
  EXPECT_EQ(events[0].resource_version, "190010");
  EXPECT_EQ(events[2].resource_version, "190050");  // a bookmark advances the version
  EXPECT_EQ(events[3].resource_version, "190060");
  EXPECT_EQ(events[4].resource_version, "");
  EXPECT_TRUE(IsGone(StatusFromStatusObject(events[4].object, 500)));
  EXPECT_EQ(parser.pending_bytes(), 0u);
}

TEST(WatchStreamTest, ObjectTextIsTheRawObject) {
  ASSERT_OK_AND_ASSIGN(
      WatchEvent event,
      ParseWatchEvent(
          R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"9"}}})"));
  EXPECT_EQ(event.object, R"({"metadata":{"name":"a","resourceVersion":"9"}})");
  // Key order does not matter.
  ASSERT_OK_AND_ASSIGN(
      WatchEvent reversed,
      ParseWatchEvent(R"({"object":{"metadata":{"resourceVersion":"10"}},"type":"DELETED"})"));
  EXPECT_EQ(reversed.type, Type::kDeleted);
  EXPECT_EQ(reversed.resource_version, "10");
}

// Whatever way the transport splits the bytes, the same events come out, and only complete
// lines are parsed.
TEST(WatchStreamTest, EverySplitPointGivesTheSameEvents) {
  std::string stream = Testdata("watch_stream.jsonl");
  WatchStreamParser whole;
  std::vector<WatchEvent> expected;
  ASSERT_OK(whole.Feed(stream, &expected));
  for (size_t split = 0; split <= stream.size(); ++split) {
    WatchStreamParser parser;
    std::vector<WatchEvent> events;
    ASSERT_OK(parser.Feed(std::string_view(stream).substr(0, split), &events));
    ASSERT_OK(parser.Feed(std::string_view(stream).substr(split), &events));
    ASSERT_EQ(events.size(), expected.size()) << "split at " << split;
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].object, expected[i].object) << "split at " << split;
      EXPECT_EQ(events[i].resource_version, expected[i].resource_version);
    }
  }
}

TEST(WatchStreamTest, ByteAtATime) {
  std::string stream = Testdata("watch_stream.jsonl");
  WatchStreamParser parser;
  std::vector<WatchEvent> events;
  for (char c : stream) ASSERT_OK(parser.Feed(std::string_view(&c, 1), &events));
  EXPECT_EQ(events.size(), 5u);
}

TEST(WatchStreamTest, PartialLineWaitsForTheRest) {
  WatchStreamParser parser;
  std::vector<WatchEvent> events;
  ASSERT_OK(parser.Feed(R"({"type":"ADDED","object":{"metadata":)", &events));
  EXPECT_TRUE(events.empty());
  EXPECT_GT(parser.pending_bytes(), 0u);
  ASSERT_OK(parser.Feed("{\"resourceVersion\":\"3\"}}}\r\n\n", &events));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].resource_version, "3");
}

TEST(WatchStreamTest, MalformedLinesAreErrors) {
  WatchStreamParser parser;
  std::vector<WatchEvent> events;
  EXPECT_THAT(parser.Feed("not json\n", &events), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(ParseWatchEvent(R"({"type":"RENAMED","object":{}})"),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(ParseWatchEvent(R"({"type":"ADDED"})"), StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace kube
