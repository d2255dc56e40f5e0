// Leader election with a fake clock and mocked transports. The transports answer from one shared
// in-memory Lease (GET / POST / PUT with resourceVersion compare-and-swap, the three calls the
// elector makes), so two electors really compete for it.
#include "kube/leader_election.h"

#include <mutex>

#include "absl/strings/numbers.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/errors.h"
#include "kube/json.h"
#include "kube/rest_client.h"
#include "tests/mocks/kube/mock_clock.h"
#include "tests/mocks/kube/mock_transport.h"

namespace kube {
namespace {

using ::testing::_;
using ::testing::Invoke;

constexpr char kLeasePath[] = "/apis/coordination.k8s.io/v1/namespaces/phalanx-system/leases/op";
constexpr char kCollection[] = "/apis/coordination.k8s.io/v1/namespaces/phalanx-system/leases";

class LeaseStore {
 public:
  absl::StatusOr<HttpResponse> Handle(const HttpRequest& request) {
    std::lock_guard<std::mutex> lock(mu_);
    ++requests_;
    if (request.method == "GET" && request.path == kLeasePath) {
      if (json_.empty()) return Error(404, "NotFound");
      return HttpResponse{.status = 200, .body = json_};
    }
    if (request.method == "POST" && request.path == kCollection) {
      if (!json_.empty()) return Error(409, "AlreadyExists");
      return Store(request.body, 201);
    }
    if (request.method == "PUT" && request.path == kLeasePath) {
      absl::StatusOr<rapidjson::Document> doc = ParseJson(request.body);
      if (!doc.ok() || json_.empty()) return Error(404, "NotFound");
      if (StringMember((*doc)["metadata"], "resourceVersion") != std::to_string(version_)) {
        return Error(409, "Conflict");
      }
      return Store(request.body, 200);
    }
    return Error(400, "BadRequest");
  }

  std::string Holder() {
    std::lock_guard<std::mutex> lock(mu_);
    if (json_.empty()) return "<none>";
    rapidjson::Document doc = *ParseJson(json_);
    return std::string(StringMember(doc["spec"], "holderIdentity"));
  }
  int64_t Transitions() {
    std::lock_guard<std::mutex> lock(mu_);
    rapidjson::Document doc = *ParseJson(json_);
    return doc["spec"]["leaseTransitions"].GetInt64();
  }

 private:
  static HttpResponse Error(int code, const std::string& reason) {
    return HttpResponse{.status = code,
                        .body = R"({"kind":"Status","status":"Failure","reason":")" + reason +
                                R"(","code":)" + std::to_string(code) + "}"};
  }
  HttpResponse Store(const std::string& body, int status) {
    rapidjson::Document doc = *ParseJson(body);
    ++version_;
    SetMember(ObjectMember(doc, "metadata", doc.GetAllocator()), "resourceVersion",
              JsonString(std::to_string(version_), doc.GetAllocator()), doc.GetAllocator());
    json_ = ToJson(doc);
    return HttpResponse{.status = status, .body = json_};
  }

  std::mutex mu_;
  std::string json_;
  int64_t version_ = 100;
  int requests_ = 0;
};

// One candidate: its own transport (which can be cut off) in front of the shared store.
struct Candidate {
  Candidate(LeaseStore& store, Clock& clock, std::string id, LeaderCallbacks callbacks = {},
            LeaseFence* fence = nullptr)
      : client(transport),
        elector(client,
                {.lease_namespace = "phalanx-system",
                 .lease_name = "op",
                 .identity = std::move(id),
                 .fence = fence},
                std::move(callbacks), clock) {
    ON_CALL(transport, Send(_))
        .WillByDefault(Invoke([this, &store](const HttpRequest& r) -> absl::StatusOr<HttpResponse> {
          if (partitioned) return absl::UnavailableError("connection refused");
          return store.Handle(r);
        }));
    EXPECT_CALL(transport, Send(_)).Times(::testing::AnyNumber());
  }
  ::testing::NiceMock<MockTransport> transport;
  RestClient client;
  LeaderElector elector;
  std::atomic<bool> partitioned{false};
};

TEST(LeaderElectionTest, FirstCandidateAcquiresAndOthersWait) {
  LeaseStore store;
  FakeClock clock;
  std::vector<std::string> seen_by_b;
  Candidate a(store, clock, "a");
  Candidate b(store, clock, "b",
              {.on_new_leader = [&](const std::string& id) { seen_by_b.push_back(id); }});
  EXPECT_TRUE(a.elector.TryAcquireOrRenew());
  EXPECT_TRUE(a.elector.IsLeader());
  EXPECT_FALSE(b.elector.TryAcquireOrRenew());
  EXPECT_FALSE(b.elector.IsLeader());
  EXPECT_EQ(b.elector.leader(), "a");
  // a keeps renewing every retry period: b never gets it, however long it tries.
  for (int i = 0; i < 20; ++i) {
    clock.Advance(absl::Seconds(2));
    EXPECT_TRUE(a.elector.TryAcquireOrRenew());
    EXPECT_FALSE(b.elector.TryAcquireOrRenew());
  }
  EXPECT_EQ(store.Holder(), "a");
  EXPECT_THAT(seen_by_b, ::testing::ElementsAre("a"));
}

// a holds the lease; b has tried once and so observed a's record.
class TwoCandidatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(a.elector.TryAcquireOrRenew());
    ASSERT_FALSE(b.elector.TryAcquireOrRenew());
  }
  LeaseStore store;
  FakeClock clock;
  Candidate a{store, clock, "a"};
  Candidate b{store, clock, "b"};
};

TEST_F(TwoCandidatesTest, TakesOverOnlyAfterLeaseDurationWithoutRenewal) {
  a.partitioned = true;  // a stops renewing (b observed a's record in SetUp)
  clock.Advance(absl::Seconds(14));
  EXPECT_FALSE(b.elector.TryAcquireOrRenew());
  clock.Advance(absl::Seconds(1));  // 15 s since b saw the record change
  EXPECT_TRUE(b.elector.TryAcquireOrRenew());
  EXPECT_EQ(store.Holder(), "b");
  EXPECT_EQ(store.Transitions(), 1);
  // a comes back: it must not think it still leads.
  a.partitioned = false;
  EXPECT_FALSE(a.elector.TryAcquireOrRenew());
  EXPECT_EQ(a.elector.leader(), "b");
}

TEST_F(TwoCandidatesTest, ReleaseLetsTheNextCandidateInAtOnce) {
  ASSERT_OK(a.elector.Release());
  EXPECT_EQ(store.Holder(), "");
  EXPECT_TRUE(b.elector.TryAcquireOrRenew());
  // Releasing a lease someone else holds does nothing.
  ASSERT_OK(a.elector.Release());
  EXPECT_EQ(store.Holder(), "b");
}

TEST(LeaderElectionTest, RunStepsDownWhenRenewalsFailPastTheDeadline) {
  LeaseStore store;
  FakeClock clock;
  Candidate* self = nullptr;
  bool lost_signalled = false;
  bool stopped = false;
  Candidate a(store, clock, "a",
              {.on_started_leading =
                   [&](const Cancellation& lost) {
                     self->partitioned = true;  // the API server becomes unreachable
                     lost.WaitFor(absl::InfiniteDuration());
                     lost_signalled = true;
                   },
               .on_stopped_leading = [&] { stopped = true; }});
  self = &a;
  absl::Time start = clock.Now();
  a.elector.Run(nullptr);  // returns by itself once leadership is lost
  EXPECT_TRUE(lost_signalled);
  EXPECT_TRUE(stopped);
  EXPECT_GE(clock.Now() - start, absl::Seconds(10));  // renew deadline
  EXPECT_EQ(store.Holder(), "a");                     // no release when the lease was lost
}

// The fence (kube/fenced_client.h) opens with the lease and closes before the work still queued
// learns the lease is lost; its end (renew_deadline past a renewal's start) is checked against
// the clock in fenced_client_test.cc and by e2e elastic_test step 4b.
TEST(LeaderElectionTest, TheFenceIsOpenWhileLeadingAndClosedOnceTheLeaseIsLost) {
  LeaseStore store;
  FakeClock clock;
  LeaseFence fence;
  Candidate* self = nullptr;
  absl::Status while_leading = absl::UnknownError("not run");
  absl::Status after_loss = absl::UnknownError("not run");
  Candidate a(store, clock, "a",
              {.on_started_leading =
                   [&](const Cancellation& lost) {
                     // Read before the partition: while renewals succeed the fence stays
                     // ahead of the clock. (How far ahead depends on how many renewals the
                     // elector's thread made meanwhile, so it is not asserted here.)
                     while_leading = fence.Check(clock.Now(), "op");
                     self->partitioned = true;
                     lost.WaitFor(absl::InfiniteDuration());
                     after_loss = fence.Check(clock.Now(), "op");
                   }},
              &fence);
  self = &a;
  EXPECT_TRUE(absl::IsUnavailable(fence.Check(clock.Now(), "op")));  // not acquired yet
  a.elector.Run(nullptr);
  EXPECT_OK(while_leading);
  EXPECT_TRUE(absl::IsUnavailable(after_loss)) << after_loss;
}

TEST(LeaderElectionTest, RunReleasesOnCancel) {
  LeaseStore store;
  FakeClock clock;
  Cancellation stop;
  Candidate a(store, clock, "a", {.on_started_leading = [&](const Cancellation& lost) {
                stop.Cancel();
                lost.WaitFor(absl::InfiniteDuration());
              }});
  a.elector.Run(&stop);
  EXPECT_EQ(store.Holder(), "");
  EXPECT_FALSE(a.elector.IsLeader());
}

TEST(LeaderElectionTest, MicroTimeFormat) {
  absl::Time t = absl::FromUnixMicros(int64_t{1795162443123456});
  EXPECT_EQ(FormatMicroTime(t), "2026-11-20T08:14:03.123456Z");
}

}  // namespace
}  // namespace kube
