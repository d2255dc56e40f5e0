// Each baseline's documented choice on one hand-checked state (docs/baselines.md):
//
//   16 nodes x 8 GPUs, 4 layer-3 blocks of 4 nodes, 2 blocks per layer-2 domain:
//     block B0 = nodes 0-3    nodes 0, 1 busy            -> 2 free nodes
//     block B1 = nodes 4-7    all free                    -> 4 free nodes
//     block B2 = nodes 8-11   node 8 busy                 -> 3 free nodes
//     block B3 = nodes 12-15  nodes 12, 13, 14 busy       -> 1 free node
//   layer-2 L0 = B0 + B1 (6 free nodes), L1 = B2 + B3 (4 free nodes)
#include "sim/baselines.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
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

}  // namespace
}  // namespace phalanx::sim
