#include "sim/scenario.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::sim {
namespace {

TEST(ScenarioTest, SameSeedGivesByteIdenticalJson) {
  SimulateOptions options;
  options.nodes = 32;
  options.jobs = 400;
  options.seed = 9;
  ASSERT_OK_AND_ASSIGN(Scenario first, LoadScenario(options));
  ASSERT_OK_AND_ASSIGN(SimulationReport a, RunScenario(first, options));
  ASSERT_OK_AND_ASSIGN(Scenario second, LoadScenario(options));
  ASSERT_OK_AND_ASSIGN(SimulationReport b, RunScenario(second, options));
  EXPECT_EQ(FormatJson(a), FormatJson(b));
  options.seed = 10;
  ASSERT_OK_AND_ASSIGN(Scenario third, LoadScenario(options));
  ASSERT_OK_AND_ASSIGN(SimulationReport c, RunScenario(third, options));
  EXPECT_NE(FormatJson(a), FormatJson(c));
}

// The example files shipped for users load and run under every policy.
TEST(ScenarioTest, ShippedExamplesRun) {
  const std::string dir = std::string(PHALANX_SOURCE_DIR) + "/sim/examples/";
  for (const auto& [cluster, trace] : std::vector<std::pair<std::string, std::string>>{
           {"cluster.yaml", "trace.csv"}, {"", "trace.yaml"}}) {
    SimulateOptions options;
    if (!cluster.empty()) options.cluster_file = dir + cluster;
    options.trace_file = dir + trace;
    ASSERT_OK_AND_ASSIGN(Scenario scenario, LoadScenario(options));
    ASSERT_OK_AND_ASSIGN(SimulationReport report, RunScenario(scenario, options));
    for (const RunResult& r : report.results) {
      EXPECT_EQ(r.summary.jobs_completed, r.summary.jobs) << trace << " " << r.summary.policy;
      EXPECT_EQ(r.summary.partial_gang_events + r.summary.overcommit_events, 0) << r.summary.policy;
    }
  }
}

TEST(ScenarioTest, UnknownPolicyIsBadInput) {
  SimulateOptions options;
  options.policies = {"slurm"};
  ASSERT_OK_AND_ASSIGN(Scenario scenario, LoadScenario(options));
  EXPECT_THAT(RunScenario(scenario, options).status().message(),
              ::testing::HasSubstr("unknown policy \"slurm\""));
}

// The built-in default, every policy, as issue 5 requires: Phalanx never runs a partial gang or
// over-commits a node (counted by the engine, not the policy), finishes every job, and its gangs
// are at least as local as under every baseline (multi-node jobs inside one domain of the lowest
// level that could hold them; docs/simulator.md, "Results on the built-in scenario").
TEST(ScenarioTest, DefaultScenarioPhalanxIsSafeAndMostLocal) {
  SimulateOptions options;
  ASSERT_OK_AND_ASSIGN(Scenario scenario, LoadScenario(options));
  ASSERT_OK_AND_ASSIGN(SimulationReport report, RunScenario(scenario, options));
  ASSERT_EQ(report.results.size(), 5u);
  const Summary& phalanx = report.results[0].summary;
  ASSERT_EQ(phalanx.policy, "phalanx");
  EXPECT_EQ(phalanx.jobs_completed, 3000);
  EXPECT_EQ(phalanx.partial_gang_events, 0);
  EXPECT_EQ(phalanx.overcommit_events, 0);
  EXPECT_EQ(phalanx.invalid_actions, 0);
  for (size_t i = 1; i < report.results.size(); ++i) {
    const Summary& baseline = report.results[i].summary;
    EXPECT_EQ(baseline.jobs_completed, 3000) << baseline.policy;
    EXPECT_EQ(baseline.overcommit_events, 0) << baseline.policy;
    EXPECT_EQ(baseline.partial_gang_events, 0) << baseline.policy;
    EXPECT_GE(phalanx.locality_lowest_level, baseline.locality_lowest_level) << baseline.policy;
  }
  const Summary& first_fit = report.results[1].summary;
  ASSERT_EQ(first_fit.policy, "first-fit");
  EXPECT_GT(phalanx.locality_lowest_level, first_fit.locality_lowest_level + 0.2);
  EXPECT_LT(phalanx.comm_slowdown_mean, first_fit.comm_slowdown_mean);
}

}  // namespace
}  // namespace phalanx::sim
