// The extender's decisions, verb by verb, on a small cluster holding one gang reservation: a
// gang pod passes only on its reserved node, every failure says why in words a user reads in
// `kubectl describe pod`, other pods pass through, and bad input is a 400, never a crash.
#include "scheduler/extender/extender.h"

#include <atomic>
#include <thread>
#include <vector>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/in_process_placement_service.h"
#include "tests/mocks/scheduler/mock_binder.h"
#include "tests/unit/scheduler/extender/extender_bodies.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::extender {
namespace {

using ::testing::_;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::Return;
using ::testing::StartsWith;
using ::testing::StrictMock;
using ::testing::UnorderedElementsAre;
using namespace ::phalanx::extender::testing;    // NOLINT
using namespace ::phalanx::placement::testing;  // NOLINT

// Eight nodes in two layer-3 blocks; TrainingJob ml/llama holds 4 ranks in one block.
class ExtenderTest : public ::testing::Test {
 protected:
  ExtenderTest() : service_(MakeSnapshot()), extender_(service_, binder_) {
    absl::StatusOr<placement::PlacementResult> reserved =
        service_.Reserve(Gang("ml/llama", 4, 8, kLayer3));
    EXPECT_TRUE(reserved.ok() && reserved->placed);
    if (reserved.ok()) reserved_ = reserved->placement.nodes;
  }

  static placement::ClusterSnapshot MakeSnapshot() {
    placement::ClusterSnapshot snapshot(Eks());
    AddNodes(snapshot, {"a", "b", "nn-1"}, "n", 4);
    AddNodes(snapshot, {"a", "b", "nn-2"}, "m", 4);
    return snapshot;
  }

  std::vector<std::string> AllNodes() const {
    return {"n0", "n1", "n2", "n3", "m0", "m1", "m2", "m3"};
  }

  Reply Filter(const PodSpec& pod, const std::vector<std::string>& names) {
    return extender_.HandleFilter(ArgsBody(pod, names));
  }

  StrictMock<MockBinder> binder_;
  placement::InProcessPlacementService service_;
  Extender extender_;
  std::vector<std::string> reserved_;  // rank -> node
};

// Every node of `names` except `except`, each with `reason`.
std::map<std::string, std::string> AllFail(const std::vector<std::string>& names,
                                           const std::string& reason,
                                           const std::string& except = "") {
  std::map<std::string, std::string> out;
  for (const std::string& name : names) {
    if (name != except) out[name] = reason;
  }
  return out;
}

TEST_F(ExtenderTest, FilterPassesAPodWithoutGangLabelsThroughUntouched) {
  Reply reply = Filter(PlainPod("default", "notebook"), AllNodes());
  EXPECT_EQ(reply.response.status, 200);
  EXPECT_EQ(reply.response.content_type, "application/json");
  EXPECT_EQ(reply.outcome, Outcome::kPassThrough);
  ParsedFilterResult result = ParseFilterResult(reply.response.body);
  ASSERT_TRUE(result.node_names.has_value());
  EXPECT_EQ(*result.node_names, AllNodes());
  EXPECT_THAT(result.failed, IsEmpty());
  EXPECT_THAT(result.failed_and_unresolvable, IsEmpty());
  EXPECT_EQ(result.error, "");
}

TEST_F(ExtenderTest, FilterAnswersANodeListRequestWithANodeList) {
  Reply reply = extender_.HandleFilter(ArgsBody(PlainPod("default", "nb"), AllNodes(), true));
  ParsedFilterResult result = ParseFilterResult(reply.response.body);
  ASSERT_TRUE(result.nodes.has_value());
  EXPECT_EQ(*result.nodes, AllNodes());
  EXPECT_FALSE(result.node_names.has_value());

  reply =
      extender_.HandleFilter(ArgsBody(GangPod("ml", "llama-1", "llama", "1"), AllNodes(), true));
  result = ParseFilterResult(reply.response.body);
  ASSERT_TRUE(result.nodes.has_value());
  EXPECT_THAT(*result.nodes, ElementsAre(reserved_[1]));
  EXPECT_THAT(result.failed_and_unresolvable, IsEmpty());
}

// The other candidates simply drop out: kube-scheduler schedules the pod on the one node left,
// so reasons for them would never be shown, and it would spend ~1 ms per 1,000 decoding them.
TEST_F(ExtenderTest, FilterPinsAGangPodToTheNodeReservedForItsRank) {
  for (int rank = 0; rank < 4; ++rank) {
    std::string name = "llama-" + std::to_string(rank);
    Reply reply = Filter(GangPod("ml", name, "llama", std::to_string(rank)), AllNodes());
    EXPECT_EQ(reply.response.status, 200);
    EXPECT_EQ(reply.outcome, Outcome::kPinned);
    EXPECT_EQ(reply.response.body, R"({"Nodes":null,"NodeNames":[")" + reserved_[rank] +
                                       R"("],"FailedNodes":{},"FailedAndUnresolvableNodes":{},)"
                                       R"("Error":""})");
  }
}

TEST_F(ExtenderTest, FilterCanListTheUnreservedNodesOfAPinnedPodAsUnresolvable) {
  Extender listing(service_, binder_, {.fail_unreserved_nodes = true});
  Reply reply = listing.HandleFilter(ArgsBody(GangPod("ml", "llama-2", "llama", "2"), AllNodes()));
  EXPECT_EQ(reply.outcome, Outcome::kPinned);
  ParsedFilterResult result = ParseFilterResult(reply.response.body);
  ASSERT_TRUE(result.node_names.has_value());
  EXPECT_THAT(*result.node_names, ElementsAre(reserved_[2]));
  EXPECT_EQ(result.failed_and_unresolvable,
            AllFail(AllNodes(), "phalanx: rank 2 of ml/llama is reserved on node " + reserved_[2],
                    reserved_[2]));
  EXPECT_THAT(result.failed, IsEmpty());  // preemption elsewhere cannot help a pinned pod
  EXPECT_EQ(result.error, "");
}

TEST_F(ExtenderTest, FilterFailsEveryNodeForAJobWithoutReservation) {
  Reply reply = Filter(GangPod("ml", "gpt-0", "gpt", "0"), AllNodes());
  EXPECT_EQ(reply.response.status, 200);
  EXPECT_EQ(reply.outcome, Outcome::kNoReservation);
  ParsedFilterResult result = ParseFilterResult(reply.response.body);
  ASSERT_TRUE(result.node_names.has_value());
  EXPECT_THAT(*result.node_names, IsEmpty());
  EXPECT_EQ(result.failed_and_unresolvable,
            AllFail(AllNodes(), "phalanx: TrainingJob ml/gpt holds no reservation (not admitted "
                                "yet, or released)"));
  EXPECT_EQ(result.error, "");  // an Error would hide the reason from kubectl describe
}

TEST_F(ExtenderTest, TheJobIsLookedUpInThePodsOwnNamespace) {
  Reply reply = Filter(GangPod("other", "llama-0", "llama", "0"), AllNodes());
  EXPECT_EQ(reply.outcome, Outcome::kNoReservation);
  EXPECT_THAT(ParseFilterResult(reply.response.body).failed_and_unresolvable,
              Each(Pair(_, HasSubstr("TrainingJob other/llama holds no reservation"))));
}

TEST_F(ExtenderTest, FilterFailsEveryNodeForAMissingOrMalformedRank) {
  PodSpec no_rank = GangPod("ml", "llama-x", "llama", "0");
  no_rank.labels.erase("phalanx.dev/rank");
  Reply reply = Filter(no_rank, AllNodes());
  EXPECT_EQ(reply.outcome, Outcome::kBadLabels);
  EXPECT_EQ(ParseFilterResult(reply.response.body).failed_and_unresolvable,
            AllFail(AllNodes(), "phalanx: pod ml/llama-x of TrainingJob ml/llama has no "
                                "phalanx.dev/rank label"));

  for (std::string rank : {"x", "-1", "+1", " 1", "1.0", "", "9999999999"}) {
    reply = Filter(GangPod("ml", "llama-x", "llama", rank), AllNodes());
    EXPECT_EQ(reply.outcome, Outcome::kBadLabels) << rank;
    EXPECT_EQ(ParseFilterResult(reply.response.body).failed_and_unresolvable,
              AllFail(AllNodes(), "phalanx: pod ml/llama-x has an invalid phalanx.dev/rank label "
                                  "\"" + rank + "\" (want a decimal rank)"))
        << rank;
  }

  reply = Filter(GangPod("ml", "x", "", "0"), AllNodes());
  EXPECT_EQ(reply.outcome, Outcome::kBadLabels);
  EXPECT_EQ(ParseFilterResult(reply.response.body).failed_and_unresolvable,
            AllFail(AllNodes(), "phalanx: pod ml/x has an empty phalanx.dev/job label"));
}

TEST_F(ExtenderTest, FilterFailsEveryNodeForARankOutsideTheReservation) {
  Reply reply = Filter(GangPod("ml", "llama-4", "llama", "4"), AllNodes());
  EXPECT_EQ(reply.outcome, Outcome::kRankOutOfRange);
  EXPECT_EQ(ParseFilterResult(reply.response.body).failed_and_unresolvable,
            AllFail(AllNodes(),
                    "phalanx: rank 4 of ml/llama is outside its reservation of 4 pods"));
}

TEST_F(ExtenderTest, FilterNamesTheReservedNodeWhenKubeSchedulerRejectedIt) {
  std::vector<std::string> candidates;
  for (const std::string& name : AllNodes()) {
    if (name != reserved_[2]) candidates.push_back(name);
  }
  Reply reply = Filter(GangPod("ml", "llama-2", "llama", "2"), candidates);
  EXPECT_EQ(reply.outcome, Outcome::kReservedNodeRejected);
  ParsedFilterResult result = ParseFilterResult(reply.response.body);
  EXPECT_THAT(*result.node_names, IsEmpty());
  // The reserved node itself is not mentioned: its own status (e.g. Insufficient nvidia.com/gpu)
  // stays, so preemption may still free it, and only it.
  EXPECT_EQ(result.failed_and_unresolvable,
            AllFail(candidates, "phalanx: rank 2 of ml/llama is reserved on node " +
                                    reserved_[2] +
                                    ", which did not pass kube-scheduler's filters"));
}

TEST_F(ExtenderTest, FilterFollowsTheLiveSnapshot) {
  ASSERT_OK(service_.Update(
      [&](placement::ClusterSnapshot& snapshot) { return snapshot.RemoveNode(reserved_[0]); }));
  Reply reply = Filter(GangPod("ml", "llama-0", "llama", "0"), AllNodes());
  EXPECT_EQ(reply.outcome, Outcome::kReservedNodeRejected);
  EXPECT_THAT(ParseFilterResult(reply.response.body).failed_and_unresolvable,
              Each(Pair(_, HasSubstr("which has left the cluster"))));

  ASSERT_OK(service_.Release("ml/llama"));
  reply = Filter(GangPod("ml", "llama-1", "llama", "1"), AllNodes());
  EXPECT_EQ(reply.outcome, Outcome::kNoReservation);
}

TEST_F(ExtenderTest, PrioritizeScoresOnlyTheReservedNode) {
  Reply reply = extender_.HandlePrioritize(ArgsBody(GangPod("ml", "llama-3", "llama", "3"),
                                                    AllNodes()));
  EXPECT_EQ(reply.response.status, 200);
  EXPECT_EQ(reply.outcome, Outcome::kPinned);
  EXPECT_THAT(ParsePriorities(reply.response.body), ElementsAre(Pair(reserved_[3], 10)));

  reply = extender_.HandlePrioritize(ArgsBody(PlainPod("default", "nb"), AllNodes()));
  EXPECT_EQ(reply.outcome, Outcome::kPassThrough);
  EXPECT_EQ(reply.response.body, "[]");

  reply = extender_.HandlePrioritize(ArgsBody(GangPod("ml", "gpt-0", "gpt", "0"), AllNodes()));
  EXPECT_EQ(reply.outcome, Outcome::kNoReservation);
  EXPECT_EQ(reply.response.body, "[]");

  reply = extender_.HandlePrioritize(ArgsBody(GangPod("ml", "llama-3", "llama", "3"), {"x"}));
  EXPECT_EQ(reply.outcome, Outcome::kReservedNodeRejected);
  EXPECT_EQ(reply.response.body, "[]");
}

// With the job's uid known, the labels are not enough: the job must be the pod's controller
// (security audit 2026-11-30 d, S9: a pod of the namespace labelled as a rank was pinned to the
// rank's reserved node). A job the lookup does not know (a reservation made through the
// Placement API alone) is still matched by labels.
TEST_F(ExtenderTest, AKnownJobsReservationTakesOnlyThePodsItControls) {
  Extender owned(service_, binder_,
                 {.job_uid = [](std::string_view job) -> std::optional<std::string> {
                   if (job == "ml/llama") return std::string("uid-job-llama");
                   return std::nullopt;
                 }});
  PodSpec rank = GangPod("ml", "llama-1", "llama", "1");
  rank.controller_uid = "uid-job-llama";
  EXPECT_EQ(owned.HandleFilter(ArgsBody(rank, AllNodes())).outcome, Outcome::kPinned);

  for (const std::string& controller : {std::string(), std::string("uid-older-llama")}) {
    PodSpec thief = GangPod("ml", "thief", "llama", "1");
    thief.controller_uid = controller;
    Reply reply = owned.HandleFilter(ArgsBody(thief, AllNodes()));
    EXPECT_EQ(reply.outcome, Outcome::kBadLabels) << controller;
    EXPECT_THAT(ParseFilterResult(reply.response.body).failed_and_unresolvable,
                Each(Pair(_,
                          "phalanx: pod ml/thief carries phalanx.dev/job=llama but "
                          "TrainingJob ml/llama (uid uid-job-llama) is not its controller: "
                          "only the job's own pods bind to its reservation")));
    // Nor does a bind get through for it.
    reply = owned.HandleBind(BindingBody("ml", "thief", "uid-thief", reserved_[1]));
    EXPECT_EQ(reply.outcome, Outcome::kBadLabels);
  }

  // A reservation with no TrainingJob behind it: labels decide, as without the lookup.
  ASSERT_TRUE(service_.Reserve(Gang("ml/adhoc", 1, 8, kLayer3)).ok());
  EXPECT_EQ(
      owned.HandleFilter(ArgsBody(GangPod("ml", "adhoc-0", "adhoc", "0"), AllNodes())).outcome,
      Outcome::kPinned);
}

TEST_F(ExtenderTest, BindBindsAGangPodOnItsReservedNode) {
  Filter(GangPod("ml", "llama-1", "llama", "1"), AllNodes());
  EXPECT_CALL(binder_, Bind("ml", "llama-1", "uid-llama-1", reserved_[1]))
      .WillOnce(Return(absl::OkStatus()));
  Reply reply = extender_.HandleBind(BindingBody("ml", "llama-1", "uid-llama-1", reserved_[1]));
  EXPECT_EQ(reply.response.status, 200);
  EXPECT_EQ(reply.outcome, Outcome::kPinned);
  EXPECT_EQ(reply.response.body, R"({"Error":""})");
}

TEST_F(ExtenderTest, BindRefusesAGangPodAnywhereElse) {
  Filter(GangPod("ml", "llama-1", "llama", "1"), AllNodes());
  Reply reply = extender_.HandleBind(BindingBody("ml", "llama-1", "uid-llama-1", "m3"));
  EXPECT_EQ(reply.response.status, 200);
  EXPECT_EQ(reply.outcome, Outcome::kWrongNode);
  EXPECT_EQ(ParseBindingError(reply.response.body),
            "phalanx: refusing to bind rank 1 of ml/llama to node m3: it is reserved on node " +
                reserved_[1]);
}

TEST_F(ExtenderTest, BindRefusesAGangPodWhoseReservationWasReleased) {
  Filter(GangPod("ml", "llama-1", "llama", "1"), AllNodes());
  ASSERT_OK(service_.Release("ml/llama"));
  Reply reply = extender_.HandleBind(BindingBody("ml", "llama-1", "uid-llama-1", reserved_[1]));
  EXPECT_EQ(reply.outcome, Outcome::kNoReservation);
  EXPECT_THAT(ParseBindingError(reply.response.body), HasSubstr("holds no reservation"));
}

TEST_F(ExtenderTest, BindBindsAnyOtherPodWhereKubeSchedulerChose) {
  Filter(PlainPod("default", "nb"), AllNodes());
  EXPECT_CALL(binder_, Bind("default", "nb", "uid-nb", "m3")).WillOnce(Return(absl::OkStatus()));
  Reply reply = extender_.HandleBind(BindingBody("default", "nb", "uid-nb", "m3"));
  EXPECT_EQ(reply.outcome, Outcome::kPassThrough);
  EXPECT_EQ(ParseBindingError(reply.response.body), "");
}

TEST_F(ExtenderTest, BindRefusesAPodItHasNotFiltered) {
  Reply reply = extender_.HandleBind(BindingBody("default", "ghost", "uid-ghost", "m3"));
  EXPECT_EQ(reply.response.status, 200);
  EXPECT_EQ(reply.outcome, Outcome::kUnknownPod);
  EXPECT_EQ(ParseBindingError(reply.response.body),
            "phalanx: pod default/ghost was not seen by this extender's filter (restarted?); "
            "kube-scheduler will retry it");

  // The same name with another uid is another pod.
  Filter(PlainPod("default", "nb"), AllNodes());
  reply = extender_.HandleBind(BindingBody("default", "nb", "uid-recreated", "m3"));
  EXPECT_EQ(reply.outcome, Outcome::kUnknownPod);
}

TEST_F(ExtenderTest, BindReturnsTheApiErrorAndCanBeRetried) {
  Filter(GangPod("ml", "llama-2", "llama", "2"), AllNodes());
  EXPECT_CALL(binder_, Bind("ml", "llama-2", "uid-llama-2", reserved_[2]))
      .WillOnce(Return(absl::FailedPreconditionError("Precondition failed: UID in precondition")))
      .WillOnce(Return(absl::OkStatus()));
  Reply reply = extender_.HandleBind(BindingBody("ml", "llama-2", "uid-llama-2", reserved_[2]));
  EXPECT_EQ(reply.response.status, 200);
  EXPECT_EQ(reply.outcome, Outcome::kBindFailed);
  EXPECT_THAT(ParseBindingError(reply.response.body),
              HasSubstr("phalanx: binding ml/llama-2 to node " + reserved_[2] +
                        " failed: FAILED_PRECONDITION: Precondition failed"));
  reply = extender_.HandleBind(BindingBody("ml", "llama-2", "uid-llama-2", reserved_[2]));
  EXPECT_EQ(reply.outcome, Outcome::kPinned);
  // Bound: forgotten, so a stray second bind does not reach the API.
  reply = extender_.HandleBind(BindingBody("ml", "llama-2", "uid-llama-2", reserved_[2]));
  EXPECT_EQ(reply.outcome, Outcome::kUnknownPod);
}

TEST_F(ExtenderTest, RemembersABoundedNumberOfPods) {
  Extender small(service_, binder_, {.remembered_pods = 4});
  for (int i = 0; i < 10; ++i) {
    small.HandleFilter(ArgsBody(PlainPod("default", "p" + std::to_string(i)), {"m0"}));
  }
  EXPECT_EQ(small.HandleBind(BindingBody("default", "p0", "uid-p0", "m0")).outcome,
            Outcome::kUnknownPod);
  EXPECT_CALL(binder_, Bind("default", "p9", "uid-p9", "m0")).WillOnce(Return(absl::OkStatus()));
  EXPECT_EQ(small.HandleBind(BindingBody("default", "p9", "uid-p9", "m0")).outcome,
            Outcome::kPassThrough);
}

TEST_F(ExtenderTest, MalformedBodiesAre400WithAMessage) {
  for (Verb verb : {Verb::kFilter, Verb::kPrioritize, Verb::kBind}) {
    Reply reply = extender_.Handle(verb, "{\"Pod\": [");
    EXPECT_EQ(reply.response.status, 400) << VerbName(verb);
    EXPECT_EQ(reply.outcome, Outcome::kBadRequest);
    EXPECT_THAT(reply.response.body, StartsWith("phalanx extender: malformed JSON"));
  }
  Reply reply = extender_.HandleFilter(R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":[]})");
  EXPECT_EQ(reply.response.status, 400);
  EXPECT_EQ(reply.response.body, "phalanx extender: Pod.metadata.namespace: missing\n");
  reply = extender_.HandleBind(R"({"PodName":"p","PodNamespace":"ml"})");
  EXPECT_EQ(reply.response.status, 400);
  EXPECT_EQ(reply.response.body, "phalanx extender: Node: missing\n");
}

TEST_F(ExtenderTest, HttpHandlerTakesJsonPostsOnlyAndReportsEveryOutcome) {
  std::vector<std::pair<Verb, Outcome>> seen;
  http::Handler handler = MakeHandler(extender_, Verb::kFilter, [&](Verb verb, Outcome outcome) {
    seen.emplace_back(verb, outcome);
  });
  http::Request request;
  request.method = "POST";
  request.path = "/filter";
  request.body = ArgsBody(GangPod("ml", "llama-0", "llama", "0"), AllNodes());
  http::Response response = handler(request);
  EXPECT_EQ(response.status, 200);
  EXPECT_THAT(*ParseFilterResult(response.body).node_names, ElementsAre(reserved_[0]));
  request.method = "GET";
  response = handler(request);
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(response.body, "phalanx extender: filter takes POST, not GET\n");
  EXPECT_THAT(response.headers, ElementsAre(Pair("Allow", "POST")));
  // JSON, with or without parameters and in any case, or no Content-Type at all; nothing else.
  request.method = "POST";
  for (const char* json : {"application/json", "Application/JSON; charset=utf-8", ""}) {
    request.content_type = json;
    EXPECT_EQ(handler(request).status, 200) << json;
  }
  request.content_type = "application/x-www-form-urlencoded";
  response = handler(request);
  EXPECT_EQ(response.status, 415);
  EXPECT_EQ(response.body,
            "phalanx extender: filter takes application/json, not "
            "application/x-www-form-urlencoded\n");
  EXPECT_THAT(seen, ElementsAre(Pair(Verb::kFilter, Outcome::kPinned),
                                Pair(Verb::kFilter, Outcome::kBadRequest),
                                Pair(Verb::kFilter, Outcome::kPinned),
                                Pair(Verb::kFilter, Outcome::kPinned),
                                Pair(Verb::kFilter, Outcome::kPinned),
                                Pair(Verb::kFilter, Outcome::kBadRequest)));
  EXPECT_EQ(OutcomeName(Outcome::kReservedNodeRejected), "reserved_node_rejected");
  EXPECT_EQ(VerbName(Verb::kPrioritize), "prioritize");
}

// The server calls the extender from several threads: each keeps its own decoder and scratch.
TEST_F(ExtenderTest, ConcurrentCallsEachGetTheirOwnAnswer) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        int rank = (t + i) % 4;
        Reply reply = Filter(GangPod("ml", "llama-" + std::to_string(rank), "llama",
                                     std::to_string(rank)),
                             AllNodes());
        ParsedFilterResult result = ParseFilterResult(reply.response.body);
        if (!result.node_names || *result.node_names != std::vector{reserved_[rank]}) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace phalanx::extender
