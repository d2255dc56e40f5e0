#include "scheduler/snapshot_summary.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/synthetic_cluster.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace ::phalanx::placement::testing;  // NOLINT: the test cluster vocabulary

// a/b/nn-1: n0..n3, a/b/nn-2: m0..m1, a/c/nn-3: k0..k1 (8 GPUs each).
class SnapshotSummaryTest : public ::testing::Test {
 protected:
  SnapshotSummaryTest() : snapshot_(Eks()) {
    AddNodes(snapshot_, {"a", "b", "nn-1"}, "n", 4);
    AddNodes(snapshot_, {"a", "b", "nn-2"}, "m", 2);
    AddNodes(snapshot_, {"a", "c", "nn-3"}, "k", 2);
  }

  void Change(const std::string& name, const std::function<void(NodeInfo&)>& edit) {
    NodeInfo node = snapshot_.nodes()[snapshot_.FindNode(name)].info;
    edit(node);
    ASSERT_OK(snapshot_.UpdateNode(node));
  }

  ClusterSnapshot snapshot_;
};

TEST_F(SnapshotSummaryTest, CountsNodesByConditionAndGpus) {
  Change("n0", [](NodeInfo& n) { n.ready = false; });
  Change("n1", [](NodeInfo& n) { n.unschedulable = true; });
  Change("m0", [](NodeInfo& n) { n.labels[std::string(kNodeHealthLabel)] = "Unschedulable"; });
  Change("k0", [](NodeInfo& n) { n.taints = {{"example.com/maintenance", "", "NoSchedule"}}; });
  Occupy(snapshot_, "k1", 3);
  ASSERT_OK(snapshot_.Reserve(Gang("ns/job", 2, 8, kLayer3)).status());

  SnapshotSummary summary = Summarize(snapshot_);
  EXPECT_THAT(summary.levels, ElementsAre(kLayer1, kLayer2, kLayer3));
  EXPECT_EQ(summary.nodes, 8);
  EXPECT_EQ(summary.schedulable_nodes, 5);
  EXPECT_EQ(summary.nodes_by_condition, (std::map<std::string, int32_t>{{"NotReady", 1},
                                                                        {"Schedulable", 5},
                                                                        {"Unhealthy", 1},
                                                                        {"Unschedulable", 1}}));
  EXPECT_EQ(summary.tainted_nodes, 1);
  EXPECT_EQ(summary.pods, 1);
  EXPECT_EQ(summary.reservations, 1);
  EXPECT_EQ(summary.gpus, 5 * 8);
  // 3 GPUs taken by the pod on k1, 16 by the reservation.
  EXPECT_EQ(summary.free_gpus, 5 * 8 - 3 - 16);
  EXPECT_THAT(summary.reservation_list, IsEmpty());  // not asked for
}

TEST_F(SnapshotSummaryTest, ListsEachReservationRankByRankWhenAsked) {
  ASSERT_OK(snapshot_.Reserve(Gang("ns/b", 2, 8, kLayer3)).status());
  ASSERT_OK(snapshot_.Reserve(Gang("ns/a", 1, 8, kLayer3)).status());
  SnapshotSummary summary = Summarize(snapshot_, {.max_domains = 0, .reservations = true});
  ASSERT_EQ(summary.reservation_list.size(), 2u);
  EXPECT_EQ(summary.reservations, 2);
  for (const ReservationSummary& r : summary.reservation_list) {
    const ClusterSnapshot::Reservation* held = snapshot_.FindReservation(r.job);
    ASSERT_NE(held, nullptr) << r.job;
    ASSERT_EQ(r.nodes.size(), held->ranks.size());
    for (size_t rank = 0; rank < r.nodes.size(); ++rank) {
      EXPECT_EQ(r.nodes[rank], snapshot_.nodes()[held->ranks[rank].node].info.name);
    }
    EXPECT_EQ(r.domain, held->domain);
  }
  EXPECT_EQ(summary.reservation_list[0].job, "ns/a");  // sorted by job
  EXPECT_EQ(summary.reservation_list[1].nodes.size(), 2u);
}

TEST_F(SnapshotSummaryTest, ListsLiveDomainsLevelByLevelInTopologyOrder) {
  Occupy(snapshot_, "m0", 8);
  SnapshotSummary summary = Summarize(snapshot_, {.histogram = true});
  ASSERT_EQ(summary.total_domains, 7);
  ASSERT_EQ(summary.domains.size(), 7u);
  std::vector<std::string> names;
  for (const DomainSummary& d : summary.domains) names.push_back(d.domain.ToString());
  EXPECT_THAT(names, ElementsAre("cluster", kLayer1 + "=a", kLayer2 + "=b", kLayer2 + "=c",
                                 kLayer3 + "=nn-1", kLayer3 + "=nn-2", kLayer3 + "=nn-3"));

  const DomainSummary& nn2 = summary.domains[5];
  EXPECT_EQ(nn2.domain, (DomainId{kLayer3, {"a", "b", "nn-2"}}));
  EXPECT_EQ(nn2.level_index, 3);
  EXPECT_EQ(nn2.nodes, 2);
  EXPECT_EQ(nn2.schedulable_nodes, 2);
  EXPECT_EQ(nn2.gpus, 16);
  EXPECT_EQ(nn2.free_gpus, 8);
  // One node with 0 free GPUs, one with 8.
  std::vector<int32_t> histogram(kGpuBuckets, 0);
  histogram[0] = 1;
  histogram[8] = 1;
  EXPECT_EQ(nn2.free_gpu_histogram, histogram);

  const DomainSummary& b = summary.domains[2];
  EXPECT_EQ(b.level_index, 2);
  EXPECT_EQ(b.nodes, 6);
  EXPECT_EQ(b.free_gpus, 5 * 8);
  EXPECT_EQ(b.gpus, 6 * 8);
  EXPECT_EQ(summary.domains[0].nodes, 8);
  EXPECT_EQ(summary.domains[0].gpus, summary.gpus);
  EXPECT_EQ(summary.domains[0].free_gpus, summary.free_gpus);
}

TEST_F(SnapshotSummaryTest, MaxLevelAndMaxDomainsBoundTheList) {
  SnapshotSummary cluster_only = Summarize(snapshot_, {.max_level = 0});
  ASSERT_EQ(cluster_only.domains.size(), 1u);
  EXPECT_EQ(cluster_only.domains[0].domain, DomainId{});
  EXPECT_EQ(cluster_only.total_domains, 1);
  EXPECT_THAT(cluster_only.domains[0].free_gpu_histogram, IsEmpty());

  SnapshotSummary two_levels = Summarize(snapshot_, {.max_level = 2});
  EXPECT_EQ(two_levels.domains.size(), 4u);
  EXPECT_EQ(two_levels.total_domains, 4);

  SnapshotSummary cut = Summarize(snapshot_, {.max_domains = 3});
  ASSERT_EQ(cut.domains.size(), 3u);
  EXPECT_EQ(cut.total_domains, 7);
  EXPECT_EQ(cut.domains[2].domain.ToString(), kLayer2 + "=b");

  EXPECT_THAT(Summarize(snapshot_, {.max_domains = 0}).domains, IsEmpty());
  EXPECT_EQ(Summarize(snapshot_, {.max_level = 99}).domains.size(), 7u);
}

TEST_F(SnapshotSummaryTest, RemovedNodesAndTheirEmptyDomainsDisappear) {
  ASSERT_OK(snapshot_.RemoveNode("k0"));
  ASSERT_OK(snapshot_.RemoveNode("k1"));
  SnapshotSummary summary = Summarize(snapshot_);
  EXPECT_EQ(summary.nodes, 6);
  EXPECT_EQ(summary.gpus, 6 * 8);
  std::vector<std::string> names;
  for (const DomainSummary& d : summary.domains) names.push_back(d.domain.ToString());
  EXPECT_THAT(names, ElementsAre("cluster", kLayer1 + "=a", kLayer2 + "=b", kLayer3 + "=nn-1",
                                 kLayer3 + "=nn-2"));
}

TEST(SnapshotSummary, EmptyClusterHasNoDomains) {
  ClusterSnapshot snapshot(Eks());
  SnapshotSummary summary = Summarize(snapshot);
  EXPECT_EQ(summary.nodes, 0);
  EXPECT_THAT(summary.nodes_by_condition, IsEmpty());
  EXPECT_THAT(summary.domains, IsEmpty());
  EXPECT_EQ(summary.total_domains, 0);
}

// Invariant: the domains of one level are disjoint and hold every node that carries that
// level's label, so per level the listed nodes, schedulable nodes and free GPUs add up to those of
// the nodes deep enough for it (a noisy synthetic cluster: unhealthy, cordoned, missing labels).
TEST(SnapshotSummary, EachLevelAddsUpToTheNodesThatCarryIt) {
  SyntheticClusterOptions options{.nodes = 300, .nodes_per_leaf = 8, .occupancy = 0.6,
                                  .not_ready_fraction = 0.05, .cordoned_fraction = 0.05,
                                  .unhealthy_fraction = 0.05, .missing_label_fraction = 0.1,
                                  .seed = 11};
  ASSERT_OK_AND_ASSIGN(SyntheticCluster cluster, BuildSyntheticCluster(options));
  const ClusterSnapshot& snapshot = cluster.snapshot;
  SnapshotSummary summary = Summarize(snapshot, {.max_domains = 100000});
  ASSERT_EQ(summary.domains.size(), static_cast<size_t>(summary.total_domains));

  const int depth = snapshot.topology().depth();
  std::vector<int64_t> nodes(depth + 1), schedulable(depth + 1), free(depth + 1);
  for (const ClusterSnapshot::Node& node : snapshot.nodes()) {
    if (node.removed) continue;
    bool ok = node.condition == NodeCondition::kSchedulable;
    int64_t node_free = ok ? snapshot.NodeFree(node.info.name)->at("nvidia.com/gpu") : 0;
    for (int level = 0; level <= node.depth; ++level) {
      ++nodes[level];
      schedulable[level] += ok;
      free[level] += node_free;
    }
  }
  std::vector<int64_t> listed_nodes(depth + 1), listed_schedulable(depth + 1),
      listed_free(depth + 1);
  int previous_level = 0;
  for (const DomainSummary& d : summary.domains) {
    EXPECT_GE(d.level_index, previous_level) << "levels out of order";
    previous_level = d.level_index;
    EXPECT_GT(d.nodes, 0) << d.domain.ToString();
    listed_nodes[d.level_index] += d.nodes;
    listed_schedulable[d.level_index] += d.schedulable_nodes;
    listed_free[d.level_index] += d.free_gpus;
  }
  EXPECT_EQ(listed_nodes, nodes);
  EXPECT_EQ(listed_schedulable, schedulable);
  EXPECT_EQ(listed_free, free);
  EXPECT_LT(nodes[depth], nodes[0]) << "the cluster should have nodes missing labels";
  EXPECT_EQ(summary.free_gpus, free[0]);
  EXPECT_EQ(summary.nodes, nodes[0]);
}

}  // namespace
}  // namespace phalanx::placement
