#include "sim/engine.h"

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/baselines.h"
#include "sim/phalanx_policy.h"
#include "tests/unit/sim/sim_test_util.h"

namespace phalanx::sim {
namespace {

using testing::Gang;
using testing::SmallCluster;

// Test policies decide in Cycle only; the events they are told about change nothing.
class TestPolicy : public Policy {
 public:
  absl::Status Init(const ClusterModel&, const std::vector<JobStatus>&) override {
    return absl::OkStatus();
  }
  absl::Status JobFinished(int32_t) override { return absl::OkStatus(); }
  absl::Status JobInterrupted(int32_t) override { return absl::OkStatus(); }
  absl::Status NodeChanged(int32_t, bool) override { return absl::OkStatus(); }
};

// A policy that does what it is told, to check that the engine's checks really measure: each
// pending job starts on its scripted rank -> node list, or never if the list is empty.
class ScriptedPolicy : public TestPolicy {
 public:
  explicit ScriptedPolicy(std::vector<std::vector<int32_t>> placements)
      : placements_(std::move(placements)) {}
  std::string name() const override { return "scripted"; }
  absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) override {
    std::vector<Action> actions;
    for (int32_t id : view.pending) {
      if (!placements_[id].empty()) {
        actions.push_back(Action{Action::Kind::kStart, id, placements_[id]});
      }
    }
    return actions;
  }

 private:
  std::vector<std::vector<int32_t>> placements_;
};

TEST(EngineTest, ChecksCountPartialGangsAndOverCommitIndependently) {
  ClusterModel cluster = SmallCluster(16);
  std::vector<TraceJob> jobs = {Gang("a", 2, 8), Gang("b", 2, 8), Gang("c", 3, 8)};
  // a is fine; b double-books node 1 (over-commit); c starts with 2 of its 3 pods.
  ScriptedPolicy policy({{0, 1}, {1, 2}, {5, 6}});
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, jobs, {}).Run(policy));
  EXPECT_EQ(result.summary.overcommit_events, 1);
  EXPECT_EQ(result.summary.partial_gang_events, 1);
  EXPECT_EQ(result.summary.jobs_completed, 3);
  EXPECT_THAT(result.violations[0] + result.violations[1],
              ::testing::AllOf(::testing::HasSubstr("over-committed"),
                               ::testing::HasSubstr("running with 2 pods")));
}

// Pods count against a node's pods (kMaxPodsPerNode) whatever their GPUs: 111 GPU-less pods on
// one node are an over-commit the engine names, though no GPU is over-booked.
TEST(EngineTest, OverCommitCountsPodsPerNodeNotOnlyGpus) {
  ClusterModel cluster = SmallCluster(16);
  const std::vector<TraceJob> jobs = {Gang("fits", 110, 0), Gang("over", 111, 0)};
  ScriptedPolicy policy({std::vector<int32_t>(110, 0), std::vector<int32_t>(111, 1)});
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, jobs, {}).Run(policy));
  EXPECT_EQ(result.summary.overcommit_events, 1);
  ASSERT_EQ(result.violations.size(), 1u);
  EXPECT_THAT(result.violations[0], ::testing::HasSubstr("over-committed: 111 of 110 pods"));
  EXPECT_EQ(NodesNeeded(200, 0, 8), 2);  // the same rule sizes a gang (locality, comm)
}

// The topology rules, checked on the ranks the policy chose (SmallCluster: layer-3 blocks of 4
// nodes, layer-2 domains of 8).
TEST(EngineTest, ChecksCountGroupAndRequiredLevelViolationsIndependently) {
  ClusterModel cluster = SmallCluster(16);
  TraceJob fine = Gang("fine", 4, 8);  // groups {0,1} and {4,5}, each in one block; one layer-2
  fine.group_size = 2;
  fine.group_level = testing::kLayer3;
  fine.required_level = testing::kLayer2;
  TraceJob split = fine;  // its first group {2,8} spans two blocks (and two layer-2 domains)
  split.name = "split";
  split.required_level = "";
  TraceJob spread = Gang("spread", 2, 8);  // must stay in one block, placed in two
  spread.required_level = testing::kLayer3;
  TraceJob hosts = Gang("hosts", 2, 4);  // a group of 2 on one node, placed on two
  hosts.group_size = 2;
  hosts.group_level = "kubernetes.io/hostname";
  TraceJob packed = hosts;  // the same group on one node: fine
  packed.name = "packed";
  TraceJob never = Gang("never", 1, 8);  // the policy never starts it
  ScriptedPolicy policy({{0, 1, 4, 5}, {2, 8, 3, 9}, {7, 12}, {13, 14}, {15, 15}, {}});
  ASSERT_OK_AND_ASSIGN(RunResult result,
                       Engine(cluster, {fine, split, spread, hosts, packed, never}, {}).Run(policy));
  const Summary& s = result.summary;
  EXPECT_EQ(s.group_violation_events, 2);
  EXPECT_EQ(s.required_level_violation_events, 1);
  EXPECT_EQ(s.partial_gang_events, 0);
  EXPECT_EQ(s.overcommit_events, 0);
  EXPECT_EQ(s.jobs_never_started, 1);
  EXPECT_EQ(s.jobs_completed, 5);
  EXPECT_EQ(s.violations(), 3);
  EXPECT_THAT(::testing::PrintToString(result.violations),
              ::testing::AllOf(::testing::HasSubstr("split: ranks 0-1 of 4 are not a group of 2"),
                               ::testing::HasSubstr("spread: 2 ranks span more than one"),
                               ::testing::HasSubstr("hosts: ranks 0-1")));
  // Where each gang landed: the tightest domain holding its ranks.
  EXPECT_EQ(result.outcomes[0].placed_level, testing::kLayer2);
  EXPECT_EQ(result.outcomes[4].placed_level, "kubernetes.io/hostname");
  EXPECT_EQ(result.outcomes[4].first_nodes, 1);
  EXPECT_EQ(result.outcomes[1].placed_level, "topology.k8s.aws/network-node-layer-1");
}

// A resize is checked like a start: growing a grouped elastic gang by a group placed across
// blocks is a group violation.
class GrowAcrossBlocksPolicy : public TestPolicy {
 public:
  std::string name() const override { return "grow-across"; }
  absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) override {
    if (!view.pending.empty()) return std::vector<Action>{{Action::Kind::kStart, 0, {0, 1}}};
    if (!grown_ && !view.running.empty()) {
      grown_ = true;
      return std::vector<Action>{{Action::Kind::kResize, 0, {0, 1, 3, 4}}};
    }
    return std::vector<Action>{};
  }
  double NextWakeup() const override { return grown_ ? kNever : 100; }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  bool grown_ = false;
};

TEST(EngineTest, ResizesAreCheckedLikeStarts) {
  ClusterModel cluster = SmallCluster(16);
  TraceJob job = Gang("elastic", 4, 8);
  job.elastic_min = 2;
  job.elastic_max = 4;
  job.elastic_step = 2;
  job.group_size = 2;
  job.group_level = testing::kLayer3;
  GrowAcrossBlocksPolicy policy;
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, {job}, {}).Run(policy));
  EXPECT_EQ(result.summary.grows, 1);
  EXPECT_EQ(result.summary.group_violation_events, 1);  // ranks 2-3 on nodes 3 and 4
  EXPECT_EQ(result.summary.partial_gang_events, 0);
}

// Preempts "a" (started at once) for "b" when b arrives, and starts a again once b is done.
class PreemptOncePolicy : public TestPolicy {
 public:
  std::string name() const override { return "preempt-once"; }
  absl::Status JobFinished(int32_t job) override {
    b_done_ = b_done_ || job == 1;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) override {
    std::vector<Action> actions;
    for (int32_t id : view.pending) {
      if (id == 1) {
        actions.push_back(Action{Action::Kind::kEvict, 0, {}});
        actions.push_back(Action{Action::Kind::kStart, 1, {0, 1}});
      } else if (id == 0 && (!a_started_ || b_done_)) {
        a_started_ = true;
        actions.push_back(Action{Action::Kind::kStart, 0, {0, 1}});
      }
    }
    return actions;
  }

 private:
  bool a_started_ = false;
  bool b_done_ = false;
};

// Wait is submit -> first start; queued time adds every wait after a preemption, so a policy
// that starts jobs early and evicts them later does not look as if they never waited.
TEST(EngineTest, QueuedTimeCountsTheWaitAfterAPreemption) {
  ClusterModel cluster = SmallCluster(16);
  TraceJob a = Gang("a", 2, 8, 0, 3600);
  TraceJob b = Gang("b", 2, 8, 100, 600);
  PreemptOncePolicy policy;
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, {a, b}, {}).Run(policy));
  ASSERT_EQ(result.summary.jobs_completed, 2);
  EXPECT_EQ(result.outcomes[0].preemptions, 1);
  EXPECT_DOUBLE_EQ(result.outcomes[0].first_start_s, 0);
  EXPECT_DOUBLE_EQ(result.outcomes[0].queued_s, 600);  // evicted at 100, back at 700
  EXPECT_DOUBLE_EQ(result.outcomes[1].queued_s, 0);
  EXPECT_DOUBLE_EQ(result.summary.wait_p99_s, 0);
  EXPECT_DOUBLE_EQ(result.summary.queued_p99_s, 600);
  EXPECT_DOUBLE_EQ(result.summary.queued_p50_s, 0);
}

void ExpectConservation(const std::vector<TraceJob>& jobs, const RunResult& result);

// An eviction's cost: the reload, and with a checkpoint interval the work since the last
// checkpoint, run again. a runs 100 s, is evicted by b, and starts again at 700.
TEST(EngineTest, AnEvictionLosesTheWorkSinceTheLastCheckpoint) {
  ClusterModel cluster = SmallCluster(16);
  const std::vector<TraceJob> jobs = {Gang("a", 2, 8, 0, 3600), Gang("b", 2, 8, 100, 600)};
  PreemptOncePolicy kept;
  ASSERT_OK_AND_ASSIGN(RunResult without, Engine(cluster, jobs, {}).Run(kept));
  // Progress kept: 3,500 s left after the 120-s reload from 700.
  EXPECT_DOUBLE_EQ(without.outcomes[0].finish_s, 700 + 120 + 3500);
  EXPECT_DOUBLE_EQ(without.outcomes[0].lost_gpu_seconds, 0);
  EXPECT_DOUBLE_EQ(without.summary.lost_gpu_hours, 0);
  // Checkpoints every 60 s: the 40 s since the one at 60 are lost (2 pods x 8 GPUs).
  PreemptOncePolicy lost;
  ASSERT_OK_AND_ASSIGN(
      RunResult with,
      Engine(cluster, jobs, {.restart_overhead_s = 300, .checkpoint_interval_s = 60}).Run(lost));
  EXPECT_DOUBLE_EQ(with.outcomes[0].finish_s, 700 + 300 + 3540);
  EXPECT_DOUBLE_EQ(with.outcomes[0].lost_gpu_seconds, 40 * 16);
  EXPECT_DOUBLE_EQ(with.summary.lost_gpu_hours, 40.0 * 16 / 3600);
  EXPECT_DOUBLE_EQ(with.outcomes[1].lost_gpu_seconds, 0);  // never interrupted
  // Goodput leaves out the reload and the lost work, which utilization counts as busy.
  const double capacity = 128.0 * with.summary.makespan_s;
  EXPECT_NEAR(with.summary.gpu_utilization - with.summary.goodput,
              (300.0 * 16 + 40.0 * 16) / capacity, 1e-12);
  ExpectConservation(jobs, with);
}

// The horizon: a job that can never start must not stretch the run to the engine's safety stop
// (a year) while node failures keep arriving; utilization is over first submit -> last GPU
// released, and the run ends once nothing can change.
TEST(EngineTest, HorizonEndsWhenTheLastGpuIsReleased) {
  ClusterSpec spec = SmallCluster(16).spec;
  spec.failures.node_mtbf_hours = 400;  // a failure every 25 h over 16 nodes
  spec.failures.repair_hours = 1;
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(spec));
  TraceJob a = Gang("a", 2, 8, 100, 3600);
  TraceJob stuck = Gang("stuck", 1, 8, 200, 600);
  ScriptedPolicy policy({{0, 1}, {}});
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, {a, stuck}, {}).Run(policy));
  const Summary& s = result.summary;
  EXPECT_EQ(s.jobs_never_started, 1);
  EXPECT_DOUBLE_EQ(s.horizon_start_s, 100);
  EXPECT_DOUBLE_EQ(s.horizon_end_s, 3700);
  EXPECT_DOUBLE_EQ(s.makespan_s, 3600);
  EXPECT_DOUBLE_EQ(s.gpu_utilization, 16.0 / 128);
  EXPECT_LE(s.node_failures, 1);  // not a year of them
}

// Jobs the trace marked unplaceable (--allow-unplaceable) are in no per-job figure, even when a
// policy that breaks the rules runs them.
TEST(EngineTest, UnplaceableJobsAreInNoFigure) {
  ClusterModel cluster = SmallCluster(16);
  TraceJob a = Gang("a", 2, 8, 0, 3600);
  TraceJob impossible = Gang("impossible", 8, 8, 0, 600);
  impossible.required_level = testing::kLayer3;  // 8 nodes in one block of 4
  impossible.unplaceable = "needs 8 pods in one layer-3 domain";
  ScriptedPolicy policy({{0, 1}, {8, 9, 10, 11, 12, 13, 14, 15}});
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, {a, impossible}, {}).Run(policy));
  const Summary& s = result.summary;
  EXPECT_EQ(s.jobs_unplaceable, 1);
  EXPECT_EQ(s.jobs_completed, 2);
  EXPECT_EQ(s.jobs_started, 1);
  EXPECT_EQ(s.jobs_measured_completed, 1);
  EXPECT_DOUBLE_EQ(s.jct_mean_s, 3600);
  EXPECT_EQ(s.multi_node_jobs, 1);
  EXPECT_EQ(s.required_level_violation_events, 1);
}

// Conservation: every GPU-second the ledger counts belongs to a job, every job got exactly its
// work (plus restart overhead), and nothing ran before it was submitted.
void ExpectConservation(const std::vector<TraceJob>& jobs, const RunResult& result) {
  double sum = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobOutcome& out = result.outcomes[i];
    sum += out.gpu_seconds;
    if (out.first_start_s >= 0) {
      EXPECT_GE(out.first_start_s, jobs[i].submit_s) << jobs[i].name;
    }
    if (out.finish_s >= 0) {
      const double work = jobs[i].duration_s * static_cast<double>(jobs[i].gpus());
      EXPECT_NEAR(out.gpu_seconds - out.restart_gpu_seconds - out.lost_gpu_seconds, work,
                  1e-6 * work + 1e-3)
          << jobs[i].name;
      // Never faster than at full size (elastic jobs run longer when smaller).
      EXPECT_GE(out.finish_s, out.first_start_s + jobs[i].duration_s - 1e-6);
    }
  }
  EXPECT_NEAR(sum, result.busy_gpu_seconds, 1e-6 * sum + 1e-3);
}

std::vector<TraceJob> SmallTrace() {
  ClusterModel cluster = SmallCluster(16);
  std::vector<TraceJob> jobs = GenerateTrace(cluster, {.jobs = 300, .seed = 11, .load = 1.2});
  for (TraceJob& job : jobs) job.queue = "q";
  return jobs;
}

class PolicyEngineTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyEngineTest, ConservesGpuSecondsWithFailuresAndPreemption) {
  ClusterSpec spec = SmallCluster(16).spec;
  spec.failures.node_mtbf_hours = 200;  // a few failures over the trace
  spec.failures.repair_hours = 1;
  ClusterModel cluster = *BuildCluster(spec);
  const std::vector<TraceJob> jobs = SmallTrace();
  std::unique_ptr<Policy> policy =
      GetParam() == "phalanx" ? MakePhalanxPolicy() : *MakeBaseline(GetParam());
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, jobs, {.seed = 3}).Run(*policy));
  EXPECT_EQ(result.summary.jobs_completed, 300);
  EXPECT_GT(result.summary.node_failures, 0);
  EXPECT_EQ(result.summary.partial_gang_events, 0);
  EXPECT_EQ(result.summary.overcommit_events, 0);
  EXPECT_EQ(result.summary.invalid_actions, 0) << ::testing::PrintToString(result.violations);
  if (GetParam() == "phalanx") {
    // The placement core honours required levels and groups; the baselines' rules are theirs
    // (docs/baselines.md), and what they break is counted, not asserted here.
    EXPECT_EQ(result.summary.violations(), 0) << ::testing::PrintToString(result.violations);
  }
  ExpectConservation(jobs, result);
  // And with the work since the last checkpoint lost at every eviction and failure.
  std::unique_ptr<Policy> again =
      GetParam() == "phalanx" ? MakePhalanxPolicy() : *MakeBaseline(GetParam());
  ASSERT_OK_AND_ASSIGN(
      RunResult lossy,
      Engine(cluster, jobs, {.seed = 3, .checkpoint_interval_s = 1800}).Run(*again));
  EXPECT_EQ(lossy.summary.jobs_completed, 300);
  EXPECT_GT(lossy.summary.lost_gpu_hours, 0);
  ExpectConservation(jobs, lossy);
}

INSTANTIATE_TEST_SUITE_P(Policies, PolicyEngineTest,
                         ::testing::Values("phalanx", "first-fit", "kueue-tas", "volcano-hypernode",
                                           "kai-topology"));

TEST(EngineTest, ElasticJobsRunLongerWhenSmallerAndKeepTheirWork) {
  ClusterModel cluster = SmallCluster(4);  // 4 nodes
  TraceJob big = Gang("big", 3, 8, 0, 1000);
  TraceJob elastic = Gang("elastic", 4, 8, 0, 1000);
  elastic.elastic_min = 1;
  elastic.elastic_max = 4;
  std::unique_ptr<Policy> policy = MakePhalanxPolicy();
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, {big, elastic}, {}).Run(*policy));
  ExpectConservation({big, elastic}, result);
  EXPECT_EQ(result.summary.partial_gang_events, 0);
  // Started with the one free node, so it took longer than its 1000 s at full size.
  EXPECT_GT(result.outcomes[1].finish_s - result.outcomes[1].first_start_s, 1000);
  // When `big` finished, the admission cycle grew it back (nothing else was waiting), so it did
  // not need the 4000 s the remaining work takes on one node.
  EXPECT_EQ(result.summary.grows, 1);
  EXPECT_LT(result.outcomes[1].finish_s, 4000);
}

// Backfill plans with time limits, not run times (--time-limit-factor): with exact limits a
// 2-node job whose limit would end 10 s after the blocked 4-node gang's expected start waits;
// with limits twice the run times it is backfilled, and the gang starts 10 s late because the
// job really ran past the gang's estimated start (which came from a doubled limit too).
TEST(EngineTest, BackfillPlansWithTimeLimitsNotRunTimes) {
  // One layer-3 block of 4 nodes, quota beyond it: the gang waits for nodes, not quota.
  ClusterSpec spec = SmallCluster(4).spec;
  spec.queues[0].flavors[0] =
      FlavorQuota{"p5", {{"nvidia.com/gpu", 1024}}, std::nullopt, std::nullopt};
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(spec));
  TraceJob a = Gang("a", 2, 8, 0, 1000);
  TraceJob gang = Gang("gang", 4, 8, 10, 1000);
  TraceJob c = Gang("c", 2, 8, 20, 990);
  for (double factor : {1.0, 2.0}) {
    PhalanxPolicyOptions options;
    options.time_limit_factor = factor;
    std::unique_ptr<Policy> policy = MakePhalanxPolicy(options);
    ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, {a, gang, c}, {}).Run(*policy));
    ExpectConservation({a, gang, c}, result);
    if (factor == 1.0) {
      EXPECT_EQ(result.outcomes[1].first_start_s, 1000);  // when a ends
      EXPECT_EQ(result.outcomes[2].first_start_s, 2000);  // after the gang
    } else {
      EXPECT_EQ(result.outcomes[2].first_start_s, 20);    // limit 1980 s: ends by 2000
      EXPECT_EQ(result.outcomes[1].first_start_s, 1010);  // when c really ends
    }
  }
}

// A job that never starts (its queue has no quota) is counted as such under every policy and is
// left out of the wait, locality and JCT figures instead of reading as "waited 0 s, local".
class NeverStartedTest : public ::testing::TestWithParam<std::string> {
 protected:
  // SmallCluster(16) and a queue "broke" without GPU quota.
  static ClusterSpec SpecWithABrokeQueue() {
    ClusterSpec spec = SmallCluster(16).spec;
    QueueSpec broke;
    broke.name = "broke";
    broke.flavors.push_back(
        FlavorQuota{"p5", {{"nvidia.com/gpu", 0}}, std::nullopt, std::nullopt});
    spec.queues.push_back(broke);
    return spec;
  }
};

TEST_P(NeverStartedTest, JobsNeverStartedAreCountedAndLeftOutOfTheFigures) {
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(SpecWithABrokeQueue()));
  TraceJob a = Gang("a", 2, 8, 0, 3600);
  a.required_level = testing::kLayer3;
  TraceJob stuck = Gang("stuck", 2, 8, 10, 3600);
  stuck.queue = "broke";
  stuck.required_level = testing::kLayer3;
  TraceJob c = Gang("c", 1, 8, 100, 600);
  std::unique_ptr<Policy> policy =
      GetParam() == "phalanx" ? MakePhalanxPolicy() : *MakeBaseline(GetParam());
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, {a, stuck, c}, {}).Run(*policy));
  const Summary& s = result.summary;
  EXPECT_EQ(s.jobs_never_started, 1);
  EXPECT_EQ(s.jobs_started, 2);
  EXPECT_EQ(s.jobs_completed, 2);
  EXPECT_EQ(s.locality_jobs, 1);  // a only: the stuck gang has no placement to judge
  EXPECT_LT(s.wait_p99_s, 60);
  EXPECT_NEAR(s.jct_mean_s, (3600 + 600) / 2.0, 30);
}

// A job that never starts says why, in the policy's words (--jobs-out's pending_reason): for
// Phalanx the admission core's last pending message, for the baselines what their books and
// placement rule say as the run ended. Jobs that started have no reason.
TEST_P(NeverStartedTest, JobsNeverStartedSayWhyTheyWait) {
  ClusterSpec spec = SpecWithABrokeQueue();
  QueueSpec strict = spec.queues.back();
  strict.name = "strict";
  strict.queueing_strategy = "StrictFIFO";
  strict.flavors[0].nominal["nvidia.com/gpu"] = 64;
  spec.queues.push_back(strict);
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(spec));
  TraceJob a = Gang("a", 2, 8, 0, 600);
  TraceJob poor = Gang("poor", 2, 8, 10, 600);
  poor.queue = "broke";
  // Quota holds it, but 5 pods never fit one 4-node layer-3 block.
  TraceJob wide = Gang("wide", 5, 8, 20, 600);
  wide.queue = "strict";
  wide.required_level = testing::kLayer3;
  TraceJob behind = Gang("behind", 1, 8, 30, 600);
  behind.queue = "strict";
  const std::vector<TraceJob> jobs = {a, poor, wide, behind};
  std::unique_ptr<Policy> policy =
      GetParam() == "phalanx" ? MakePhalanxPolicy() : *MakeBaseline(GetParam());
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, jobs, {}).Run(*policy));
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobOutcome& o = result.outcomes[i];
    EXPECT_EQ(o.first_start_s < 0, !o.pending_reason.empty())
        << jobs[i].name << ": " << o.pending_reason;
  }
  const std::string& poor_reason = result.outcomes[1].pending_reason;
  const std::string& wide_reason = result.outcomes[2].pending_reason;
  const std::string& behind_reason = result.outcomes[3].pending_reason;
  if (GetParam() == "phalanx") {
    EXPECT_THAT(poor_reason, ::testing::StartsWith("InsufficientQuota: "));
    EXPECT_THAT(wide_reason, ::testing::StartsWith("CannotBePlaced: "));
    EXPECT_THAT(behind_reason, ::testing::StartsWith("BlockedByStrictFIFO: queued behind "
                                                     "strict/wide"));
  } else {
    EXPECT_EQ(poor_reason,
              "queue broke could not hold its 16 GPUs in node group p5, when the run ended");
  }
  if (GetParam() == "first-fit") {
    // Kueue without TAS admits by quota alone; kube-scheduler then holds what fits at Permit.
    EXPECT_THAT(wide_reason, ::testing::MatchesRegex("admitted by quota: 5 pods in node group "
                                                     "p5, of which [0-4] held a node at Permit "
                                                     "when the run ended"));
    EXPECT_EQ(result.outcomes[3].first_start_s, 30);  // its head was admitted
  } else if (GetParam() != "phalanx") {
    EXPECT_EQ(wide_reason, GetParam() + " found no placement for its 5 pods in node group p5, "
                                        "where its quota could hold them, when the run ended");
    EXPECT_EQ(behind_reason,
              "behind wide, the head of StrictFIFO queue strict, when the run ended");
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, NeverStartedTest,
                         ::testing::Values("phalanx", "first-fit", "kueue-tas", "volcano-hypernode",
                                           "kai-topology"));

// A gang that prefers one layer-3 block waits the ClusterQueue's locality wait (300 s by
// default) for one, then starts across blocks: the policy asks for a cycle when the wait ends,
// since nothing else happens until the blocks' jobs finish at 10,000 s.
TEST(EngineTest, LocalityWaitEndsWithItsOwnCycle) {
  ClusterModel cluster = SmallCluster(16);  // 4 blocks of 4 nodes
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 4; ++i) {
    TraceJob fill = Gang("fill" + std::to_string(i), 3, 8, 0, 10000);
    fill.required_level = testing::kLayer3;
    jobs.push_back(fill);
  }
  TraceJob gang = Gang("gang", 2, 8, 10, 1000);
  gang.required_level = testing::kLayer2;
  gang.preferred_level = testing::kLayer3;
  jobs.push_back(gang);
  std::unique_ptr<Policy> policy = MakePhalanxPolicy();
  ASSERT_OK_AND_ASSIGN(RunResult result, Engine(cluster, jobs, {}).Run(*policy));
  EXPECT_EQ(result.summary.partial_gang_events, 0);
  const JobOutcome& out = result.outcomes[4];
  EXPECT_GE(out.first_start_s, 10 + 300);
  EXPECT_LT(out.first_start_s, 10 + 300 + 60);
  EXPECT_TRUE(out.locality_applicable);
  EXPECT_FALSE(out.locality_ok);  // one free node per block: across two blocks of a layer-2
}

// A policy that wakes itself once a day and, in every cycle with nothing running, starts the
// first pending job for which `starts` says so (by the count of such cycles so far). Its
// RestState is `states(count)`, or nullopt when that is empty.
class TickingPolicy : public TestPolicy {
 public:
  TickingPolicy(std::function<bool(int, int32_t)> starts, std::function<std::string(int)> states)
      : starts_(std::move(starts)), states_(std::move(states)) {}
  std::string name() const override { return "ticking"; }
  absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) override {
    now_ = view.now;
    std::vector<Action> actions;
    if (!view.running.empty()) return actions;
    for (int32_t id : view.pending) {
      if (starts_(count_, id)) {
        actions.push_back(Action{Action::Kind::kStart, id, {static_cast<int32_t>(id % 2)}});
        break;
      }
    }
    ++count_;
    return actions;
  }
  double NextWakeup() const override { return now_ + 86400; }
  std::optional<std::string> RestState(const CycleView&) const override {
    std::string state = states_(count_);
    if (state.empty()) return std::nullopt;
    return state;
  }

 private:
  std::function<bool(int, int32_t)> starts_;
  std::function<std::string(int)> states_;
  int count_ = 0;
  double now_ = 0;
};

// A policy whose state comes back (three states in turn) and which starts nothing: the run
// ends at the first repeat, the fourth cycle, with the figures of the run to the horizon.
TEST(EngineRepeatTest, ARunWhoseStateRepeatsEndsThereWithTheSameFigures) {
  ClusterModel cluster = SmallCluster(2);
  const std::vector<TraceJob> jobs = {Gang("a", 1, 8, 0, 100)};
  RunResult runs[2];
  for (bool stop : {false, true}) {
    TickingPolicy policy([](int, int32_t) { return false; },
                         [](int count) { return absl::StrCat("state ", count % 3); });
    ASSERT_OK_AND_ASSIGN(runs[stop], Engine(cluster, jobs, {.stop_repeating = stop}).Run(policy));
  }
  EXPECT_EQ(runs[1].stopped_repeating_at, 3 * 86400);
  EXPECT_EQ(runs[1].summary.cycles, 4);  // the fourth only asked the policy for its state
  EXPECT_EQ(runs[0].stopped_repeating_at, -1);
  EXPECT_GT(runs[0].summary.cycles, 365);  // to the safety horizon, a year after the submit
  for (const RunResult& run : runs) {
    EXPECT_EQ(run.summary.jobs_never_started, 1);
    EXPECT_EQ(run.summary.horizon_end_s, 0);
  }
}

// The same state before and after a start is no repeat: the policy may have done something.
// Here every cycle looks the same to RestState, yet each starts a job that ends before the next.
TEST(EngineRepeatTest, AStartBetweenEqualStatesIsNoRepeat) {
  ClusterModel cluster = SmallCluster(2);
  const std::vector<TraceJob> jobs = {Gang("a", 1, 8, 0, 100), Gang("b", 1, 8, 0, 100),
                                      Gang("c", 1, 8, 0, 100)};
  TickingPolicy policy([](int, int32_t) { return true; }, [](int) { return "same"; });
  ASSERT_OK_AND_ASSIGN(RunResult run, Engine(cluster, jobs, {}).Run(policy));
  EXPECT_EQ(run.summary.jobs_completed, 3);
  EXPECT_EQ(run.stopped_repeating_at, -1);
}

// States that never repeat keep the run going until the policy starts its job on the tenth
// cycle; a policy that cannot tell (nullopt) runs to the safety horizon.
TEST(EngineRepeatTest, NewStatesOrNoStateKeepTheRunGoing) {
  ClusterModel cluster = SmallCluster(2);
  const std::vector<TraceJob> jobs = {Gang("a", 1, 8, 0, 100)};
  TickingPolicy late([](int count, int32_t) { return count == 10; },
                     [](int count) { return absl::StrCat(count); });
  ASSERT_OK_AND_ASSIGN(RunResult started, Engine(cluster, jobs, {}).Run(late));
  EXPECT_EQ(started.outcomes[0].first_start_s, 10 * 86400);
  EXPECT_EQ(started.summary.jobs_completed, 1);
  TickingPolicy silent([](int, int32_t) { return false; }, [](int) { return ""; });
  ASSERT_OK_AND_ASSIGN(RunResult never, Engine(cluster, jobs, {}).Run(silent));
  EXPECT_EQ(never.stopped_repeating_at, -1);
  EXPECT_GT(never.summary.cycles, 365);
}

// Starts its one job, evicts it at the next daily wakeup and never starts anything again, its
// state the same every day from then on.
class EvictOncePolicy : public TestPolicy {
 public:
  std::string name() const override { return "evict-once"; }
  absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) override {
    now_ = view.now;
    if (!started_ && !view.pending.empty()) {
      started_ = true;
      return std::vector<Action>{Action{Action::Kind::kStart, view.pending[0], {0}}};
    }
    if (!view.running.empty()) {
      evicted_ = true;
      return std::vector<Action>{Action{Action::Kind::kEvict, view.running[0], {}}};
    }
    return std::vector<Action>{};
  }
  double NextWakeup() const override { return now_ + 86400; }
  std::optional<std::string> RestState(const CycleView&) const override {
    if (!evicted_) return std::nullopt;
    return "idle";
  }

 private:
  bool started_ = false;
  bool evicted_ = false;
  double now_ = 0;
};

// What ended a run decides what its unfinished jobs were doing: the repeat check ends a run with
// nothing running, so the started job is unfinished but evicted, holding nothing (the warning
// once said "GPUs busy until the safety stop"); only the safety stop leaves a job running.
TEST(EngineRepeatTest, UnfinishedJobsAreSplitByWhatEndedTheRun) {
  ClusterModel cluster = SmallCluster(2);
  const std::vector<TraceJob> jobs = {Gang("a", 1, 8, 0, 3 * 86400)};
  EvictOncePolicy evicting;
  ASSERT_OK_AND_ASSIGN(RunResult evicted, Engine(cluster, jobs, {}).Run(evicting));
  EXPECT_EQ(evicted.summary.ended_by, "livelock");
  EXPECT_EQ(evicted.summary.jobs_unfinished, 1);
  EXPECT_EQ(evicted.summary.jobs_running_at_end, 0);
  EXPECT_FALSE(evicted.outcomes[0].running_at_end);
  EXPECT_EQ(evicted.summary.horizon_end_s, 86400);  // GPUs idle from the eviction on

  const std::vector<TraceJob> endless = {Gang("a", 1, 8, 0, 400 * 86400)};
  ScriptedPolicy starting(std::vector<std::vector<int32_t>>{{0}});
  ASSERT_OK_AND_ASSIGN(RunResult running, Engine(cluster, endless, {}).Run(starting));
  EXPECT_EQ(running.summary.ended_by, "safety_stop");
  EXPECT_EQ(running.summary.jobs_unfinished, 1);
  EXPECT_EQ(running.summary.jobs_running_at_end, 1);
  EXPECT_TRUE(running.outcomes[0].running_at_end);

  ScriptedPolicy finishing(std::vector<std::vector<int32_t>>{{0}});
  ASSERT_OK_AND_ASSIGN(RunResult done, Engine(cluster, jobs, {}).Run(finishing));
  EXPECT_EQ(done.summary.ended_by, "completed");
  ScriptedPolicy refusing(std::vector<std::vector<int32_t>>(1));
  ASSERT_OK_AND_ASSIGN(RunResult stalled, Engine(cluster, jobs, {}).Run(refusing));
  EXPECT_EQ(stalled.summary.ended_by, "stalled");
}

}  // namespace
}  // namespace phalanx::sim
