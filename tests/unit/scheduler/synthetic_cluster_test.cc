#include "scheduler/synthetic_cluster.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::StatusIs;

TEST(SyntheticClusterTest, ReachesTheRequestedOccupancyDeterministically) {
  SyntheticClusterOptions options{.nodes = 256, .occupancy = 0.7, .seed = 3};
  ASSERT_OK_AND_ASSIGN(SyntheticCluster a, BuildSyntheticCluster(options));
  ASSERT_OK_AND_ASSIGN(SyntheticCluster b, BuildSyntheticCluster(options));
  EXPECT_EQ(a.total_gpus, 256 * 8);
  double occupancy = static_cast<double>(a.used_gpus) / static_cast<double>(a.total_gpus);
  EXPECT_GT(occupancy, 0.6);
  EXPECT_LE(occupancy, 0.7);
  EXPECT_EQ(a.jobs, b.jobs);
  EXPECT_EQ(a.snapshot.domains().size(), b.snapshot.domains().size());
  EXPECT_EQ(a.snapshot.domains()[0].free, b.snapshot.domains()[0].free);
  EXPECT_EQ(a.snapshot.domains()[0].free[kGpuIndex], a.total_gpus - a.used_gpus);
  // 256 nodes / 16 per leaf = 16 layer-4 domains, 4 layer-3, 1 layer-2, 1 layer-1.
  EXPECT_EQ(a.snapshot.domains_at_level(4).size(), 16u);
  EXPECT_EQ(a.snapshot.domains_at_level(1).size(), 1u);
  EXPECT_OK(a.snapshot.CheckConsistency());
}

TEST(SyntheticClusterTest, RejectsBadOptions) {
  EXPECT_THAT(BuildSyntheticCluster({.nodes = 0}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(BuildSyntheticCluster({.occupancy = 1.5}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(BuildSyntheticCluster({.topology = "flat"}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace phalanx::placement
