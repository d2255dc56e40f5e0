#include "sim/scenario.h"

#include <set>

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

// The built-in scenarios load and run: gb200's gangs come in tensor-parallel groups of 4 or 8
// nodes inside one clique, mixed's jobs use both node groups, and Phalanx runs each with no
// violation the engine counts.
TEST(ScenarioTest, BuiltInScenariosRun) {
  for (const std::string& name : BuiltInScenarioNames()) {
    SimulateOptions options;
    options.scenario = name;
    options.jobs = 300;
    options.policies = {"phalanx"};
    ASSERT_OK_AND_ASSIGN(Scenario scenario, LoadScenario(options));
    std::set<int32_t> groups;
    std::set<std::string> node_groups;
    for (const TraceJob& job : scenario.jobs) {
      if (job.group_size > 0) groups.insert(job.group_size);
      node_groups.insert(job.node_group);
    }
    if (name == "gb200") {
      EXPECT_EQ(scenario.cluster->total_gpus, 144 * 4);
      EXPECT_THAT(groups, ::testing::ElementsAre(4, 8));
    } else {
      EXPECT_THAT(groups, ::testing::IsEmpty()) << name;
    }
    if (name == "mixed") {
      EXPECT_THAT(node_groups, ::testing::ElementsAre("b200", "p5"));
      EXPECT_EQ(scenario.cluster->total_gpus, 128 * 8);
    }
    ASSERT_OK_AND_ASSIGN(SimulationReport report, RunScenario(scenario, options));
    const Summary& p = report.results[0].summary;
    EXPECT_EQ(p.jobs_completed, 300) << name;
    EXPECT_EQ(p.partial_gang_events + p.overcommit_events + p.invalid_actions, 0) << name;
  }
  SimulateOptions unknown;
  unknown.scenario = "tpu";
  EXPECT_THAT(LoadScenario(unknown).status().message(),
              ::testing::HasSubstr("unknown scenario \"tpu\" (known: default, gb200, mixed)"));
}

// Every --nodes a user may give a built-in scenario generates a trace the shared validator
// accepts: gang caps (half the group, a queue's reachable nodes) are often odd, and an odd gang
// made elastic "in halves" was a range the TrainingJob rules refuse, so `--nodes 50` exited 2.
TEST(ScenarioTest, EveryNodeCountGeneratesOnlyValidJobs) {
  for (const std::string& name : BuiltInScenarioNames()) {
    for (int32_t nodes = name == "mixed" ? 4 : 2; nodes <= 160; ++nodes) {
      for (uint64_t seed : {1, 3}) {
        SimulateOptions options;
        options.scenario = name;
        options.nodes = nodes;
        options.jobs = 200;
        options.seed = seed;
        const absl::StatusOr<Scenario> scenario = LoadScenario(options);
        EXPECT_OK(scenario.status()) << name << " --nodes " << nodes << " --seed " << seed;
      }
    }
  }
}

}  // namespace
}  // namespace phalanx::sim
