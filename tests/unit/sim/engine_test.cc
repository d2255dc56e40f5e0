#include "sim/engine.h"

#include <cmath>
#include <string>
#include <vector>

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

// A policy that does what it is told, to check that the engine's checks really measure.
class ScriptedPolicy : public Policy {
 public:
  explicit ScriptedPolicy(std::vector<std::vector<int32_t>> placements)
      : placements_(std::move(placements)) {}
  std::string name() const override { return "scripted"; }
  absl::Status Init(const ClusterModel&, const std::vector<JobStatus>&) override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) override {
    std::vector<Action> actions;
    for (int32_t id : view.pending) {
      actions.push_back(Action{Action::Kind::kStart, id, placements_[id]});
    }
    return actions;
  }
  absl::Status JobFinished(int32_t) override { return absl::OkStatus(); }
  absl::Status JobInterrupted(int32_t) override { return absl::OkStatus(); }
  absl::Status NodeChanged(int32_t, bool) override { return absl::OkStatus(); }

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
      EXPECT_NEAR(out.gpu_seconds - out.restart_gpu_seconds, work, 1e-6 * work + 1e-3)
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
  ExpectConservation(jobs, result);
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

// A job that never starts (its queue has no quota) is counted as such under every policy and is
// left out of the wait, locality and JCT figures instead of reading as "waited 0 s, local".
class NeverStartedTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NeverStartedTest, JobsNeverStartedAreCountedAndLeftOutOfTheFigures) {
  ClusterSpec spec = SmallCluster(16).spec;
  QueueSpec broke;
  broke.name = "broke";
  broke.flavors.push_back(FlavorQuota{"p5", {{"nvidia.com/gpu", 0}}, std::nullopt, std::nullopt});
  spec.queues.push_back(broke);
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(spec));
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

}  // namespace
}  // namespace phalanx::sim
