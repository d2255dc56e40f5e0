#include "scheduler/cluster_snapshot.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;
using namespace ::phalanx::placement::testing;  // NOLINT

int64_t FreeGpus(const ClusterSnapshot& snapshot, const std::string& node) {
  return snapshot.NodeFree(node)->at("nvidia.com/gpu");
}

const ClusterSnapshot::Domain& Root(const ClusterSnapshot& snapshot) {
  return snapshot.domains()[0];
}

TEST(ClusterSnapshotTest, BuildsTheDomainTreeFromLabels) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "x", 2);
  AddNodes(snapshot, {"a", "b", "d"}, "y", 3);
  AddNodes(snapshot, {"a", "e"}, "z", 1);  // no layer-3 label
  EXPECT_EQ(snapshot.domains_at_level(3).size(), 2u);
  EXPECT_EQ(snapshot.domains_at_level(2).size(), 2u);
  EXPECT_EQ(Root(snapshot).schedulable_nodes, 6);
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 48);
  EXPECT_EQ(Root(snapshot).gpu_histogram[8], 6);
  const ClusterSnapshot::Node& z = snapshot.nodes()[snapshot.FindNode("z0")];
  EXPECT_EQ(z.depth, 2);
  EXPECT_EQ(snapshot.DomainIdOf(z.domain).ToString(), kLayer2 + "=e");
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ClusterSnapshotTest, PodBindAndUnbindUpdateAggregatesAlongThePath) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  ASSERT_OK(snapshot.AddPod({"ns/p", "n0", {{"nvidia.com/gpu", 3}}, "", -1}));
  EXPECT_EQ(FreeGpus(snapshot, "n0"), 5);
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 13);
  EXPECT_EQ(Root(snapshot).gpu_histogram[5], 1);
  EXPECT_EQ(snapshot.NodeFree("n0")->at("pods"), 109);  // every pod takes a pods unit
  EXPECT_OK(snapshot.CheckConsistency());
  ASSERT_OK(snapshot.RemovePod("ns/p"));
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 16);
  EXPECT_OK(snapshot.CheckConsistency());
  EXPECT_THAT(snapshot.RemovePod("ns/p"), StatusIs(absl::StatusCode::kNotFound));
}

TEST(ClusterSnapshotTest, BoundPodOfAReservedJobTakesItsSlotInsteadOfDoubleCounting) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(Gang("ns/j", 2, 8)));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 0);
  // kube-scheduler binds rank 0 where it was reserved: usage does not change.
  ASSERT_OK(snapshot.AddPod({"ns/j-0", result.placement.nodes[0], {{"nvidia.com/gpu", 8}},
                             "ns/j", 0}));
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 0);
  EXPECT_EQ(snapshot.FindReservation("ns/j")->ranks[0].pod, "ns/j-0");
  EXPECT_OK(snapshot.CheckConsistency());
  // The pod dies: the slot goes back to the reservation, not to the free pool.
  ASSERT_OK(snapshot.RemovePod("ns/j-0"));
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 0);
  EXPECT_EQ(snapshot.FindReservation("ns/j")->ranks[0].pod, "");
  // Bound again, then the job is released while the pod still runs (its owner is deleting it):
  // the room is free for the next reservation at once, and the pod's removal changes nothing.
  ASSERT_OK(snapshot.AddPod({"ns/j-0b", result.placement.nodes[0], {{"nvidia.com/gpu", 8}},
                             "ns/j", 0}));
  ASSERT_OK(snapshot.Release("ns/j"));
  EXPECT_EQ(FreeGpus(snapshot, result.placement.nodes[0]), 8);
  EXPECT_EQ(FreeGpus(snapshot, result.placement.nodes[1]), 8);
  EXPECT_OK(snapshot.CheckConsistency());
  ASSERT_OK(snapshot.RemovePod("ns/j-0b"));
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 16);
  EXPECT_OK(snapshot.CheckConsistency());
}

// A preemptor is reserved in the cycle that releases its victims, while their pods still run:
// it gets their nodes, and the victims' pods going away later neither frees nor charges
// anything twice.
TEST(ClusterSnapshotTest, APreemptorIsReservedOnItsVictimsNodesBeforeTheirPodsAreGone) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  ASSERT_OK_AND_ASSIGN(PlacementResult victim, snapshot.Reserve(Gang("ns/low", 2, 8)));
  ASSERT_TRUE(victim.placed);
  for (int r = 0; r < 2; ++r) {
    ASSERT_OK(snapshot.AddPod({absl::StrCat("ns/low-", r), victim.placement.nodes[r],
                               {{"nvidia.com/gpu", 8}}, "ns/low", r}));
  }
  ASSERT_OK_AND_ASSIGN(PlacementResult full, snapshot.Place(Gang("ns/high", 2, 8)));
  EXPECT_FALSE(full.placed);
  ASSERT_OK(snapshot.Release("ns/low"));
  ASSERT_OK_AND_ASSIGN(PlacementResult high, snapshot.Reserve(Gang("ns/high", 2, 8)));
  ASSERT_TRUE(high.placed) << high.explanation.summary;
  EXPECT_THAT(high.placement.nodes, UnorderedElementsAreArray(victim.placement.nodes));
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 0);
  EXPECT_OK(snapshot.CheckConsistency());
  ASSERT_OK(snapshot.RemovePod("ns/low-0"));
  ASSERT_OK(snapshot.RemovePod("ns/low-1"));
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 0);
  for (int r = 0; r < 2; ++r) {
    ASSERT_OK(snapshot.AddPod({absl::StrCat("ns/high-", r), high.placement.nodes[r],
                               {{"nvidia.com/gpu", 8}}, "ns/high", r}));
  }
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 0);
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ClusterSnapshotTest, PodOfAReservedJobOnAnotherNodeCountsOnItsOwn) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 3);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(Gang("ns/j", 1, 8)));
  std::string elsewhere = result.placement.nodes[0] == "n0" ? "n1" : "n0";
  ASSERT_OK(snapshot.AddPod({"ns/j-0", elsewhere, {{"nvidia.com/gpu", 8}}, "ns/j", 0}));
  // The reservation still holds its node, and the stray pod really uses its own.
  EXPECT_EQ(FreeGpus(snapshot, result.placement.nodes[0]), 0);
  EXPECT_EQ(FreeGpus(snapshot, elsewhere), 0);
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ClusterSnapshotTest, UnschedulableNodesLeaveTheAggregates) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  NodeInfo node = GpuNode(snapshot.topology(), "n0", {"a", "b", "c"});
  node.ready = false;
  ASSERT_OK(snapshot.UpdateNode(node));
  EXPECT_EQ(Root(snapshot).schedulable_nodes, 1);
  EXPECT_EQ(snapshot.nodes()[snapshot.FindNode("n0")].condition, NodeCondition::kNotReady);
  node.ready = true;
  node.labels[std::string(kNodeHealthLabel)] = "UnschedulablePendingReboot";
  ASSERT_OK(snapshot.UpdateNode(node));
  EXPECT_EQ(snapshot.nodes()[snapshot.FindNode("n0")].condition, NodeCondition::kUnhealthy);
  node.labels[std::string(kNodeHealthLabel)] = "Schedulable";
  ASSERT_OK(snapshot.UpdateNode(node));
  EXPECT_EQ(Root(snapshot).schedulable_nodes, 2);
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ClusterSnapshotTest, RelabelledNodeMovesInTheTreeWithItsUsage) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  Occupy(snapshot, "n0", 6);
  ASSERT_OK(snapshot.UpdateNode(GpuNode(snapshot.topology(), "n0", {"a", "b", "d"})));
  int d = snapshot.nodes()[snapshot.FindNode("n0")].domain;
  EXPECT_EQ(snapshot.domains()[d].value, "d");
  EXPECT_EQ(snapshot.domains()[d].free[kGpuIndex], 2);
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ClusterSnapshotTest, RemovedNodeStopsCountingAndCanComeBack) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  Occupy(snapshot, "n0", 6);
  ASSERT_OK(snapshot.RemoveNode("n0"));
  EXPECT_EQ(snapshot.FindNode("n0"), -1);
  EXPECT_EQ(Root(snapshot).free[kGpuIndex], 8);
  EXPECT_OK(snapshot.CheckConsistency());
  EXPECT_THAT(snapshot.RemoveNode("n0"), StatusIs(absl::StatusCode::kNotFound));
  // It returns with its pod still charged.
  ASSERT_OK(snapshot.AddNode(GpuNode(snapshot.topology(), "n0", {"a", "b", "c"})));
  EXPECT_EQ(FreeGpus(snapshot, "n0"), 2);
  EXPECT_OK(snapshot.CheckConsistency());
}

// The selector index and the cached selector results follow every node change: a label change
// that does not move the node in the tree, a move, a removal and a return.
TEST(ClusterSnapshotTest, LabelIndexFollowsNodeAddUpdateAndRemove) {
  const std::string kFlavor = "node.kubernetes.io/instance-type";
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 3);
  auto nodes_with = [&](const std::string& value) {
    std::vector<std::string> names;
    if (const std::vector<int>* list = snapshot.NodesWithLabel(kFlavor, value)) {
      for (int node : *list) names.push_back(snapshot.nodes()[node].info.name);
    }
    return names;
  };
  auto relabel = [&](const std::string& name, const std::vector<std::string>& path,
                     const std::string& flavor) {
    NodeInfo node = GpuNode(snapshot.topology(), name, path);
    node.labels[kFlavor] = flavor;
    return node;
  };
  GangRequest request = Gang("team/job", 1, 8);
  request.node_selector = {{kFlavor, "p5"}};
  ASSERT_OK_AND_ASSIGN(PlacementResult refused, snapshot.Place(request));
  EXPECT_FALSE(refused.placed);

  ASSERT_OK(snapshot.UpdateNode(relabel("n1", {"a", "b", "c"}, "p5")));  // stays in place
  EXPECT_THAT(nodes_with("p5"), ::testing::ElementsAre("n1"));
  EXPECT_OK(snapshot.CheckConsistency());
  ASSERT_OK_AND_ASSIGN(PlacementResult placed, snapshot.Place(request));
  EXPECT_THAT(placed.placement.nodes, ::testing::ElementsAre("n1"));

  ASSERT_OK(snapshot.AddNode(relabel("m0", {"a", "e"}, "p5")));
  ASSERT_OK(snapshot.UpdateNode(relabel("n1", {"a", "b", "d"}, "p5en")));  // moves and changes
  EXPECT_THAT(nodes_with("p5"), ::testing::ElementsAre("m0"));
  EXPECT_THAT(nodes_with("p5en"), ::testing::ElementsAre("n1"));
  EXPECT_OK(snapshot.CheckConsistency());
  ASSERT_OK_AND_ASSIGN(placed, snapshot.Place(request));
  EXPECT_THAT(placed.placement.nodes, ::testing::ElementsAre("m0"));

  ASSERT_OK(snapshot.RemoveNode("m0"));
  EXPECT_THAT(nodes_with("p5"), ::testing::IsEmpty());
  EXPECT_OK(snapshot.CheckConsistency());
  ASSERT_OK_AND_ASSIGN(refused, snapshot.Place(request));
  EXPECT_FALSE(refused.placed);
  EXPECT_EQ(refused.explanation.nodes_rejected["NodeSelectorMismatch"], 3);

  ASSERT_OK(snapshot.AddNode(relabel("m0", {"a", "e"}, "p5")));  // comes back
  EXPECT_THAT(nodes_with("p5"), ::testing::ElementsAre("m0"));
  EXPECT_OK(snapshot.CheckConsistency());
  ASSERT_OK_AND_ASSIGN(placed, snapshot.Place(request));
  EXPECT_THAT(placed.placement.nodes, ::testing::ElementsAre("m0"));
}

TEST(ClusterSnapshotTest, RejectsBadNodesAndPods) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 1);
  EXPECT_THAT(snapshot.AddNode(GpuNode(snapshot.topology(), "n0", {"a"})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("node.name (\"n0\")")));
  NodeInfo negative = GpuNode(snapshot.topology(), "m", {"a"});
  negative.allocatable["cpu"] = -1;
  EXPECT_THAT(snapshot.AddNode(negative),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("node[m].allocatable[cpu]")));
  EXPECT_THAT(snapshot.AddNode(NodeInfo{}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(snapshot.UpdateNode(GpuNode(snapshot.topology(), "ghost", {})),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(snapshot.AddPod({"ns/p", "ghost", {}, "", -1}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("pod[ns/p].node")));
  EXPECT_THAT(snapshot.AddPod({"ns/p", "n0", {{"cpu", -5}}, "", -1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pod[ns/p].requests[cpu]")));
  ASSERT_OK(snapshot.AddPod({"ns/p", "n0", {}, "", -1}));
  EXPECT_THAT(snapshot.AddPod({"ns/p", "n0", {}, "", -1}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_OK(snapshot.CheckConsistency());
}

TEST(ClusterSnapshotTest, ExtendedResourcesAreTracked) {
  ClusterSnapshot snapshot(Eks());
  NodeInfo node = GpuNode(snapshot.topology(), "n0", {"a", "b", "c"});
  node.allocatable["example.com/fpga"] = 2;
  ASSERT_OK(snapshot.AddNode(node));
  GangRequest request = Gang("ns/f", 3, 0);
  request.per_pod = {{"example.com/fpga", 1}};
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(request));
  EXPECT_FALSE(result.placed);
  EXPECT_EQ(result.explanation.nodes_rejected.size(), 0u);  // fits 2, not rejected outright
  EXPECT_EQ(result.explanation.fit_in_best, 2);
  request.count = 2;
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_TRUE(result.placed);
  request.per_pod = {{"example.com/unknown", 1}};
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_FALSE(result.placed);
  // No node advertises it: every node is too small, whatever runs on it.
  EXPECT_EQ(result.explanation.nodes_rejected["TooSmall example.com/unknown"], 1);
}

}  // namespace
}  // namespace phalanx::placement
