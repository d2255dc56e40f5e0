// Place(): tightest domain, best fit, packing, rank order, groups, node rules, explanations.
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace ::phalanx::placement::testing;  // NOLINT

TEST(PlaceTest, PicksTheTightestLevelThatHoldsTheGang) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "c1-", 2);
  AddNodes(snapshot, {"a", "b", "c2"}, "c2-", 4);
  AddNodes(snapshot, {"a", "e", "c3"}, "c3-", 3);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(Gang("ns/j", 3, 8)));
  ASSERT_TRUE(result.placed);
  // c2 (4 free) and c3 (3 free) both hold 3; c3 is the exact fit.
  EXPECT_EQ(result.placement.domain.ToString(), kLayer3 + "=c3");
  EXPECT_THAT(result.placement.nodes, ElementsAre("c3-0", "c3-1", "c3-2"));
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(Gang("ns/j", 6, 8)));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(result.placement.domain.ToString(), kLayer2 + "=b");
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(Gang("ns/j", 8, 8)));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(result.placement.domain.ToString(), kLayer1 + "=a");
  ASSERT_OK(snapshot.AddNode(GpuNode(snapshot.topology(), "far", {"z"})));
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(Gang("ns/j", 10, 8)));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(result.placement.domain.ToString(), "cluster");
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(Gang("ns/j", 2, 4)));
  ASSERT_TRUE(result.placed);  // two 4-GPU pods fit on one node
  EXPECT_EQ(result.placement.domain.level, kHostname);
  EXPECT_EQ(Distinct(result.placement.nodes).size(), 1u);
}

// A tiny greedy placer as other schedulers do it: the first domain (in label order) that holds
// the gang, the first nodes in name order, no backtracking.
class FirstFit {
 public:
  void AddNode(const std::string& domain, const std::string& node, int64_t free) {
    nodes_[domain].push_back({node, free});
  }
  bool Place(int count, int64_t gpus) {
    for (auto& [domain, nodes] : nodes_) {
      int fit = 0;
      for (const auto& n : nodes) fit += static_cast<int>(n.second / gpus);
      if (fit < count) continue;
      int left = count;
      for (auto& n : nodes) {
        while (left > 0 && n.second >= gpus) {
          n.second -= gpus;
          --left;
        }
      }
      return true;
    }
    return false;
  }

 private:
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> nodes_;
};

TEST(PlaceTest, BeatsGreedyFirstFitOnADomainFragmentationTrap) {
  // nn-1 has 8 free nodes, nn-2 has 4. A 4-node job arrives, then an 8-node job, each needing
  // one layer-3 domain. First-fit puts the 4-node job into nn-1 and strands the 8-node job.
  FirstFit greedy;
  ClusterSnapshot snapshot(Eks());
  for (const auto& [domain, count] : {std::pair<std::string, int>{"nn-1", 8}, {"nn-2", 4}}) {
    for (const std::string& node : AddNodes(snapshot, {"a", "b", domain}, domain + "-", count)) {
      greedy.AddNode(domain, node, 8);
    }
  }
  EXPECT_TRUE(greedy.Place(4, 8));
  EXPECT_FALSE(greedy.Place(8, 8)) << "the trap should catch first-fit";

  ASSERT_OK_AND_ASSIGN(PlacementResult small, snapshot.Reserve(Gang("ns/small", 4, 8, kLayer3)));
  ASSERT_TRUE(small.placed);
  EXPECT_EQ(small.placement.domain.ToString(), kLayer3 + "=nn-2");
  ASSERT_OK_AND_ASSIGN(PlacementResult big, snapshot.Reserve(Gang("ns/big", 8, 8, kLayer3)));
  ASSERT_TRUE(big.placed) << big.explanation.summary;
  EXPECT_EQ(big.placement.domain.ToString(), kLayer3 + "=nn-1");
}

TEST(PlaceTest, BeatsGreedyFirstFitOnANodeFragmentationTrap) {
  // n0 is empty, n1 has 4 GPUs left. A 4-GPU pod then an 8-GPU pod: first-fit puts the small
  // pod on n0 and the big one no longer fits anywhere; packing fullest-first keeps n0 whole.
  FirstFit greedy;
  greedy.AddNode("c", "n0", 8);
  greedy.AddNode("c", "n1", 4);
  EXPECT_TRUE(greedy.Place(1, 4));
  EXPECT_FALSE(greedy.Place(1, 8));

  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  Occupy(snapshot, "n1", 4);
  ASSERT_OK_AND_ASSIGN(PlacementResult small, snapshot.Reserve(Gang("ns/small", 1, 4)));
  EXPECT_THAT(small.placement.nodes, ElementsAre("n1"));
  ASSERT_OK_AND_ASSIGN(PlacementResult big, snapshot.Reserve(Gang("ns/big", 1, 8)));
  EXPECT_THAT(big.placement.nodes, ElementsAre("n0"));
}

TEST(PlaceTest, PacksPartlyUsedNodesFirstAndUsesFewNodes) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 4);
  Occupy(snapshot, "n2", 6);  // 2 GPUs left
  Occupy(snapshot, "n3", 4);  // 4 GPUs left
  // Three 1-GPU pods fit on one node: the fullest one that holds them (n3), not an empty one.
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(Gang("ns/j", 3, 1)));
  EXPECT_THAT(result.placement.nodes, Each("n3"));
  // Ten need two nodes (the fewest possible); of those, the fullest pair: n2 (2) + one empty
  // node (8), so the other empty node stays whole.
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(Gang("ns/j", 10, 1)));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(Distinct(result.placement.nodes), (std::set<std::string>{"n0", "n2"}));
}

TEST(PlaceTest, AmongEquallyUsefulNodesTakesTheTighterFit) {
  // Each node takes one 4-GPU pod; the pods go where they strand the fewest GPUs (n1: 4 free,
  // n3: 5 free) and leave the 6- and 8-GPU holes for bigger pods.
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 4);
  Occupy(snapshot, "n0", 2);
  Occupy(snapshot, "n1", 4);
  Occupy(snapshot, "n2", 1);
  Occupy(snapshot, "n3", 3);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(Gang("ns/j", 2, 4)));
  ASSERT_TRUE(result.placed);
  EXPECT_THAT(result.placement.nodes, ElementsAre("n1", "n3"));
}

// Equally good candidates (same capacity, same free GPUs) go to the one in fuller domains, the
// nearest enclosing domain first, so that a small gang keeps empty domains whole: block c1 (in
// layer-2 b1) is empty, block c2 (in b1) has one node busy, block c3 (in b2) has three.
TEST(PlaceTest, EquallyGoodCandidatesGoToFullerDomainsSoEmptyOnesStayWhole) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b1", "c1"}, "x", 4);
  AddNodes(snapshot, {"a", "b1", "c2"}, "y", 4);
  AddNodes(snapshot, {"a", "b2", "c3"}, "z", 4);
  Occupy(snapshot, "y0", 8);
  for (const char* node : {"z0", "z1", "z2"}) Occupy(snapshot, node, 8);
  // One 8-GPU pod: every free node fits it exactly. The first in topology order (x0) would
  // break the empty block c1; the fullest block is c3.
  ASSERT_OK_AND_ASSIGN(PlacementResult one, snapshot.Place(Gang("ns/one", 1, 8)));
  EXPECT_THAT(one.placement.nodes, ElementsAre("z3"));
  // Two pods: c1 and c2 hold them (c3 has one node free), and c2 is the fuller block.
  ASSERT_OK_AND_ASSIGN(PlacementResult two, snapshot.Place(Gang("ns/two", 2, 8)));
  EXPECT_THAT(two.placement.nodes, ElementsAre("y1", "y2"));
  // Two empty blocks alike: the one whose layer-2 domain is fuller. c4 (in b2: 5 free nodes
  // with c3's one) against c1 (in b1: 7 free nodes with c2's three).
  AddNodes(snapshot, {"a", "b2", "c4"}, "w", 4);
  ASSERT_OK_AND_ASSIGN(PlacementResult four, snapshot.Place(Gang("ns/four", 4, 8, kLayer3)));
  EXPECT_EQ(four.placement.domain.path.back(), "c4");
}

TEST(PlaceTest, RanksFollowTopologyOrderSoConsecutiveRanksShareDomains) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c2"}, "y", 3);
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 3);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(Gang("ns/j", 12, 4)));
  ASSERT_TRUE(result.placed);
  // Two pods per node; every node's ranks are adjacent and c1's ranks come before c2's.
  EXPECT_THAT(result.placement.nodes,
              ElementsAre("x0", "x0", "x1", "x1", "x2", "x2", "y0", "y0", "y1", "y1", "y2", "y2"));
}

TEST(PlaceTest, GroupsOfFourStayInsideOneNvl72Clique) {
  // gb200: 4 GPUs per node, 18 nodes per NVLink clique. Clique k1 has 10 usable nodes, k2 all 18.
  ClusterSnapshot snapshot(Gb200());
  AddNodes(snapshot, {"a", "b", "c", "k1"}, "k1-", 18, 4);
  AddNodes(snapshot, {"a", "b", "c", "k2"}, "k2-", 18, 4);
  for (int i = 0; i < 8; ++i) Occupy(snapshot, absl::StrCat("k1-", i), 4);
  GangRequest request = Gang("ns/tp", 24, 4, kLayer3);
  request.group_size = 4;
  request.group_level = kClique;
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(request));
  ASSERT_TRUE(result.placed) << result.explanation.summary;
  ASSERT_EQ(result.placement.nodes.size(), 24u);
  for (size_t g = 0; g < 24; g += 4) {
    std::string clique = LabelOf(snapshot, result.placement.nodes[g], kClique);
    for (size_t r = g; r < g + 4; ++r) {
      EXPECT_EQ(LabelOf(snapshot, result.placement.nodes[r], kClique), clique) << "rank " << r;
    }
  }
  // Without groups the same gang would have split 10 + 14 across the cliques.
  int in_k1 = 0;
  for (const std::string& node : result.placement.nodes) in_k1 += node.rfind("k1-", 0) == 0;
  EXPECT_EQ(in_k1, 8);

  // One clique holds 4 groups of 4 (16 of its 18 nodes), never 5.
  request.count = 16;
  request.required_level = kClique;
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_TRUE(result.placed);
  EXPECT_EQ(result.placement.domain.ToString(), kClique + "=k2");
  request.count = 20;
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_FALSE(result.placed);
  EXPECT_EQ(result.explanation.fit_in_best, 16);
  EXPECT_THAT(result.explanation.summary, HasSubstr("groups of 4 per nvidia.com/gpu.clique"));
}

TEST(PlaceTest, RequiredIsAHardCeilingAndPreferredMayBeExceeded) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c1"}, "x", 4);
  AddNodes(snapshot, {"a", "b", "c2"}, "y", 4);
  GangRequest request = Gang("ns/j", 6, 8, kLayer3);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(request));
  EXPECT_FALSE(result.placed);
  EXPECT_EQ(result.explanation.fit_in_best, 4);

  request.required_level = kLayer2;
  request.preferred_level = kLayer3;
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(result.placement.domain.ToString(), kLayer2 + "=b");
  // Exceeding the preferred level still spans as few layer-3 domains as possible: 4 + 2.
  EXPECT_THAT(result.placement.nodes, ElementsAre("x0", "x1", "x2", "x3", "y0", "y1"));

  // When the preferred level can be met, it is.
  request.count = 4;
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_EQ(result.placement.domain.level, kLayer3);
}

TEST(PlaceTest, SkipsUnhealthyAndUntoleratedTaintedNodes) {
  ClusterSnapshot snapshot(Eks());
  std::vector<std::string> names = AddNodes(snapshot, {"a", "b", "c"}, "n", 6);
  auto update = [&](int i, auto&& change) {
    NodeInfo node = GpuNode(snapshot.topology(), names[i], {"a", "b", "c"});
    change(node);
    ASSERT_OK(snapshot.UpdateNode(node));
  };
  update(0, [](NodeInfo& n) { n.ready = false; });
  update(1, [](NodeInfo& n) { n.unschedulable = true; });
  update(2, [](NodeInfo& n) { n.labels[std::string(kNodeHealthLabel)] = "Unschedulable"; });
  update(3, [](NodeInfo& n) { n.taints = {{"gpu-burn", "failed", "NoExecute"}}; });
  update(4, [](NodeInfo& n) { n.taints = {{"soft", "x", "PreferNoSchedule"}}; });  // ignored

  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(Gang("ns/j", 3, 8)));
  EXPECT_FALSE(result.placed);
  EXPECT_EQ(result.explanation.nodes_rejected["NotReady"], 1);
  EXPECT_EQ(result.explanation.nodes_rejected["Unschedulable"], 1);
  EXPECT_EQ(result.explanation.nodes_rejected["Unhealthy"], 1);
  EXPECT_EQ(result.explanation.nodes_rejected["Tainted"], 1);
  EXPECT_EQ(result.explanation.fit_in_best, 2);

  GangRequest tolerant = Gang("ns/j", 3, 8);
  tolerant.tolerations = {{"gpu-burn", "Equal", "failed", "NoExecute"}};
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(tolerant));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(Distinct(result.placement.nodes), (std::set<std::string>{"n3", "n4", "n5"}));
  tolerant.tolerations = {{"", "Exists", "", ""}};  // tolerates everything
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(tolerant));
  EXPECT_TRUE(result.placed);
  tolerant.tolerations = {{"gpu-burn", "Equal", "other", ""}};
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(tolerant));
  EXPECT_FALSE(result.placed);
}

TEST(PlaceTest, HonoursTheNodeSelector) {
  ClusterSnapshot snapshot(Eks());
  for (int i = 0; i < 4; ++i) {
    NodeInfo node = GpuNode(snapshot.topology(), absl::StrCat("n", i), {"a", "b", "c"});
    node.labels["node.kubernetes.io/instance-type"] = i < 2 ? "p5.48xlarge" : "p5en.48xlarge";
    ASSERT_OK(snapshot.AddNode(node));
  }
  GangRequest request = Gang("ns/j", 2, 8);
  request.node_selector = {{"node.kubernetes.io/instance-type", "p5en.48xlarge"}};
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(request));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(Distinct(result.placement.nodes), (std::set<std::string>{"n2", "n3"}));
  request.count = 3;
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_FALSE(result.placed);
  EXPECT_EQ(result.explanation.nodes_rejected["NodeSelectorMismatch"], 2);
}

TEST(PlaceTest, NodesMissingALevelLabelServeOnlyRequestsThatDoNotNeedIt) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "full", 1);
  AddNodes(snapshot, {"a", "b"}, "partial", 3);  // no layer-3 label
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(Gang("ns/j", 2, 8, kLayer3)));
  EXPECT_FALSE(result.placed);
  EXPECT_EQ(result.explanation.nodes_rejected["MissingTopologyLabel"], 3);
  // The summary says which labels count (audit 2026-11-30: it named none).
  EXPECT_THAT(result.explanation.summary,
              ::testing::HasSubstr("3 nodes MissingTopologyLabel (every label from "
                                   "topology.k8s.aws/network-node-layer-1 down to "
                                   "topology.k8s.aws/network-node-layer-3 needed)"));
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(Gang("ns/j", 4, 8, kLayer2)));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(result.placement.domain.ToString(), kLayer2 + "=b");
}

TEST(PlaceTest, ExplanationTellsNodesTooSmallFromNodesBusyNow) {
  // Audit 2026-11-30 (finding 5): a 4-GPU GB200 node for an 8-GPU pod, or a 192-CPU node for a
  // 200-CPU pod, read "Insufficient", the word for a node that is busy now.
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "small"}, "s", 2, /*gpus=*/4);
  std::vector<std::string> busy = AddNodes(snapshot, {"a", "b", "busy"}, "b", 3);
  for (const std::string& node : busy) Occupy(snapshot, node, 4);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(Gang("ns/j", 2, 8, kLayer3)));
  ASSERT_FALSE(result.placed);
  EXPECT_EQ(result.explanation.nodes_rejected["TooSmall nvidia.com/gpu"], 2);
  EXPECT_EQ(result.explanation.nodes_rejected["Insufficient nvidia.com/gpu"], 3);
  EXPECT_THAT(result.explanation.summary,
              HasSubstr("3 nodes Insufficient nvidia.com/gpu, 2 TooSmall nvidia.com/gpu"));

  GangRequest cpu = Gang("ns/c", 1, 4, kLayer3);
  cpu.per_pod["cpu"] = 200000;  // millicores; every node has 192 CPUs
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(cpu));
  ASSERT_FALSE(result.placed);
  EXPECT_EQ(result.explanation.nodes_rejected["TooSmall cpu"], 5);
  EXPECT_EQ(result.explanation.nodes_rejected.count("Insufficient cpu"), 0u);
}

TEST(PlaceTest, ExplanationNamesABestDomainOnlyAmongSelectedNodes) {
  // Audit 2026-11-30 (finding 5): with every domain fitting 0, the first in topology order was
  // named, a GB200 clique for the p5 flavor.
  ClusterSnapshot snapshot(Eks());
  for (const auto& [block, type] : {std::pair<std::string, std::string>{"gb", "gb200"},
                                    {"p5", "p5.48xlarge"}}) {
    for (int i = 0; i < 2; ++i) {
      NodeInfo node = GpuNode(snapshot.topology(), absl::StrCat(block, i), {"a", "b", block});
      node.labels["node.kubernetes.io/instance-type"] = type;
      ASSERT_OK(snapshot.AddNode(node));
    }
  }
  for (const char* node : {"p50", "p51"}) Occupy(snapshot, node, 8);
  GangRequest request = Gang("ns/j", 2, 8, kLayer3);
  request.node_selector = {{"node.kubernetes.io/instance-type", "p5.48xlarge"}};
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(request));
  ASSERT_FALSE(result.placed);
  ASSERT_TRUE(result.explanation.best_domain.has_value());
  EXPECT_EQ(result.explanation.best_domain->ToString(), kLayer3 + "=p5");
  EXPECT_THAT(result.explanation.summary, HasSubstr("the best (p5) fits 0"));

  // The same at the node level: the best node is one the selector admits.
  request.required_level = kHostname;
  request.count = 1;
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  ASSERT_FALSE(result.placed);
  ASSERT_TRUE(result.explanation.best_domain.has_value());
  EXPECT_EQ(result.explanation.best_domain->path.back(), "p50");

  // No node of that kind at all: nothing is named, and the summary says why.
  request.node_selector = {{"node.kubernetes.io/instance-type", "p6-b200.48xlarge"}};
  request.required_level = kLayer3;
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  ASSERT_FALSE(result.placed);
  EXPECT_FALSE(result.explanation.best_domain.has_value());
  EXPECT_THAT(result.explanation.summary,
              HasSubstr("no node matches its node selector and affinity; 4 nodes "
                        "NodeSelectorMismatch"));

  // Matching nodes without the required level's label: said so, nothing named.
  NodeInfo bare = GpuNode(snapshot.topology(), "bare", {"a", "b"});
  bare.labels["node.kubernetes.io/instance-type"] = "p6-b200.48xlarge";
  ASSERT_OK(snapshot.AddNode(bare));
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_FALSE(result.explanation.best_domain.has_value());
  EXPECT_THAT(result.explanation.summary,
              HasSubstr("no node matching its node selector carries " + kLayer3));
}

TEST(PlaceTest, ExplanationNamesTheBestDomainAndWhatBlocked) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-11"}, "x", 3);
  std::vector<std::string> best = AddNodes(snapshot, {"a", "b", "nn-12"}, "y", 8);
  for (int i = 0; i < 3; ++i) {
    NodeInfo node = GpuNode(snapshot.topology(), best[i], {"a", "b", "nn-12"});
    node.ready = false;
    ASSERT_OK(snapshot.UpdateNode(node));
  }
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(Gang("ns/j", 8, 8, kLayer3)));
  ASSERT_FALSE(result.placed);
  const Explanation& why = result.explanation;
  EXPECT_EQ(why.wanted, 8);
  ASSERT_TRUE(why.best_domain.has_value());
  EXPECT_EQ(why.best_domain->ToString(), kLayer3 + "=nn-12");
  EXPECT_EQ(why.fit_in_best, 5);
  EXPECT_EQ(why.summary,
            "needs 8 pods x nvidia.com/gpu=8 in one topology.k8s.aws/network-node-layer-3 "
            "domain; the best (nn-12) fits 5; 3 nodes NotReady");
}

TEST(PlaceTest, ElasticPlacesTheLargestReachableCount) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 7);
  GangRequest request = Gang("ns/e", 0, 8, kLayer3);
  request.elastic = ElasticRange{2, 10, 2};
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(request));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(result.placement.nodes.size(), 6u);  // 7 fit; 2 + 2k <= 7 -> 6
  request.elastic = ElasticRange{8, 10, 1};
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_FALSE(result.placed);
  EXPECT_EQ(result.explanation.wanted, 8);
  EXPECT_EQ(result.explanation.fit_in_best, 7);
}

TEST(PlaceTest, PlaceHoldsNothing) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  ASSERT_OK_AND_ASSIGN(PlacementResult first, snapshot.Place(Gang("ns/j", 2, 8)));
  ASSERT_OK_AND_ASSIGN(PlacementResult second, snapshot.Place(Gang("ns/k", 2, 8)));
  EXPECT_TRUE(first.placed);
  EXPECT_TRUE(second.placed);
  EXPECT_EQ(snapshot.ReservedJobs().size(), 0u);
}

}  // namespace
}  // namespace phalanx::placement
