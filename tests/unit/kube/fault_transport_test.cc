// FaultTransport over a mocked inner transport: each fault does what its name says, the watch
// parser above never sees the half event a cut leaves behind, and an unset PHALANX_FAULTS leaves
// the real transport unwrapped.
#include "kube/fault_transport.h"

#include <cstdlib>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/errors.h"
#include "kube/rest_client.h"
#include "tests/mocks/kube/mock_transport.h"
#include "tests/unit/kube/testdata.h"

namespace kube {
namespace {

using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Return;
using testing::Testdata;

TEST(ParseFaultOptionsTest, ReadsEveryKeyAndRejectsWhatItDoesNotKnow) {
  ASSERT_OK_AND_ASSIGN(
      FaultOptions o,
      ParseFaultOptions("watch_cut_after=200, latency_ms=50,watch_cuts=3,reset_every=7,"
                        "error_every=11"));
  EXPECT_EQ(o.watch_cut_after, 200);
  EXPECT_EQ(o.latency, absl::Milliseconds(50));
  EXPECT_EQ(o.watch_cuts, 3);
  EXPECT_EQ(o.reset_every, 7);
  EXPECT_EQ(o.error_every, 11);
  EXPECT_TRUE(o.any());
  ASSERT_OK_AND_ASSIGN(FaultOptions none, ParseFaultOptions(""));
  EXPECT_FALSE(none.any());
  EXPECT_THAT(ParseFaultOptions("watch_cut=3"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown fault \"watch_cut\"")));
  EXPECT_THAT(ParseFaultOptions("latency_ms"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseFaultOptions("latency_ms=-1"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseFaultOptions("latency_ms=5s"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(WrapWithFaultsFromEnvTest, UnsetOrEmptyLeavesTheTransportAsItIs) {
  for (const char* value : {static_cast<const char*>(nullptr), "", "latency_ms=0"}) {
    if (value == nullptr) {
      unsetenv(kFaultsEnv);
    } else {
      setenv(kFaultsEnv, value, 1);
    }
    auto inner = std::make_unique<MockTransport>();
    Transport* raw = inner.get();
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Transport> t, WrapWithFaultsFromEnv(std::move(inner)));
    EXPECT_EQ(t.get(), raw) << (value ? value : "unset");
  }
  setenv(kFaultsEnv, "reset_every=2", 1);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Transport> t,
                       WrapWithFaultsFromEnv(std::make_unique<MockTransport>()));
  EXPECT_NE(dynamic_cast<FaultTransport*>(t.get()), nullptr);
  setenv(kFaultsEnv, "bogus=1", 1);
  EXPECT_THAT(WrapWithFaultsFromEnv(std::make_unique<MockTransport>()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("PHALANX_FAULTS")));
  unsetenv(kFaultsEnv);
}

// The recorded stream (ADDED, MODIFIED, BOOKMARK, DELETED, ERROR) in 7-byte chunks, as the
// server would flush it.
absl::StatusOr<HttpResponse> PlayStream(const ChunkCallback& on_chunk) {
  static const std::string stream = Testdata("watch_stream.jsonl");
  for (size_t i = 0; i < stream.size(); i += 7) {
    if (!on_chunk(std::string_view(stream).substr(i, 7))) break;
  }
  return HttpResponse{.status = 200};
}

TEST(FaultTransportTest, WatchIsCutMidEventAfterTheLimitAndTheParserDropsTheHalfEvent) {
  auto inner = std::make_unique<MockTransport>();
  EXPECT_CALL(*inner, Stream(_, _, _))
      .Times(3)
      .WillRepeatedly(Invoke([](const HttpRequest&, const ChunkCallback& on_chunk,
                                const Cancellation*) { return PlayStream(on_chunk); }));
  FaultTransport faults(std::move(inner), {.watch_cut_after = 2, .watch_cuts = 2});
  RestClient client(faults);
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<WatchEvent::Type> types;
    absl::Status status = client.Watch(
        Pods(), "ml-team", {},
        [&](const WatchEvent& e) {
          types.push_back(e.type);
          return true;
        },
        nullptr);
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("mid-stream after 2")));
    EXPECT_THAT(types, ElementsAre(WatchEvent::Type::kAdded, WatchEvent::Type::kModified));
  }
  // The third watch is past the limit of two cuts: it streams to the end.
  std::vector<WatchEvent::Type> types;
  EXPECT_OK(client.Watch(
      Pods(), "ml-team", {},
      [&](const WatchEvent& e) {
        types.push_back(e.type);
        return true;
      },
      nullptr));
  EXPECT_EQ(types.size(), 5u);
  EXPECT_EQ(faults.watch_cuts(), 2);
}

TEST(FaultTransportTest, CutDeliversPartOfTheNextEventBeforeDroppingTheConnection) {
  auto inner = std::make_unique<MockTransport>();
  EXPECT_CALL(*inner, Stream(_, _, _))
      .WillOnce(Invoke([](const HttpRequest&, const ChunkCallback& on_chunk, const Cancellation*)
                           -> absl::StatusOr<HttpResponse> {
        // The reader stops: the transport closes the connection.
        EXPECT_FALSE(on_chunk("{\"a\":1}\n{\"b\":22222222}\n"));
        return HttpResponse{.status = 200};
      }));
  FaultTransport faults(std::move(inner), {.watch_cut_after = 1});
  std::string seen;
  absl::StatusOr<HttpResponse> r = faults.Stream(
      {}, [&](std::string_view chunk) { return seen.append(chunk), true; }, nullptr);
  EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(seen, "{\"a\":1}\n{\"b\":22");  // one event and half of the next
}

TEST(FaultTransportTest, ResetsAndErrorsReplaceEveryNthRequestWithoutSendingIt) {
  auto inner = std::make_unique<MockTransport>();
  // Requests 1, 5 reach the server; 2 and 4 are reset, 3 and 6 answered 503 by the wrapper.
  EXPECT_CALL(*inner, Send(_)).Times(2).WillRepeatedly(Return(HttpResponse{.status = 200}));
  FaultTransport faults(std::move(inner), {.reset_every = 2, .error_every = 3});
  std::vector<int> outcomes;
  for (int i = 0; i < 6; ++i) {
    absl::StatusOr<HttpResponse> r = faults.Send({.path = "/api/v1/pods"});
    outcomes.push_back(r.ok() ? r->status : -1);
    if (!r.ok()) {
      EXPECT_THAT(r.status(),
                  StatusIs(absl::StatusCode::kUnavailable, HasSubstr("connection reset")));
    }
  }
  EXPECT_THAT(outcomes, ElementsAre(200, -1, 503, -1, 200, -1));  // 6 is a multiple of 2 first
  EXPECT_EQ(faults.resets(), 3);
  EXPECT_EQ(faults.errors(), 1);

  // The 503 body is a Status the client maps like the API server's own.
  auto inner2 = std::make_unique<MockTransport>();
  FaultTransport always(std::move(inner2), {.error_every = 1});
  RestClient client(always);
  absl::Status status = client.Get(Pods(), "ml", "p").status();
  EXPECT_TRUE(IsRetryable(status)) << status;
  ASSERT_TRUE(KubeErrorOf(status).has_value());
  EXPECT_EQ(KubeErrorOf(status)->http_code, 503);
}

}  // namespace
}  // namespace kube
