// PlanPreemption: fewest lower-priority victims inside one domain; shrink before evict.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::phalanx::placement::testing;  // NOLINT

MATCHER_P2(IsVictim, job, new_count, "") { return arg.job == job && arg.new_count == new_count; }

TEST(PreemptionTest, NothingToPreemptWhenTheGangAlreadyFits) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 4);
  GangRequest request = Gang("ns/hi", 4, 8, kLayer3);
  request.priority = 10;
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan, snapshot.PlanPreemption(request, {}));
  EXPECT_TRUE(plan.feasible);
  EXPECT_TRUE(plan.victims.empty());
  EXPECT_EQ(plan.placement.nodes.size(), 4u);
}

TEST(PreemptionTest, TwoVictimsInOneDomainRatherThanOneSpreadAcrossDomains) {
  // nn-a: j1 (2 nodes) + j2 (2 nodes). nn-b: 2 free nodes + j3 (2 nodes, higher priority).
  // Evicting j1 alone would free "4 nodes" only counted across domains; the gang needs one.
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-a"}, "x", 4);
  AddNodes(snapshot, {"a", "b", "nn-b"}, "y", 4);
  ASSERT_OK(snapshot.Restore(Gang("ns/j1", 2, 8), {"ns/j1", {}, {"x0", "x1"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/j2", 2, 8), {"ns/j2", {}, {"x2", "x3"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/j3", 2, 8), {"ns/j3", {}, {"y0", "y1"}}).status());
  GangRequest request = Gang("ns/hi", 4, 8, kLayer3);
  request.priority = 10;
  std::vector<RunningGang> candidates = {{"ns/j1", 1, {}}, {"ns/j3", 20, {}}, {"ns/j2", 1, {}}};
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan, snapshot.PlanPreemption(request, candidates));
  ASSERT_TRUE(plan.feasible) << plan.explanation.summary;
  EXPECT_THAT(plan.victims, ElementsAre(IsVictim("ns/j1", 0), IsVictim("ns/j2", 0)));
  EXPECT_EQ(plan.placement.domain.ToString(), kLayer3 + "=nn-a");
  EXPECT_EQ(Distinct(plan.placement.nodes), (std::set<std::string>{"x0", "x1", "x2", "x3"}));
  // Planning changed nothing.
  EXPECT_EQ(snapshot.NodeFree("x0")->at("nvidia.com/gpu"), 0);
  EXPECT_EQ(snapshot.ReservedJobs().size(), 3u);
}

TEST(PreemptionTest, PrefersTheDomainNeedingFewerVictims) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-a"}, "x", 4);
  AddNodes(snapshot, {"a", "b", "nn-b"}, "y", 4);
  ASSERT_OK(snapshot.Restore(Gang("ns/a1", 2, 8), {"ns/a1", {}, {"x0", "x1"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/a2", 2, 8), {"ns/a2", {}, {"x2", "x3"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/b1", 3, 8), {"ns/b1", {}, {"y0", "y1", "y2"}}).status());
  GangRequest request = Gang("ns/hi", 4, 8, kLayer3);
  request.priority = 5;
  std::vector<RunningGang> candidates = {{"ns/a1", 0, {}}, {"ns/a2", 0, {}}, {"ns/b1", 0, {}}};
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan, snapshot.PlanPreemption(request, candidates));
  ASSERT_TRUE(plan.feasible);
  EXPECT_THAT(plan.victims, ElementsAre(IsVictim("ns/b1", 0)));
  EXPECT_EQ(plan.placement.domain.ToString(), kLayer3 + "=nn-b");
}

TEST(PreemptionTest, ShrinksAnElasticGangBeforeEvictingAnything) {
  // nn-a: elastic e (4 nodes, min 1), rigid r (2 nodes), 2 free. The gang needs 4 nodes:
  // shrinking e by 2 suffices, and it is shrunk no further than needed.
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-a"}, "x", 8);
  GangRequest elastic = Gang("ns/e", 4, 8);
  elastic.elastic = ElasticRange{1, 4, 1};
  ASSERT_OK(snapshot.Restore(elastic, {"ns/e", {}, {"x0", "x1", "x2", "x3"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/r", 2, 8), {"ns/r", {}, {"x4", "x5"}}).status());
  GangRequest request = Gang("ns/hi", 4, 8, kLayer3);
  request.priority = 10;
  std::vector<RunningGang> candidates = {{"ns/r", 0, {}}, {"ns/e", 0, ElasticRange{1, 4, 1}}};
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan, snapshot.PlanPreemption(request, candidates));
  ASSERT_TRUE(plan.feasible);
  EXPECT_THAT(plan.victims, ElementsAre(IsVictim("ns/e", 2)));
  // The preemptor lands on the freed highest ranks of e plus the free nodes.
  EXPECT_EQ(Distinct(plan.placement.nodes), (std::set<std::string>{"x2", "x3", "x6", "x7"}));
}

TEST(PreemptionTest, NeverPicksEqualOrHigherPriority) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "x", 4);
  ASSERT_OK(snapshot.Restore(Gang("ns/same", 2, 8), {"ns/same", {}, {"x0", "x1"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/high", 2, 8), {"ns/high", {}, {"x2", "x3"}}).status());
  GangRequest request = Gang("ns/hi", 2, 8, kLayer3);
  request.priority = 10;
  std::vector<RunningGang> candidates = {{"ns/same", 10, {}}, {"ns/high", 11, {}}};
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan, snapshot.PlanPreemption(request, candidates));
  EXPECT_FALSE(plan.feasible);
  EXPECT_TRUE(plan.victims.empty());
  EXPECT_THAT(plan.explanation.summary, HasSubstr("no preemption helps"));
  EXPECT_THAT(plan.explanation.summary, HasSubstr("fits 0"));
}

TEST(PreemptionTest, TiesGoToAdmissionsPreferredCandidate) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "x", 2);
  ASSERT_OK(snapshot.Restore(Gang("ns/p", 1, 8), {"ns/p", {}, {"x0"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/q", 1, 8), {"ns/q", {}, {"x1"}}).status());
  GangRequest request = Gang("ns/hi", 1, 8, kLayer3);
  request.priority = 1;
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan,
                       snapshot.PlanPreemption(request, {{"ns/q", 0, {}}, {"ns/p", 0, {}}}));
  EXPECT_THAT(plan.victims, ElementsAre(IsVictim("ns/q", 0)));
  ASSERT_OK_AND_ASSIGN(plan, snapshot.PlanPreemption(request, {{"ns/p", 0, {}}, {"ns/q", 0, {}}}));
  EXPECT_THAT(plan.victims, ElementsAre(IsVictim("ns/p", 0)));
}

// Among plans with as many evictions and shrinks, the one whose victims have the lowest
// priorities wins (the highest victim priority first, then the next): an evicted gang queues
// again and, with a higher priority, preempts in turn, so a needlessly high victim starts a
// cascade. Bug: the planner kept the first equally small plan it found (fewest pods, then the
// first subset in admission order), which here evicted the priority-8 gang.
TEST(PreemptionTest, EquallySmallPlansTakeTheLowestPriorityVictims) {
  // nn-a: "low" (priority 1) holds all 4 nodes; nn-b: "mid" (priority 8) holds both of its 2.
  // Either eviction frees one block for the 2-node gang; "mid" is the smaller one.
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-a"}, "x", 4);
  AddNodes(snapshot, {"a", "b", "nn-b"}, "y", 2);
  ASSERT_OK(snapshot.Restore(Gang("ns/low", 4, 8), {"ns/low", {}, {"x0", "x1", "x2", "x3"}})
                .status());
  ASSERT_OK(snapshot.Restore(Gang("ns/mid", 2, 8), {"ns/mid", {}, {"y0", "y1"}}).status());
  GangRequest request = Gang("ns/hi", 2, 8, kLayer3);
  request.priority = 10;
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan,
                       snapshot.PlanPreemption(request, {{"ns/low", 1, {}}, {"ns/mid", 8, {}}}));
  ASSERT_TRUE(plan.feasible) << plan.explanation.summary;
  EXPECT_THAT(plan.victims, ElementsAre(IsVictim("ns/low", 0)));
  EXPECT_EQ(plan.placement.domain.ToString(), kLayer3 + "=nn-a");
}

TEST(PreemptionTest, TwoVictimsWithTheLowestHighestPriority) {
  // One 8-node block, full: j0 (priority 1) 1 node, j1 (2) 2 nodes, j2 (3) 2 nodes, j3 (9)
  // 3 nodes. A 4-node gang needs two victims: {j1, j2} (highest priority 3) rather than
  // {j0, j3} (9), the first pair in admission order that fits.
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-a"}, "x", 8);
  ASSERT_OK(snapshot.Restore(Gang("ns/j0", 1, 8), {"ns/j0", {}, {"x0"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/j1", 2, 8), {"ns/j1", {}, {"x1", "x2"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/j2", 2, 8), {"ns/j2", {}, {"x3", "x4"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/j3", 3, 8), {"ns/j3", {}, {"x5", "x6", "x7"}}).status());
  GangRequest request = Gang("ns/hi", 4, 8, kLayer3);
  request.priority = 10;
  ASSERT_OK_AND_ASSIGN(
      PreemptionPlan plan,
      snapshot.PlanPreemption(
          request, {{"ns/j0", 1, {}}, {"ns/j1", 2, {}}, {"ns/j2", 3, {}}, {"ns/j3", 9, {}}}));
  ASSERT_TRUE(plan.feasible) << plan.explanation.summary;
  EXPECT_THAT(plan.victims, ElementsAre(IsVictim("ns/j1", 0), IsVictim("ns/j2", 0)));
}

TEST(PreemptionTest, VictimsMustHoldCapacityInTheChosenDomain) {
  // The only lower-priority gang lives in nn-b; the gang needs nn-a's nodes plus its own.
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-a"}, "x", 2);
  AddNodes(snapshot, {"a", "b", "nn-b"}, "y", 2);
  ASSERT_OK(snapshot.Restore(Gang("ns/hog", 2, 8), {"ns/hog", {}, {"x0", "x1"}}).status());
  ASSERT_OK(snapshot.Restore(Gang("ns/low", 1, 8), {"ns/low", {}, {"y0"}}).status());
  GangRequest request = Gang("ns/hi", 2, 8, kLayer3);
  request.priority = 5;
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan,
                       snapshot.PlanPreemption(request, {{"ns/low", 0, {}}, {"ns/hog", 9, {}}}));
  ASSERT_TRUE(plan.feasible);
  EXPECT_THAT(plan.victims, ElementsAre(IsVictim("ns/low", 0)));
  EXPECT_EQ(plan.placement.domain.ToString(), kLayer3 + "=nn-b");
}

TEST(PreemptionTest, InvalidRequestIsAnError) {
  ClusterSnapshot snapshot(Eks());
  EXPECT_THAT(snapshot.PlanPreemption(Gang("ns/x", 0, 8), {}),
              ::phalanx::testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace phalanx::placement
