// Reserve / Release / Resize: atomic, and resizes stay near the existing ranks.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::phalanx::placement::testing;  // NOLINT

TEST(ReservationTest, ReserveHoldsCapacityAndReleaseGivesItBack) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 4);
  std::vector<ResourceVector> before = NodeUsage(snapshot);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(Gang("ns/j", 3, 8)));
  ASSERT_TRUE(result.placed);
  EXPECT_THAT(snapshot.ReservedJobs(), ElementsAre("ns/j"));
  ASSERT_OK_AND_ASSIGN(PlacementResult next, snapshot.Place(Gang("ns/k", 2, 8)));
  EXPECT_FALSE(next.placed);  // only one node left
  EXPECT_THAT(snapshot.Reserve(Gang("ns/j", 1, 8)), StatusIs(absl::StatusCode::kAlreadyExists));
  ASSERT_OK(snapshot.Release("ns/j"));
  EXPECT_EQ(NodeUsage(snapshot), before);
  EXPECT_THAT(snapshot.Release("ns/j"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ReservationTest, FailedReserveChangesNothing) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  std::vector<ResourceVector> before = NodeUsage(snapshot);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(Gang("ns/j", 3, 8)));
  EXPECT_FALSE(result.placed);
  EXPECT_EQ(NodeUsage(snapshot), before);
  EXPECT_TRUE(snapshot.ReservedJobs().empty());
}

TEST(ReservationTest, GrowLandsNextToTheExistingRanks) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 4);
  AddNodes(snapshot, {"a", "b", "c2"}, "y", 2);
  AddNodes(snapshot, {"a", "e", "c3"}, "z", 2);
  GangRequest request = Gang("ns/e", 0, 8);
  request.elastic = ElasticRange{2, 8, 1};
  request.required_level = kLayer2;
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(request));
  ASSERT_TRUE(result.placed);
  ASSERT_EQ(result.placement.nodes.size(), 6u);  // layer-2 "b" holds 6
  ASSERT_OK(snapshot.Resize("ns/e", 2).status());
  // Shrink kept ranks 0 and 1.
  EXPECT_THAT(snapshot.FindReservation("ns/e")->ranks.size(), 2u);
  // Someone takes z0: free nodes are now 4 in b and 1 in e.
  Occupy(snapshot, "z0", 8);
  ASSERT_OK_AND_ASSIGN(result, snapshot.Resize("ns/e", 4));
  ASSERT_TRUE(result.placed);
  ASSERT_EQ(result.placement.nodes.size(), 4u);
  for (const std::string& node : result.placement.nodes) {
    EXPECT_EQ(LabelOf(snapshot, node, kLayer2), "b") << node;
  }
  // The first two ranks did not move.
  EXPECT_EQ(result.placement.nodes[0], "x0");
  EXPECT_EQ(result.placement.nodes[1], "x1");
  // New ranks went into x's own layer-3 domain, which still had room.
  EXPECT_EQ(LabelOf(snapshot, result.placement.nodes[2], kLayer3), "c1");
  EXPECT_EQ(LabelOf(snapshot, result.placement.nodes[3], kLayer3), "c1");
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ReservationTest, GrowThatDoesNotFitChangesNothing) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 3);
  AddNodes(snapshot, {"a", "e", "c2"}, "y", 4);
  GangRequest request = Gang("ns/e", 2, 8, kLayer2);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(request));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(result.placement.domain.ToString(), kLayer3 + "=c1");  // best fit: 3 free
  std::vector<ResourceVector> before = NodeUsage(snapshot);
  // Growing to 4 would need a second layer-2 domain: refused, although 5 nodes are free.
  ASSERT_OK_AND_ASSIGN(result, snapshot.Resize("ns/e", 4));
  EXPECT_FALSE(result.placed);
  EXPECT_THAT(result.explanation.summary, HasSubstr("cannot grow ns/e from 2 to 4"));
  EXPECT_EQ(NodeUsage(snapshot), before);
  EXPECT_EQ(snapshot.FindReservation("ns/e")->ranks.size(), 2u);
}

TEST(ReservationTest, ShrinkDropsTheHighestRanksAndTheirBoundPodsStopCounting) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 4);
  GangRequest request = Gang("ns/e", 0, 8);
  request.elastic = ElasticRange{1, 4, 1};
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(request));
  ASSERT_EQ(result.placement.nodes.size(), 4u);
  std::vector<std::string> nodes = result.placement.nodes;
  ASSERT_OK(snapshot.AddPod({"ns/e-3", nodes[3], {{"nvidia.com/gpu", 8}}, "ns/e", 3}));
  ASSERT_OK_AND_ASSIGN(result, snapshot.Resize("ns/e", 2));
  EXPECT_THAT(result.placement.nodes, ElementsAre(nodes[0], nodes[1]));
  EXPECT_EQ(snapshot.NodeFree(nodes[2])->at("nvidia.com/gpu"), 8);
  // Rank 3's pod still runs while its owner deletes it; its room is already free.
  EXPECT_EQ(snapshot.NodeFree(nodes[3])->at("nvidia.com/gpu"), 8);
  EXPECT_OK(snapshot.CheckConsistency());
  ASSERT_OK(snapshot.RemovePod("ns/e-3"));
  EXPECT_EQ(snapshot.NodeFree(nodes[3])->at("nvidia.com/gpu"), 8);
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ReservationTest, ResizeValidatesTheNewCount) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 4);
  GangRequest request = Gang("ns/e", 0, 8);
  request.elastic = ElasticRange{2, 4, 2};
  request.group_size = 2;
  request.group_level = kLayer3;
  ASSERT_OK(snapshot.Reserve(request).status());
  EXPECT_THAT(snapshot.Resize("ns/e", 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("new_count (0)")));
  EXPECT_THAT(snapshot.Resize("ns/e", 3),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("group_size")));
  EXPECT_THAT(snapshot.Resize("ns/none", 2), StatusIs(absl::StatusCode::kNotFound));
}

TEST(ReservationTest, ResizeGrowsPastTheReservedMaximumButNotBelowTheMinimum) {
  // Admission reserves an elastic gang with max = the count its quota allows, then grows it as
  // quota frees: the range given to Reserve must not cap later growth.
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 4);
  GangRequest request = Gang("ns/e", 0, 8);
  request.elastic = ElasticRange{2, 2, 1};
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(request));
  ASSERT_EQ(result.placement.nodes.size(), 2u);
  ASSERT_OK_AND_ASSIGN(result, snapshot.Resize("ns/e", 4));
  EXPECT_TRUE(result.placed);
  EXPECT_EQ(result.placement.nodes.size(), 4u);
  EXPECT_EQ(snapshot.FindReservation("ns/e")->request.elastic->max, 4);
  EXPECT_THAT(snapshot.Resize("ns/e", 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request.elastic.min (2)")));
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ReservationTest, RestoreRebuildsAReservationAtKnownNodes) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 3);
  Placement placement{"ns/j", {}, {"n2", "n0"}};
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Restore(Gang("ns/j", 2, 8), placement));
  EXPECT_TRUE(result.placed);
  EXPECT_EQ(snapshot.NodeFree("n2")->at("nvidia.com/gpu"), 0);
  EXPECT_EQ(snapshot.FindReservation("ns/j")->ranks[0].node, snapshot.FindNode("n2"));
  EXPECT_THAT(snapshot.Restore(Gang("ns/k", 1, 8), {"ns/k", {}, {"n2"}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("n2")));
  EXPECT_THAT(snapshot.Restore(Gang("ns/k", 1, 8), {"ns/k", {}, {"gone"}}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_OK(snapshot.CheckConsistency());
}

}  // namespace
}  // namespace phalanx::placement
