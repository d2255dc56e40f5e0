// The snapshot's capacity series as a scrape shows them: GPUs per topology domain (blocks, never
// nodes) and nodes that left Schedulable, by reason.
#include "scheduler/server/snapshot_metrics.h"

#include <string>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::scheduler {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace ::phalanx::placement::testing;  // NOLINT: the test cluster vocabulary

// a/b/nn-1: n0..n3, a/b/nn-2: m0..m1 (8 GPUs each).
class SnapshotMetricsTest : public ::testing::Test {
 protected:
  SnapshotMetricsTest() : snapshot_(Eks()) {
    AddNodes(snapshot_, {"a", "b", "nn-1"}, "n", 4);
    AddNodes(snapshot_, {"a", "b", "nn-2"}, "m", 2);
    AddSnapshotMetrics(registry_, [this] {
      ++summaries_;
      return placement::Summarize(snapshot_, kSnapshotMetricsSummary);
    });
  }

  void Change(const std::string& name, const std::function<void(placement::NodeInfo&)>& edit) {
    placement::NodeInfo node = snapshot_.nodes()[snapshot_.FindNode(name)].info;
    edit(node);
    ASSERT_OK(snapshot_.UpdateNode(node));
  }

  placement::ClusterSnapshot snapshot_;
  metrics::Registry registry_;
  int summaries_ = 0;
};

// Each summary walks the whole snapshot under its read lock: the three families of a scrape
// share one.
TEST_F(SnapshotMetricsTest, OneSummaryPerScrape) {
  const std::string text = registry_.Render();
  EXPECT_THAT(text, HasSubstr("phalanx_domain_allocatable_gpus{"));
  EXPECT_THAT(text, HasSubstr("phalanx_unschedulable_nodes{"));
  EXPECT_EQ(summaries_, 1);
  (void)registry_.Render();
  EXPECT_EQ(summaries_, 2);
}

TEST_F(SnapshotMetricsTest, GpusPerDomainCountBoundPodsAndReservationsNeverSingleNodes) {
  Occupy(snapshot_, "m0", 3);                                        // a bound pod
  ASSERT_OK(snapshot_.Reserve(Gang("ns/job", 2, 8, kLayer3)).status());  // 16 reserved
  const std::string text = registry_.Render();

  EXPECT_THAT(text, HasSubstr("phalanx_domain_allocatable_gpus{level=\"cluster\",domain=\"cluster\"} 48\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_domain_allocatable_gpus{level=\"" + kLayer3 +
                              "\",domain=\"nn-1\"} 32\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_domain_allocatable_gpus{level=\"" + kLayer3 +
                              "\",domain=\"nn-2\"} 16\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_domain_allocatable_gpus{level=\"" + kLayer1 +
                              "\",domain=\"a\"} 48\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_domain_allocated_gpus{level=\"cluster\",domain=\"cluster\"} 19\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_domain_allocated_gpus{level=\"" + kLayer2 +
                              "\",domain=\"b\"} 19\n"));
  // Bounded cardinality: no hostname series, whatever the number of nodes.
  EXPECT_THAT(text, Not(HasSubstr(kHostname)));
  EXPECT_THAT(text, Not(HasSubstr("domain=\"n0\"")));
}

TEST_F(SnapshotMetricsTest, NodesLeavingSchedulableAreCountedByReasonFromZero) {
  const std::string before = registry_.Render();
  EXPECT_THAT(before, HasSubstr("phalanx_unschedulable_nodes{reason=\"NotReady\"} 0\n"));
  EXPECT_THAT(before, HasSubstr("phalanx_unschedulable_nodes{reason=\"Unhealthy\"} 0\n"));
  EXPECT_THAT(before, HasSubstr("phalanx_unschedulable_nodes{reason=\"Unschedulable\"} 0\n"));

  Change("n0", [](placement::NodeInfo& n) { n.ready = false; });
  Change("n1", [](placement::NodeInfo& n) { n.ready = false; });
  Change("n2", [](placement::NodeInfo& n) { n.unschedulable = true; });
  Change("m0", [](placement::NodeInfo& n) {
    n.labels[std::string(placement::kNodeHealthLabel)] = "UnschedulablePendingReplacement";
  });
  const std::string after = registry_.Render();
  EXPECT_THAT(after, HasSubstr("phalanx_unschedulable_nodes{reason=\"NotReady\"} 2\n"));
  EXPECT_THAT(after, HasSubstr("phalanx_unschedulable_nodes{reason=\"Unhealthy\"} 1\n"));
  EXPECT_THAT(after, HasSubstr("phalanx_unschedulable_nodes{reason=\"Unschedulable\"} 1\n"));
  // Their GPUs leave the domains' allocatable: only m1 and n3 are left.
  EXPECT_THAT(after, HasSubstr("phalanx_domain_allocatable_gpus{level=\"cluster\",domain=\"cluster\"} 16\n"));
  EXPECT_THAT(after, HasSubstr("phalanx_domain_allocatable_gpus{level=\"" + kLayer3 +
                               "\",domain=\"nn-1\"} 8\n"));
}

TEST(SnapshotMetricsSeriesTest, DomainSeriesAreCutAtTheLimitCoarsestFirst) {
  placement::ClusterSnapshot snapshot(Eks());
  for (int b = 0; b < 3; ++b) AddNodes(snapshot, {"a", "b", "nn-" + std::to_string(b)}, "n" + std::to_string(b) + "-", 1);
  placement::SnapshotSummary summary =
      placement::Summarize(snapshot, {.max_level = -1, .max_domains = 4});
  std::vector<metrics::LabelledValue> series = DomainGpuSeries(summary, false);
  ASSERT_EQ(series.size(), 4u);  // cluster, a, b, nn-0: the finest are dropped first
  EXPECT_EQ(series[0].labels, (std::vector<std::string>{"cluster", "cluster"}));
  EXPECT_EQ(series[3].labels, (std::vector<std::string>{kLayer3, "nn-0"}));
  EXPECT_EQ(series[3].value, 8);
}

}  // namespace
}  // namespace phalanx::scheduler
