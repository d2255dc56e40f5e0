// phalanx-operator's metrics as a scrape shows them: the oldest pending job per queue follows
// each admission cycle and leaves no stale series behind.
#include "operator/server/operator_metrics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::operator_server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(OperatorMetricsTest, OldestPendingTimestampPerQueueIsReplacedByEachCycle) {
  metrics::Registry registry;
  OperatorMetrics m(registry);
  EXPECT_THAT(registry.Render(), Not(HasSubstr("phalanx_oldest_pending_workload_timestamp_seconds")));

  m.oldest_pending.Replace({{"team-llm", 1795460400}, {"team-vision", 1795460999}});
  std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE phalanx_oldest_pending_workload_timestamp_seconds gauge\n"));
  EXPECT_THAT(text, HasSubstr(
      "phalanx_oldest_pending_workload_timestamp_seconds{cluster_queue=\"team-llm\"} 1795460400\n"
      "phalanx_oldest_pending_workload_timestamp_seconds{cluster_queue=\"team-vision\"} 1795460999\n"));

  // team-llm's jobs were all admitted: its series goes, it does not stay at an old value.
  m.oldest_pending.Replace({{"team-vision", 1795460999}});
  text = registry.Render();
  EXPECT_THAT(text, Not(HasSubstr("team-llm")));
  EXPECT_THAT(text, HasSubstr("{cluster_queue=\"team-vision\"} 1795460999\n"));
}

TEST(OperatorMetricsTest, EveryFamilyIsRegisteredOnceUnderItsDocumentedName) {
  metrics::Registry registry;
  OperatorMetrics m(registry);
  m.pending_workloads.WithLabels({"q", "active"}).Set(2);
  m.job_restarts_total.WithLabels({"PodFailed"}).Inc();
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("phalanx_pending_workloads{cluster_queue=\"q\",status=\"active\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_job_restarts_total{reason=\"PodFailed\"} 1\n"));
  // Unlabelled families are there from the start, at zero.
  EXPECT_THAT(text, HasSubstr("phalanx_admission_cycles_total 0\n"));
}

// Series an alert takes increase() of are there at 0 before their first event, so that the
// first restart after an operator start (a failover) counts (audit 32).
TEST(OperatorMetricsTest, AlertedCountersStartAtZero) {
  metrics::Registry registry;
  OperatorMetrics m(registry);
  const std::string text = registry.Render();
  for (const char* series :
       {"phalanx_job_restarts_total{reason=\"PodFailed\"} 0\n",
        "phalanx_job_restarts_total{reason=\"NodeFailure\"} 0\n",
        "phalanx_job_restarts_total{reason=\"PodFailureIgnored\"} 0\n",
        "phalanx_resize_events_total{direction=\"shrink\"} 0\n",
        "phalanx_placement_calls_total{method=\"ReplaceNodes\"} 0\n",
        "phalanx_placement_errors_total 0\n"}) {
    EXPECT_THAT(text, HasSubstr(series));
  }
  EXPECT_STREQ(WriteResult(absl::OkStatus()), "ok");
  EXPECT_STREQ(WriteResult(absl::NotFoundError("gone")), "not_found");
  EXPECT_STREQ(WriteResult(absl::UnavailableError("down")), "error");
}

// Kueue's names and labels, so that its dashboards' queries carry over.
TEST(OperatorMetricsTest, QueueStateAndPreemptionFamiliesUseKueuesLabels) {
  metrics::Registry registry;
  OperatorMetrics m(registry);
  m.preempted_workloads_total.WithLabels({"team-a", "InCohortReclamation"}).Inc();
  m.cluster_queue_status.WithLabels({"team-a", "active"}).Set(1);
  m.borrowing_limit.WithLabels({"team-a", "p5", "nvidia.com/gpu"}).Set(16);
  m.lending_limit.WithLabels({"team-a", "p5", "nvidia.com/gpu"}).Set(8);
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("phalanx_preempted_workloads_total{"
                              "preempting_cluster_queue=\"team-a\","
                              "reason=\"InCohortReclamation\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_cluster_queue_status{cluster_queue=\"team-a\","
                              "status=\"active\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_cluster_queue_borrowing_limit{cluster_queue=\"team-a\","
                              "flavor=\"p5\",resource=\"nvidia.com/gpu\"} 16\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_cluster_queue_lending_limit{cluster_queue=\"team-a\","
                              "flavor=\"p5\",resource=\"nvidia.com/gpu\"} 8\n"));
}

}  // namespace
}  // namespace phalanx::operator_server
