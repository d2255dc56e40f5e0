// Reflector and Informer against a mocked Client: recorded list pages and watch streams, with the
// failure modes a real API server produces (410 at watch start, ERROR 410 mid-stream, dropped
// connections, 429 with Retry-After).
#include "kube/informer.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/errors.h"
#include "tests/mocks/kube/mock_client.h"
#include "tests/mocks/kube/mock_clock.h"
#include "tests/unit/kube/testdata.h"

namespace kube {
namespace {

using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Invoke;
using testing::Testdata;
using ::testing::UnorderedElementsAre;

std::vector<WatchEvent> Events(const std::string& text) {
  WatchStreamParser parser;
  std::vector<WatchEvent> events;
  EXPECT_OK(parser.Feed(text, &events));
  return events;
}

// A watch call that delivers `events` (stopping where the callback says) and then ends `status`.
auto DeliverThen(std::vector<WatchEvent> events, absl::Status status) {
  return
      [events = std::move(events), status](const Resource&, std::string_view, const WatchOptions&,
                                           const WatchCallback& on_event, const Cancellation*) {
        for (const WatchEvent& e : events) {
          if (!on_event(e)) break;
        }
        return status;
      };
}

auto Pages(std::vector<std::string> pages) {
  return [pages = std::move(pages)](const Resource&, std::string_view, const ListOptions&,
                                    const std::function<absl::Status(std::string_view)>& on_page) {
    for (const std::string& page : pages) RETURN_IF_ERROR(on_page(page));
    return absl::OkStatus();
  };
}

std::vector<std::string> Keys(const std::vector<std::shared_ptr<const Pod>>& pods) {
  std::vector<std::string> keys;
  for (const auto& p : pods) keys.push_back(p->meta.Key());
  return keys;
}

class InformerTest : public ::testing::Test {
 protected:
  InformerTest() {
    informer_.AddIndexer(kIndexByNamespace, NamespaceIndex<Pod>);
    informer_.AddIndexer("job", LabelIndex<Pod>("phalanx.dev/job"));
    informer_.AddIndexer("node",
                         [](const Pod& p) { return std::vector<std::string>{p.node_name}; });
    informer_.AddEventHandlers({
        .on_add = [this](const Pod& p) { log_.push_back("add " + p.meta.Key()); },
        .on_update =
            [this](const Pod& old, const Pod& now) {
              log_.push_back("update " + now.meta.Key() + " " + old.meta.resource_version + "->" +
                             now.meta.resource_version);
            },
        .on_delete = [this](const Pod& p) { log_.push_back("delete " + p.meta.Key()); },
    });
  }

  // A watch call that records where it started and stops the informer.
  auto StopWatching() {
    return [this](const Resource&, std::string_view, const WatchOptions& o, const WatchCallback&,
                  const Cancellation*) {
      watched_from_.push_back(o.resource_version);
      stop_.Cancel();
      return absl::OkStatus();
    };
  }

  MockClient client_;
  FakeClock clock_;
  Cancellation stop_;
  Informer<Pod> informer_{
      client_, Pods(),
      InformerOptions{.reflector = {.min_watch_timeout = absl::Minutes(5), .seed = 7}}, clock_};
  std::vector<std::string> log_;
  std::vector<std::string> watched_from_;
};

TEST_F(InformerTest, ListWatchThenRelistAfterExpiredErrorEvent) {
  std::string after_relist =
      R"({"metadata":{"resourceVersion":"190200"},"items":[)"
      R"({"metadata":{"name":"p-0","namespace":"ml-team","uid":"u-0","resourceVersion":"190011","labels":{"phalanx.dev/job":"a"}},"spec":{"nodeName":"n-7"}},)"
      R"({"metadata":{"name":"p-3","namespace":"ml-team","uid":"u-3","resourceVersion":"190150"},"spec":{"nodeName":"n-9"}}]})";
  EXPECT_CALL(client_, DoListPages(_, "", _, _))
      .WillOnce(Invoke(Pages({Testdata("pod_list_page1.json"), Testdata("pod_list_page2.json")})))
      .WillOnce(Invoke(Pages({after_relist})));
  EXPECT_CALL(client_, DoWatch(_, "", _, _, _))
      .WillOnce(Invoke([&](const Resource& r, std::string_view ns, const WatchOptions& o,
                           const WatchCallback& cb, const Cancellation* c) {
        watched_from_.push_back(o.resource_version);
        EXPECT_TRUE(o.allow_bookmarks);
        EXPECT_GE(o.timeout_seconds, 300);
        EXPECT_LT(o.timeout_seconds, 600);
        // The cache is synced before the first watch.
        EXPECT_TRUE(informer_.HasSynced());
        return DeliverThen(Events(Testdata("watch_stream.jsonl")), absl::OkStatus())(r, ns, o, cb,
                                                                                     c);
      }))
      .WillOnce(Invoke(StopWatching()));

  informer_.Run(&stop_);

  // The ERROR 410 made the reflector relist, and the new watch starts at the new list.
  EXPECT_THAT(watched_from_, ElementsAre("190001", "190200"));
  EXPECT_EQ(informer_.reflector().lists(), 2);
  EXPECT_THAT(log_,
              ElementsAre(
                  // first list
                  "add ml-team/p-0", "add ml-team/p-1", "add other/p-2",
                  // watch
                  "add ml-team/p-3", "update ml-team/p-0 189990->190011", "delete ml-team/p-1",
                  // relist: p-0 unchanged, p-3 changed, p-2 gone
                  "update ml-team/p-3 190010->190150", "delete other/p-2"));
  EXPECT_EQ(informer_.size(), 2u);
  EXPECT_EQ(informer_.Get("ml-team/p-3")->node_name, "n-9");
  EXPECT_EQ(informer_.Get("ml-team/p-1"), nullptr);
  EXPECT_THAT(Keys(informer_.ByIndex(kIndexByNamespace, "ml-team")),
              UnorderedElementsAre("ml-team/p-0", "ml-team/p-3"));
  EXPECT_TRUE(informer_.ByIndex(kIndexByNamespace, "other").empty());
  EXPECT_THAT(Keys(informer_.ByIndex("job", "a")), ElementsAre("ml-team/p-0"));
  EXPECT_THAT(Keys(informer_.ByIndex("node", "n-7")), ElementsAre("ml-team/p-0"));
  EXPECT_TRUE(informer_.ByIndex("node", "n-1").empty());
}

// Whoever sees the cache synced sees the list's resourceVersion with it: a handler of the
// list's objects, and so any thread that WaitForSync released.
TEST_F(InformerTest, TheListsResourceVersionIsKnownOnceTheCacheHasSynced) {
  std::vector<std::string> seen;
  informer_.AddEventHandlers({.on_add = [&](const Pod&) {
    EXPECT_TRUE(informer_.HasSynced());
    seen.push_back(informer_.reflector().last_resource_version());
  }});
  EXPECT_CALL(client_, DoListPages(_, "", _, _))
      .WillOnce(Invoke(Pages({Testdata("pod_list_page1.json"), Testdata("pod_list_page2.json")})));
  EXPECT_CALL(client_, DoWatch(_, "", _, _, _)).WillOnce(Invoke(StopWatching()));

  informer_.Run(&stop_);

  EXPECT_THAT(seen, ElementsAre("190001", "190001", "190001"));
  EXPECT_THAT(watched_from_, ElementsAre("190001"));
}

TEST_F(InformerTest, BrokenWatchResumesFromLastBookmarkWithoutRelisting) {
  std::vector<WatchEvent> events = Events(Testdata("watch_stream.jsonl"));
  // ADDED p-3 (190010), MODIFIED p-0 (190011), BOOKMARK (190050), then the connection drops.
  events.resize(3);
  EXPECT_CALL(client_, DoListPages(_, _, _, _))
      .WillOnce(Invoke(Pages({Testdata("pod_list_page1.json")})));
  EXPECT_CALL(client_, DoWatch(_, _, _, _, _))
      .WillOnce(Invoke([&](const Resource& r, std::string_view ns, const WatchOptions& o,
                           const WatchCallback& cb, const Cancellation* c) {
        watched_from_.push_back(o.resource_version);
        return DeliverThen(events, absl::UnavailableError("connection reset by peer"))(r, ns, o, cb,
                                                                                       c);
      }))
      .WillOnce(Invoke(StopWatching()));
  int sleeps_before = clock_.sleeps();
  informer_.Run(&stop_);
  EXPECT_THAT(watched_from_, ElementsAre("190001", "190050"));
  EXPECT_EQ(informer_.reflector().lists(), 1);
  EXPECT_EQ(clock_.sleeps() - sleeps_before, 1);  // one backoff step before resuming
  // Nothing was replayed: p-3 was added exactly once.
  EXPECT_THAT(log_, ElementsAre("add ml-team/p-0", "add ml-team/p-1", "add ml-team/p-3",
                                "update ml-team/p-0 189990->190011"));
}

TEST_F(InformerTest, EachBreakAfterHealthyEventsResumesAfterTheFirstBackoffStep) {
  std::vector<WatchEvent> events = Events(Testdata("watch_stream.jsonl"));
  events.resize(3);  // ADDED, MODIFIED, BOOKMARK, then the connection drops
  EXPECT_CALL(client_, DoListPages(_, _, _, _))
      .WillOnce(Invoke(Pages({Testdata("pod_list_page1.json")})));
  // Eight watches in a row deliver events and break; the ninth stops the informer.
  int watches = 0;
  EXPECT_CALL(client_, DoWatch(_, _, _, _, _))
      .Times(9)
      .WillRepeatedly(Invoke([&](const Resource& r, std::string_view ns, const WatchOptions& o,
                                 const WatchCallback& cb, const Cancellation* c) {
        if (++watches == 9) return StopWatching()(r, ns, o, cb, c);
        return DeliverThen(events, absl::UnavailableError("connection reset by peer"))(r, ns, o,
                                                                                       cb, c);
      }));
  absl::Time start = clock_.Now();
  informer_.Run(&stop_);
  EXPECT_EQ(clock_.sleeps(), 8);
  // Each wait is the first step (800 ms, at most doubled by jitter); a growing backoff would
  // have waited 0.8 + 1.6 + ... + 30 s, over two minutes.
  EXPECT_LE(clock_.Now() - start, 8 * absl::Milliseconds(1600));
  EXPECT_EQ(informer_.reflector().lists(), 1);
}

TEST_F(InformerTest, GoneAtWatchStartRelists) {
  EXPECT_CALL(client_, DoListPages(_, _, _, _))
      .Times(2)
      .WillRepeatedly(Invoke(Pages({Testdata("pod_list_page2.json")})));
  int watches = 0;
  EXPECT_CALL(client_, DoWatch(_, _, _, _, _))
      .Times(2)
      .WillRepeatedly(Invoke([&](const Resource&, std::string_view, const WatchOptions&,
                                 const WatchCallback&, const Cancellation*) {
        if (++watches == 2) stop_.Cancel();
        return StatusFromResponse({.status = 410, .body = Testdata("status_410.json")});
      }));
  informer_.Run(&stop_);
  EXPECT_EQ(informer_.reflector().lists(), 2);
  // The relist found the same object at the same version: no spurious handler calls.
  EXPECT_THAT(log_, ElementsAre("add other/p-2"));
}

TEST_F(InformerTest, ListFailureBacksOffHonouringRetryAfter) {
  absl::Time start = clock_.Now();
  EXPECT_CALL(client_, DoListPages(_, _, _, _))
      .WillOnce(Invoke([](const Resource&, std::string_view, const ListOptions&,
                          const std::function<absl::Status(std::string_view)>& on_page) {
        // Fails part-way: the first page must not reach the cache.
        RETURN_IF_ERROR(on_page(Testdata("pod_list_page1.json")));
        return StatusFromResponse({.status = 429,
                                   .headers = {{"Retry-After", "40"}},
                                   .body = Testdata("status_429.json")});
      }))
      .WillOnce(Invoke(Pages({Testdata("pod_list_page2.json")})));
  EXPECT_CALL(client_, DoWatch(_, _, _, _, _)).WillOnce(Invoke(StopWatching()));
  informer_.Run(&stop_);
  EXPECT_GE(clock_.Now() - start, absl::Seconds(40));
  EXPECT_THAT(log_, ElementsAre("add other/p-2"));
}

// What a daemon logs when it gives up waiting for its informers: the resource, and the error of
// its last list until a list succeeds.
TEST_F(InformerTest, SyncProblemNamesTheResourceAndItsLastListError) {
  EXPECT_EQ(informer_.SyncProblem(), "pods (not listed yet)");
  std::string while_failing;
  EXPECT_CALL(client_, DoListPages(_, _, _, _))
      .WillOnce(Invoke([](const Resource&, std::string_view, const ListOptions&,
                          const std::function<absl::Status(std::string_view)>&) {
        return StatusFromResponse({.status = 403, .headers = {}, .body = ""});
      }))
      .WillOnce(Invoke([&](const Resource& r, std::string_view ns, const ListOptions& o,
                           const std::function<absl::Status(std::string_view)>& on_page) {
        while_failing = informer_.SyncProblem();
        return Pages({Testdata("pod_list_page2.json")})(r, ns, o, on_page);
      }));
  EXPECT_CALL(client_, DoWatch(_, _, _, _, _)).WillOnce(Invoke(StopWatching()));
  informer_.Run(&stop_);
  EXPECT_THAT(while_failing, ::testing::StartsWith("pods (list failed: PERMISSION_DENIED"));
  EXPECT_EQ(informer_.SyncProblem(), "");
  const std::string joined = JoinSyncProblems({"", while_failing, "nodes (not listed yet)"});
  EXPECT_EQ(joined, while_failing + "; nodes (not listed yet)");
  EXPECT_THAT(SyncHint(joined), ::testing::HasSubstr("ClusterRole lacks list and watch"));
  EXPECT_THAT(SyncHint("trainingjobs (list failed: NOT_FOUND: the server could not find it)"),
              ::testing::HasSubstr("CRDs installed"));
}

TEST_F(InformerTest, ResyncReplaysCachedObjectsAsUpdates) {
  EXPECT_CALL(client_, DoListPages(_, _, _, _))
      .WillOnce(Invoke(Pages({Testdata("pod_list_page2.json")})));
  EXPECT_CALL(client_, DoWatch(_, _, _, _, _)).WillOnce(Invoke(StopWatching()));
  informer_.Run(&stop_);
  informer_.Resync();
  EXPECT_THAT(log_, ElementsAre("add other/p-2", "update other/p-2 189995->189995"));
}

TEST(BackoffTest, GrowsToTheCapWithBoundedJitter) {
  Backoff backoff(
      {.initial = absl::Seconds(1), .max = absl::Seconds(8), .factor = 2, .jitter = 0.5}, 42);
  std::vector<double> bases = {1, 2, 4, 8, 8};
  for (double base : bases) {
    absl::Duration d = backoff.Next();
    EXPECT_GE(d, absl::Seconds(base));
    EXPECT_LT(d, absl::Seconds(base * 1.5));
  }
  backoff.Reset();
  EXPECT_LT(backoff.Next(), absl::Seconds(1.5));
}

TEST(RetryOnConflictTest, RetriesOnlyConflicts) {
  FakeClock clock;
  int calls = 0;
  absl::Status conflict =
      StatusFromResponse({.status = 409, .body = Testdata("status_409_conflict.json")});
  EXPECT_OK(RetryOnConflict([&] { return ++calls < 3 ? conflict : absl::OkStatus(); }, clock));
  EXPECT_EQ(calls, 3);

  calls = 0;
  EXPECT_TRUE(IsConflict(RetryOnConflict(
      [&] {
        ++calls;
        return conflict;
      },
      clock, {.attempts = 4})));
  EXPECT_EQ(calls, 4);

  calls = 0;
  absl::Status not_found = StatusFromResponse({.status = 404, .body = Testdata("status_404.json")});
  EXPECT_TRUE(IsNotFound(RetryOnConflict(
      [&] {
        ++calls;
        return not_found;
      },
      clock)));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace kube
