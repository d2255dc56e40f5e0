// phalanx-operator's flags and config file: defaults, precedence, and errors that name the flag.
#include "operator/server/operator_config.h"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <vector>

#include "common/testing/status_matchers.h"
#include "gtest/gtest.h"
#include "operator/server/parallel.h"

namespace phalanx::operator_server {
namespace {

TEST(OperatorConfig, Defaults) {
  absl::StatusOr<OperatorConfig> c = ParseOperatorFlags({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->placement_address, "127.0.0.1:9443");
  EXPECT_EQ(c->health_address, "127.0.0.1:8081");
  EXPECT_TRUE(c->leader_elect);
  EXPECT_EQ(c->lease_name, "phalanx-operator");
  EXPECT_EQ(c->workers, 2);
  EXPECT_EQ(c->write_concurrency, 8);
  EXPECT_EQ(c->admission_write_concurrency, 32);
  EXPECT_EQ(c->event_writers, 4);
  EXPECT_FALSE(c->allow_job_priority);  // priorities only from PriorityClasses
  EXPECT_TRUE(c->template_dry_run);
  EXPECT_EQ(c->admission_writes_first_ms, 5000);
}

TEST(OperatorConfig, FlagsBothSpellings) {
  absl::StatusOr<OperatorConfig> c =
      ParseOperatorFlags({"--placement-address=10.0.0.1:9443", "--leader-elect", "false",
                          "--workers", "4", "--lease-namespace=phalanx-system",
                          "--fair-sharing=true", "--write-concurrency", "16",
                          "--admission-write-concurrency=64",
                          "--event-writers=0", "--admission-writes-first-ms", "3000",
                          "--allow-job-priority", "true", "--template-dry-run=false"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->placement_address, "10.0.0.1:9443");
  EXPECT_FALSE(c->leader_elect);
  EXPECT_EQ(c->workers, 4);
  EXPECT_EQ(c->lease_namespace, "phalanx-system");
  EXPECT_TRUE(c->fair_sharing);
  EXPECT_TRUE(c->allow_job_priority);
  EXPECT_FALSE(c->template_dry_run);
  EXPECT_EQ(c->write_concurrency, 16);
  EXPECT_EQ(c->admission_write_concurrency, 64);
  EXPECT_EQ(c->event_writers, 0);
  EXPECT_EQ(c->admission_writes_first_ms, 3000);
}

TEST(OperatorConfig, FileThenFlags) {
  const std::string path = ::testing::TempDir() + "/operator.yaml";
  std::ofstream(path) << "placementAddress: 10.0.0.2:9443\nminCycleIntervalMs: 50\nworkers: 3\n";
  absl::StatusOr<OperatorConfig> c = ParseOperatorFlags({"--workers", "5", "--config", path});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->placement_address, "10.0.0.2:9443");
  EXPECT_EQ(c->min_cycle_interval_ms, 50);
  EXPECT_EQ(c->workers, 5);  // the flag wins wherever it stands
  std::remove(path.c_str());
}

TEST(OperatorConfig, ErrorsNameTheFlag) {
  EXPECT_NE(ParseOperatorFlags({"--no-such-flag=1"}).status().message().find("--no-such-flag"),
            std::string::npos);
  EXPECT_NE(ParseOperatorFlags({"--leader-elect=maybe"}).status().message().find("leaderElect"),
            std::string::npos);
  EXPECT_NE(ParseOperatorFlags({"--placement-address=nowhere"}).status().message().find(
                "placementAddress"),
            std::string::npos);
  EXPECT_NE(ParseOperatorFlags({"--workers=0"}).status().message().find("workers"),
            std::string::npos);
  EXPECT_NE(ParseOperatorFlags({"--write-concurrency=65"}).status().message().find(
                "writeConcurrency"),
            std::string::npos);
  EXPECT_NE(ParseOperatorFlags({"--admission-writes-first-ms=-1"}).status().message().find(
                "admissionWritesFirstMs"),
            std::string::npos);
}

TEST(OperatorConfig, HelpListsEveryFlag) {
  absl::StatusOr<OperatorConfig> c = ParseOperatorFlags({"--help"});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->show_help);
  for (const char* flag : {"--kubeconfig",
                           "--context",
                           "--placement-address",
                           "--health-address",
                           "--leader-elect",
                           "--lease-namespace",
                           "--lease-name",
                           "--identity",
                           "--log-level",
                           "--workers",
                           "--min-cycle-interval-ms",
                           "--sync-timeout-seconds",
                           "--placement-deadline-ms",
                           "--fair-sharing",
                           "--not-ready-grace-seconds",
                           "--http-read-timeout-seconds",
                           "--http-max-connections",
                           "--write-concurrency",
                           "--admission-write-concurrency",
                           "--event-writers",
                           "--allow-job-priority",
                           "--pods-ready-timeout-seconds",
                           "--requeuing-backoff-base-seconds",
                           "--requeuing-backoff-max-seconds",
                           "--requeuing-backoff-limit-count",
                           "--queue-status-pending-jobs"}) {
    EXPECT_NE(OperatorUsage().find(flag), std::string::npos) << flag;
  }
}

TEST(OperatorConfig, QueueStatusPendingJobsHasADefaultAndBounds) {
  ASSERT_OK_AND_ASSIGN(OperatorConfig c, ParseOperatorFlags({}));
  EXPECT_EQ(c.queue_status_pending_jobs, 10);
  ASSERT_OK_AND_ASSIGN(c, ParseOperatorFlags({"--queue-status-pending-jobs=0"}));
  EXPECT_EQ(c.queue_status_pending_jobs, 0);
  EXPECT_NE(ParseOperatorFlags({"--queue-status-pending-jobs=101"})
                .status()
                .message()
                .find("queueStatusPendingJobs"),
            std::string::npos);
}

TEST(OperatorConfig, HealthPortLimitsHaveDefaultsAndBounds) {
  absl::StatusOr<OperatorConfig> c = ParseOperatorFlags({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->http_read_timeout_seconds, 60);
  EXPECT_EQ(c->http_max_connections, 512);
  c = ParseOperatorFlags({"--http-read-timeout-seconds", "5", "--http-max-connections=32"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->http_read_timeout_seconds, 5);
  EXPECT_EQ(c->http_max_connections, 32);
  EXPECT_FALSE(ParseOperatorFlags({"--http-read-timeout-seconds", "0"}).ok());
  EXPECT_FALSE(ParseOperatorFlags({"--http-max-connections", "-1"}).ok());
}

// Kueue's waitForPodsReady: off unless asked for, Kueue's backoff defaults, no limit.
TEST(OperatorConfig, PodsReadyIsOffByDefaultWithKueuesBackoff) {
  absl::StatusOr<OperatorConfig> c = ParseOperatorFlags({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->pods_ready_timeout_seconds, 0);
  EXPECT_EQ(c->requeuing_backoff_base_seconds, 60);
  EXPECT_EQ(c->requeuing_backoff_max_seconds, 3600);
  EXPECT_EQ(c->requeuing_backoff_limit_count, -1);
  c = ParseOperatorFlags({"--pods-ready-timeout-seconds=300", "--requeuing-backoff-limit-count",
                          "3"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pods_ready_timeout_seconds, 300);
  EXPECT_EQ(c->requeuing_backoff_limit_count, 3);
  EXPECT_FALSE(ParseOperatorFlags({"--pods-ready-timeout-seconds", "-1"}).ok());
  EXPECT_FALSE(ParseOperatorFlags({"--requeuing-backoff-base-seconds", "0"}).ok());
}

TEST(ParallelFor, RunsEveryIndexOnce) {
  for (int concurrency : {1, 3, 8, 64}) {
    std::vector<std::atomic<int>> runs(100);
    ParallelFor(runs.size(), concurrency, [&](size_t i) { runs[i].fetch_add(1); });
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << concurrency << " " << i;
  }
  std::vector<size_t> order;  // one thread: in order, on the caller's thread
  ParallelFor(5, 1, [&](size_t i) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
  ParallelFor(0, 8, [&](size_t) { ADD_FAILURE() << "called for n = 0"; });
}

}  // namespace
}  // namespace phalanx::operator_server
