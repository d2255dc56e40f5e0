// Each baseline's documented choice on one hand-checked state (docs/baselines.md):
//
//   16 nodes x 8 GPUs, 4 layer-3 blocks of 4 nodes, 2 blocks per layer-2 domain:
//     block B0 = nodes 0-3    nodes 0, 1 busy            -> 2 free nodes
//     block B1 = nodes 4-7    all free                    -> 4 free nodes
//     block B2 = nodes 8-11   node 8 busy                 -> 3 free nodes
//     block B3 = nodes 12-15  nodes 12, 13, 14 busy       -> 1 free node
//   layer-2 L0 = B0 + B1 (6 free nodes), L1 = B2 + B3 (4 free nodes)
#include "sim/baselines.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/engine.h"
#include "tests/unit/sim/sim_test_util.h"

namespace phalanx::sim {
namespace {

using ::testing::ElementsAre;

class BaselinePlacementTest : public ::testing::Test {
 protected:
  BaselinePlacementTest() : cluster_(testing::SmallCluster(16)), free_(cluster_, {4, 8}) {
    for (int32_t busy : {0, 1, 8, 12, 13, 14}) free_.Use(busy, 8);
  }
  ClusterModel cluster_;
  FreeCapacity free_;
};

TEST_F(BaselinePlacementTest, FreeCapacityAggregatesPerDomain) {
  const int32_t b0 = cluster_.nodes[0].domains[2];
  const int32_t l1 = cluster_.nodes[8].domains[1];
  EXPECT_EQ(free_.DomainFit(b0, 8), 2);
  EXPECT_EQ(free_.DomainFit(l1, 8), 4);
  EXPECT_EQ(free_.DomainFit(l1, 4), 8);
  EXPECT_EQ(free_.GroupFit(0, 8), 10);
  free_.SetUp(9, false);
  EXPECT_EQ(free_.DomainFit(l1, 8), 3);
  EXPECT_EQ(free_.DomainFree(l1), 24);
}

TEST_F(BaselinePlacementTest, KueueTasTakesTheTightestDomainAtTheRequiredLevel) {
  // Required layer-2: BestFit picks L1 (4 free nodes, the tightest that holds 2), then the
  // children with most room: B2 holds both pods, so it is the tightest last domain.
  TraceJob job = testing::Gang("j", 2, 8);
  job.required_level = testing::kLayer2;
  EXPECT_THAT(PlaceKueueTas(cluster_, free_, job, 0, 2), ElementsAre(9, 10));
  // 4 pods: only B1 can hold them at layer-3, but Kueue looks at layer-2 only, picks L1 and
  // spreads over B2 (3) and B3 (1).
  EXPECT_THAT(PlaceKueueTas(cluster_, free_, job, 0, 4), ElementsAre(9, 10, 11, 15));
}

TEST_F(BaselinePlacementTest, KueueTasPreferredClimbsUntilADomainFits) {
  TraceJob job = testing::Gang("j", 3, 8);
  job.preferred_level = testing::kLayer3;
  // Layer-3 domains holding 3: B1 (4) and B2 (3); BestFit takes B2.
  EXPECT_THAT(PlaceKueueTas(cluster_, free_, job, 0, 3), ElementsAre(9, 10, 11));
  // 5 pods fit no block; the tightest layer-2 domain holding 5 is L0 (B1 4 + 1 from B0).
  EXPECT_THAT(PlaceKueueTas(cluster_, free_, job, 0, 5), ElementsAre(2, 4, 5, 6, 7));
}

TEST_F(BaselinePlacementTest, KueueTasUnconstrainedIsLeastFreeCapacity) {
  free_.Use(2, 4);  // node 2 now has 4 free GPUs: the least free capacity for 4-GPU pods
  TraceJob job = testing::Gang("j", 2, 4);
  EXPECT_THAT(PlaceKueueTas(cluster_, free_, job, 0, 2), ElementsAre(2, 3));
}

TEST_F(BaselinePlacementTest, VolcanoStartsAtTheLowestTierAndPicksTheFullestHyperNode) {
  TraceJob job = testing::Gang("j", 2, 8);
  job.required_level = testing::kLayer2;  // highestTierAllowed
  // Tier 1 (layer-3) HyperNodes holding 2: B0 (50% free), B1 (100%), B2 (75%): binpack -> B0.
  EXPECT_THAT(PlaceVolcano(cluster_, free_, job, 0, 2), ElementsAre(2, 3));
  // 5 pods: no block; layer-2: only L0 holds 5.
  EXPECT_EQ(PlaceVolcano(cluster_, free_, job, 0, 5).size(), 5u);
  // 7 pods exceed every layer-2 domain: hard mode refuses.
  EXPECT_TRUE(PlaceVolcano(cluster_, free_, job, 0, 7).empty());
}

TEST_F(BaselinePlacementTest, KaiStartsAtTheRequestedLevelAndPicksTheFullestDomain) {
  TraceJob job = testing::Gang("j", 2, 8);
  job.required_level = testing::kLayer2;
  // No preferred level: domains at the required level; L1 has the least free GPUs -> L1, and
  // inside it nodes binpacked (all equally empty: topology order).
  EXPECT_THAT(PlaceKai(cluster_, free_, job, 0, 2), ElementsAre(9, 10));
  job.preferred_level = testing::kLayer3;
  // Preferred layer-3 first: the fullest block holding 2 is B0.
  EXPECT_THAT(PlaceKai(cluster_, free_, job, 0, 2), ElementsAre(2, 3));
}

TEST_F(BaselinePlacementTest, FirstFitTakesTheFirstNodesWithRoomPodByPod) {
  TraceJob job = testing::Gang("j", 3, 8);
  EXPECT_THAT(PlaceFirstFit(cluster_, free_, job, 0, 3), ElementsAre(2, 3, 4));
  // Not enough room: first-fit returns what it could place (the gang gate holds them).
  EXPECT_EQ(PlaceFirstFit(cluster_, free_, job, 0, 11).size(), 10u);
}

// Quota preemption that finds no victim does not admit (Kueue preempts only to make a workload
// fit quota; a workload that fits quota but has no topology assignment stays pending).
//
//   4 nodes x 8 GPUs, layer-3 blocks {0, 1} and {2, 3}; queues a and b in one cohort, 16 GPUs
//   nominal each, reclaimWithinCohort Any. b runs B1 on node 0 and B3 on node 2 (priority 1000,
//   at its nominal quota: not borrowing). At t=200 a submits P (priority 10, 2 pods, required
//   layer-3: no block has two free nodes) and then Q (priority 10, 1 pod, anywhere).
//
// P fits quota but not the cluster; its only preemption candidates are b's jobs, of higher
// priority and not borrowing, so there is nothing to evict and P must stay pending without
// charging a's quota. Q then fits quota (cohort 16 + 8 of 32) and starts at once on a free node.
// Before the fix P was admitted with no victims and held 16 GPUs of quota it could not use, so
// Q (cohort 16 + 16 + 8 > 32) waited until b's jobs finished at t=10000.
// first-fit is left out: it admits on quota alone by design (Kueue without TAS), so P is
// rightly admitted there before any preemption is considered.
class NoVictimsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NoVictimsTest, PreemptionWithoutVictimsDoesNotAdmit) {
  ClusterSpec spec;
  spec.groups.push_back(NodeGroupSpec{"p5", "p5.48xlarge", 4, "eks", {1, 2, 2}});
  for (const char* name : {"a", "b"}) {
    QueueSpec queue;
    queue.name = name;
    queue.cohort = "c";
    queue.within_cluster_queue = "LowerPriority";
    queue.reclaim_within_cohort = "Any";
    queue.flavors.push_back(
        FlavorQuota{"p5", {{"nvidia.com/gpu", 16}}, std::nullopt, std::nullopt});
    spec.queues.push_back(queue);
  }
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(spec));
  std::vector<TraceJob> jobs;
  // b fills nodes 0..3 in node order (every baseline's rule on an empty cluster); the jobs on
  // nodes 1 and 3 finish at t=100, leaving one free node per block.
  for (int i = 0; i < 4; ++i) {
    TraceJob job = testing::Gang("B" + std::to_string(i + 1), 1, 8, 0, i % 2 == 0 ? 10000 : 100);
    job.queue = "b";
    job.priority = 1000;
    jobs.push_back(job);
  }
  TraceJob p = testing::Gang("P", 2, 8, 200, 1000);
  p.queue = "a";
  p.priority = 10;
  p.required_level = testing::kLayer3;
  TraceJob q = testing::Gang("Q", 1, 8, 201, 1000);
  q.queue = "a";
  q.priority = 10;
  jobs.push_back(p);
  jobs.push_back(q);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Policy> policy, MakeBaseline(GetParam()));
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, jobs, {}).Run(*policy));
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(result.outcomes[i].first_start_s, 0) << jobs[i].name;
  }
  EXPECT_EQ(result.summary.preemptions, 0);
  EXPECT_LT(result.outcomes[5].first_start_s, 300) << "Q waited for quota held by P";
  EXPECT_GE(result.outcomes[4].first_start_s, 10000) << "P needs a whole block";
  EXPECT_EQ(result.summary.jobs_completed, 6);
  EXPECT_EQ(result.summary.partial_gang_events + result.summary.overcommit_events, 0);
}

INSTANTIATE_TEST_SUITE_P(TopologyAwareBaselines, NoVictimsTest,
                         ::testing::Values("kueue-tas", "volcano-hypernode", "kai-topology"));

}  // namespace
}  // namespace phalanx::sim
