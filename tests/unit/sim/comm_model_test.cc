#include "sim/comm_model.h"

#include "gtest/gtest.h"
#include "tests/unit/sim/sim_test_util.h"

namespace phalanx::sim {
namespace {

TEST(CommModelTest, SingleNodeAndTightPlacementsAreIdeal) {
  ClusterModel cluster = testing::SmallCluster(16);
  EXPECT_DOUBLE_EQ(CommSlowdown(cluster, {5}, 8), 1.0);
  EXPECT_DOUBLE_EQ(CommSlowdown(cluster, {4, 5, 6, 7}, 8), 1.0);  // one block
  EXPECT_GT(AllReduceSeconds(cluster, {4, 5}, 8), AllReduceSeconds(cluster, {4}, 8));
}

TEST(CommModelTest, EveryLayerClimbedCostsMore) {
  ClusterModel cluster = testing::SmallCluster(16);
  const double block = CommSlowdown(cluster, {0, 1}, 8);
  const double layer2 = CommSlowdown(cluster, {0, 4}, 8);
  const double layer1 = CommSlowdown(cluster, {0, 8}, 8);
  EXPECT_DOUBLE_EQ(block, 1.0);
  EXPECT_GT(layer2, block);
  EXPECT_GT(layer1, layer2);
  // A hop over one layer keeps 85% of EFA bandwidth; the NVLink part inside each node does not
  // change, so the whole all-reduce slows by less than 1/0.85.
  EXPECT_GT(layer2, 1.05);
  EXPECT_LT(layer2, 1 / 0.85);
}

TEST(CommModelTest, GangsNeedingMoreThanADomainAreJudgedAgainstTheirOwnIdeal) {
  ClusterModel cluster = testing::SmallCluster(16);
  // 8 nodes must span two blocks; packing them into one layer-2 domain is ideal.
  EXPECT_DOUBLE_EQ(CommSlowdown(cluster, {0, 1, 2, 3, 4, 5, 6, 7}, 8), 1.0);
  EXPECT_GT(CommSlowdown(cluster, {0, 1, 2, 3, 8, 9, 10, 11}, 8), 1.0);
}

TEST(CommModelTest, NvlinkCliqueBeatsEfa) {
  ClusterSpec spec;
  spec.groups.push_back(NodeGroupSpec{"gb", "p6e-gb200.36xlarge", 36, "gb200", {1, 1, 2, 18}});
  spec.queues.push_back(QueueSpec{.name = "q"});
  ClusterModel cluster = *BuildCluster(spec);
  const double inside = AllReduceSeconds(cluster, {0, 1, 2, 3}, 4);
  const double across = AllReduceSeconds(cluster, {16, 17, 18, 19}, 4);  // two cliques
  EXPECT_LT(inside, across);
}

}  // namespace
}  // namespace phalanx::sim
