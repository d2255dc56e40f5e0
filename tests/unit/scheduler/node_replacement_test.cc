// ReplaceNodes: the ranks on failed nodes move to healthy free nodes as close as the topology
// allows (the old node's tightest domain first, never past the required level), every other
// rank stays, all or nothing, and a repeat changes nothing.
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

void SetReady(ClusterSnapshot& snapshot, const std::string& name, bool ready) {
  NodeInfo info = snapshot.nodes()[snapshot.FindNode(name)].info;
  info.ready = ready;
  ASSERT_OK(snapshot.UpdateNode(info));
}

// Block c1 (x0..x4) and block c2 (y0..y5) under layer-2 "b": a 4-pod gang takes c1 (best fit),
// leaving x4 free.
class TwoBlocks : public ::testing::Test {
 protected:
  void SetUp() override {
    AddNodes(snapshot_, {"a", "b", "c1"}, "x", 5);
    AddNodes(snapshot_, {"a", "b", "c2"}, "y", 6);
  }
  std::vector<std::string> Reserve(int32_t count, const std::string& required = kLayer2) {
    absl::StatusOr<PlacementResult> r = snapshot_.Reserve(Gang("ns/j", count, 8, required));
    EXPECT_OK(r.status());
    EXPECT_TRUE(r->placed);
    return r->placement.nodes;
  }

  ClusterSnapshot snapshot_{Eks()};
};

TEST_F(TwoBlocks, OneFailedNodeIsReplacedInsideItsOwnBlock) {
  std::vector<std::string> before = Reserve(4);
  ASSERT_THAT(before, ElementsAre("x0", "x1", "x2", "x3"));
  SetReady(snapshot_, "x1", false);
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot_.ReplaceNodes("ns/j", {"x1"}));
  ASSERT_TRUE(r.placed) << r.explanation.summary;
  EXPECT_THAT(r.placement.nodes, ElementsAre("x0", "x4", "x2", "x3"));  // only rank 1 moved
  EXPECT_EQ(r.placement.domain.ToString(), kLayer3 + "=c1");
  EXPECT_EQ(snapshot_.FindReservation("ns/j")->domain, r.placement.domain);
  // x1 no longer holds the gang's slot; x4 does.
  EXPECT_EQ(snapshot_.nodes()[snapshot_.FindNode("x1")].used[kGpuIndex], 0);
  EXPECT_EQ(snapshot_.nodes()[snapshot_.FindNode("x4")].used[kGpuIndex], 8);
  EXPECT_OK(snapshot_.CheckConsistency());
}

TEST_F(TwoBlocks, AFullBlockWidensToItsParentButNoFurther) {
  Reserve(5);  // c1 full
  SetReady(snapshot_, "x2", false);
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot_.ReplaceNodes("ns/j", {"x2"}));
  ASSERT_TRUE(r.placed) << r.explanation.summary;
  EXPECT_EQ(r.placement.nodes[0], "x0");
  EXPECT_EQ(r.placement.nodes[4], "x4");
  EXPECT_EQ(LabelOf(snapshot_, r.placement.nodes[2], kLayer3), "c2");
  EXPECT_EQ(r.placement.domain.ToString(), kLayer2 + "=b");
  EXPECT_OK(snapshot_.CheckConsistency());
}

TEST_F(TwoBlocks, NothingChangesWhenTheRequiredDomainHasNoRoom) {
  Reserve(5, kLayer3);  // must stay in one layer-3 block, and c1 is full
  SetReady(snapshot_, "x2", false);
  std::vector<ResourceVector> before = NodeUsage(snapshot_);
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot_.ReplaceNodes("ns/j", {"x2"}));
  EXPECT_FALSE(r.placed);
  EXPECT_THAT(r.explanation.summary, HasSubstr("cannot replace rank 2 of ns/j (on x2)"));
  EXPECT_THAT(r.explanation.summary, HasSubstr("in one " + kLayer3 + " domain"));
  EXPECT_EQ(r.explanation.nodes_rejected["NotReady"], 1);
  EXPECT_EQ(NodeUsage(snapshot_), before);
  EXPECT_EQ(snapshot_.FindReservation("ns/j")->ranks[2].node, snapshot_.FindNode("x2"));
}

TEST_F(TwoBlocks, SeveralNodesAtOnceOrNoneOfThem) {
  AddNodes(snapshot_, {"a", "b", "c1"}, "z", 1);  // c1: x0..x4, z0
  Reserve(4);                                     // x0..x3; x4 and z0 free in c1
  SetReady(snapshot_, "x0", false);
  SetReady(snapshot_, "x3", false);
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot_.ReplaceNodes("ns/j", {"x0", "x3"}));
  ASSERT_TRUE(r.placed) << r.explanation.summary;
  EXPECT_EQ(r.placement.nodes[1], "x1");
  EXPECT_EQ(r.placement.nodes[2], "x2");
  EXPECT_EQ(Distinct({r.placement.nodes[0], r.placement.nodes[3]}),
            (std::set<std::string>{"x4", "z0"}));
  EXPECT_EQ(r.placement.domain.ToString(), kLayer3 + "=c1");

  // Three more failures with one free node left in c1 and none usable elsewhere: all or none.
  for (const char* y : {"y0", "y1", "y2", "y3", "y4", "y5"}) Occupy(snapshot_, y, 8);
  for (const std::string& n : r.placement.nodes) SetReady(snapshot_, n, false);
  SetReady(snapshot_, "x0", true);  // one spare
  std::vector<ResourceVector> before = NodeUsage(snapshot_);
  ASSERT_OK_AND_ASSIGN(PlacementResult all, snapshot_.ReplaceNodes("ns/j", r.placement.nodes));
  EXPECT_FALSE(all.placed);
  EXPECT_THAT(all.explanation.summary, HasSubstr("cannot replace ranks 0, 1, 2, 3"));
  EXPECT_EQ(NodeUsage(snapshot_), before);
  EXPECT_OK(snapshot_.CheckConsistency());
}

TEST(NodeReplacementTest, ARankStaysInItsOwnBlockWhenTheGangSpansSeveral) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 5);
  AddNodes(snapshot, {"a", "b", "c2"}, "y", 5);
  ASSERT_OK_AND_ASSIGN(PlacementResult placed, snapshot.Reserve(Gang("ns/j", 8, 8, kLayer2)));
  ASSERT_TRUE(placed.placed);
  ASSERT_THAT(placed.placement.nodes, ElementsAre("x0", "x1", "x2", "x3", "x4", "y0", "y1", "y2"));
  AddNodes(snapshot, {"a", "b", "c1"}, "w", 1);  // a spare in c1 too
  SetReady(snapshot, "y1", false);
  SetReady(snapshot, "x2", false);
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot.ReplaceNodes("ns/j", {"y1", "x2"}));
  ASSERT_TRUE(r.placed);
  // Each to a spare of its own block, not both into the block with more room.
  EXPECT_THAT(r.placement.nodes, ElementsAre("x0", "x1", "w0", "x3", "x4", "y0", "y3", "y2"));
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(NodeReplacementTest, NamedNodesAreNeverTargetsAndUnknownOnesChangeNothing) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 6);
  ASSERT_OK_AND_ASSIGN(PlacementResult placed, snapshot.Reserve(Gang("ns/j", 4, 8, kLayer3)));
  ASSERT_TRUE(placed.placed);
  // x1 looks healthy to the snapshot, and x4 is free, but the caller says both are bad.
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot.ReplaceNodes("ns/j", {"x1", "x4"}));
  ASSERT_TRUE(r.placed);
  EXPECT_THAT(r.placement.nodes, ElementsAre("x0", "x5", "x2", "x3"));
  // A repeat (a retry after a lost reply) finds no rank there: unchanged, still placed.
  std::vector<ResourceVector> before = NodeUsage(snapshot);
  ASSERT_OK_AND_ASSIGN(PlacementResult again, snapshot.ReplaceNodes("ns/j", {"x1", "nope"}));
  ASSERT_TRUE(again.placed);
  EXPECT_EQ(again.placement.nodes, r.placement.nodes);
  EXPECT_EQ(NodeUsage(snapshot), before);
}

TEST(NodeReplacementTest, ADeletedNodeIsReplacedToo) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 3);
  ASSERT_OK_AND_ASSIGN(PlacementResult placed, snapshot.Reserve(Gang("ns/j", 2, 8, kLayer3)));
  ASSERT_TRUE(placed.placed);
  ASSERT_OK(snapshot.RemoveNode("x1"));
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot.ReplaceNodes("ns/j", {"x1"}));
  ASSERT_TRUE(r.placed);
  EXPECT_THAT(r.placement.nodes, ElementsAre("x0", "x2"));
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(NodeReplacementTest, AMovedRanksOldPodStopsCountingAndTheNewPodTakesTheSlot) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 3);
  ASSERT_OK_AND_ASSIGN(PlacementResult placed, snapshot.Reserve(Gang("ns/j", 2, 8, kLayer3)));
  ASSERT_TRUE(placed.placed);
  ASSERT_OK(snapshot.AddPod({"ns/j-1", "x1", {{"nvidia.com/gpu", 8}}, "ns/j", 1}));
  SetReady(snapshot, "x1", false);
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot.ReplaceNodes("ns/j", {"x1"}));
  ASSERT_TRUE(r.placed);
  EXPECT_EQ(r.placement.nodes[1], "x2");
  EXPECT_OK(snapshot.CheckConsistency());
  // The old pod is being deleted by its owner: x1 holds nothing for the snapshot any more.
  EXPECT_EQ(snapshot.nodes()[snapshot.FindNode("x1")].used[kGpuIndex], 0);
  ASSERT_OK(snapshot.RemovePod("ns/j-1"));
  EXPECT_EQ(snapshot.nodes()[snapshot.FindNode("x1")].used[kGpuIndex], 0);
  ASSERT_OK(snapshot.AddPod({"ns/j-1", "x2", {{"nvidia.com/gpu", 8}}, "ns/j", 1}));
  EXPECT_EQ(snapshot.FindReservation("ns/j")->ranks[1].pod, "ns/j-1");
  EXPECT_EQ(snapshot.nodes()[snapshot.FindNode("x2")].used[kGpuIndex], 8);  // not counted twice
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(NodeReplacementTest, ALostRankTakesTheNodeOfARankAShrinkDropped) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 4);
  GangRequest gang = Gang("ns/e", 0, 8, kLayer3);
  gang.elastic = ElasticRange{2, 4, 1};
  ASSERT_OK_AND_ASSIGN(PlacementResult placed, snapshot.Reserve(gang));
  ASSERT_THAT(placed.placement.nodes, ElementsAre("x0", "x1", "x2", "x3"));
  for (int r = 0; r < 4; ++r) {
    ASSERT_OK(snapshot.AddPod(
        {absl::StrCat("ns/e-", r), absl::StrCat("x", r), {{"nvidia.com/gpu", 8}}, "ns/e", r}));
  }
  SetReady(snapshot, "x1", false);
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot.ReplaceNodes("ns/e", {"x1"}));
  EXPECT_FALSE(r.placed);                          // the block is full
  ASSERT_OK(snapshot.Resize("ns/e", 3).status());  // drops rank 3; its pod still runs on x3
  ASSERT_OK_AND_ASSIGN(r, snapshot.ReplaceNodes("ns/e", {"x1"}));
  ASSERT_TRUE(r.placed) << r.explanation.summary;
  EXPECT_THAT(r.placement.nodes, ElementsAre("x0", "x3", "x2"));
  EXPECT_OK(snapshot.CheckConsistency());
  // Once the dropped and the moved pods are gone, the new rank 1 takes its slot on x3.
  ASSERT_OK(snapshot.RemovePod("ns/e-3"));
  ASSERT_OK(snapshot.RemovePod("ns/e-1"));
  ASSERT_OK(snapshot.AddPod({"ns/e-1", "x3", {{"nvidia.com/gpu", 8}}, "ns/e", 1}));
  EXPECT_EQ(snapshot.FindReservation("ns/e")->ranks[1].pod, "ns/e-1");
  EXPECT_EQ(snapshot.nodes()[snapshot.FindNode("x3")].used[kGpuIndex], 8);
  EXPECT_OK(snapshot.CheckConsistency());
}

// gb200: 4-GPU nodes, groups of 2 ranks per NVLink clique.
TEST(NodeReplacementTest, ARankStaysInItsGroupsCliqueAndAWholeGroupMovesTogether) {
  ClusterSnapshot snapshot(Gb200());
  AddNodes(snapshot, {"a", "b", "c", "k1"}, "p", 3, 4);
  AddNodes(snapshot, {"a", "b", "c", "k2"}, "q", 2, 4);
  AddNodes(snapshot, {"a", "b", "c", "k3"}, "r", 2, 4);
  GangRequest gang = Gang("ns/g", 4, 4, kLayer3);
  gang.group_size = 2;
  gang.group_level = kClique;
  ASSERT_OK_AND_ASSIGN(PlacementResult placed, snapshot.Reserve(gang));
  ASSERT_TRUE(placed.placed);
  ASSERT_THAT(placed.placement.nodes, ElementsAre("q0", "q1", "r0", "r1"));
  // Rank 1 fails: its group keeps rank 0 in k2, which has no spare; k1 has room but is another
  // clique, so the group constraint says no.
  SetReady(snapshot, "q1", false);
  ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot.ReplaceNodes("ns/g", {"q1"}));
  EXPECT_FALSE(r.placed);
  EXPECT_THAT(r.explanation.summary,
              HasSubstr("must stay in " + kClique + "=k2 with the rest of its group of 2"));
  // Both ranks of the second group fail: the group moves whole into k1.
  SetReady(snapshot, "r0", false);
  SetReady(snapshot, "r1", false);
  ASSERT_OK_AND_ASSIGN(r, snapshot.ReplaceNodes("ns/g", {"r0", "r1"}));
  ASSERT_TRUE(r.placed) << r.explanation.summary;
  EXPECT_EQ(r.placement.nodes[0], "q0");
  EXPECT_EQ(r.placement.nodes[1], "q1");
  EXPECT_EQ(LabelOf(snapshot, r.placement.nodes[2], kClique), "k1");
  EXPECT_EQ(LabelOf(snapshot, r.placement.nodes[3], kClique), "k1");
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(NodeReplacementTest, Errors) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 2);
  EXPECT_THAT(snapshot.ReplaceNodes("ns/none", {"x0"}), StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK(snapshot.Reserve(Gang("ns/j", 1, 8)).status());
  EXPECT_THAT(snapshot.ReplaceNodes("ns/j", {}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(snapshot.ReplaceNodes("ns/j", {"x0", ""}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nodes[1]")));
}

}  // namespace
}  // namespace phalanx::placement
