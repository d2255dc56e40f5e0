// Issue 13's goal for Phalanx on the built-in default scenario, seeds 1-5, every policy on the
// same trace, judged only by the engine's own checks and metrics (never the policy's):
//
//   * zero violations: no partial gang, over-commit, TP-group or required-level violation or
//     invalid action, and every job started;
//   * locality at least every baseline's in every gang-size bucket (the report's buckets,
//     LocalityBySize) where both have at least 10 judged jobs;
//   * GPU utilization at least the best baseline's minus 0.5 point;
//   * p99 wait at most the best baseline's.
//
// Where the goal is not met, it is not hidden and the bar is not lowered: kShortfalls lists each
// (seed, axis) that misses, with the figures measured when it was written (docs/simulator.md,
// "Goal"). A listed shortfall is reported, not failed; an unlisted one fails; and a listed one
// that now holds fails too, so that the list is kept exact.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/report.h"
#include "sim/scenario.h"

namespace phalanx::sim {
namespace {

constexpr int kMinBucketJobs = 10;
constexpr double kUtilizationSlack = 0.005;

// "seed/axis", axis one of: utilization, p99, locality:<bucket>:<baseline>. Measured on
// 2026-12-02, when equally good placements started going to the fuller enclosing domains
// (docs/placement.md, step 4), against the baselines as docs/baselines.md describes them (TP
// groups and required levels honoured, placement-aware preemption, each victim of another
// queue checked against the books as they stand after the victims before it, heads within
// nominal quota admitted before heads that borrow); the locality buckets by each gang's
// requested size. docs/simulator.md has every figure, and the test's output prints each miss
// with its figures, so a change that moves them shows what to write here.
const std::set<std::string> kShortfalls = {
    // utilization 84.68 % against kai-topology's 85.74 %; p99 wait 10.1 h against
    // volcano-hypernode's 4.7 h.
    "1/utilization",
    "1/p99",
    // p99 wait 12.4 h against first-fit's 12.0 h.
    "2/p99",
    // 33-64 nodes: 4 of 32 local against 5 of 32 (volcano-hypernode); p99 5.5 h against 5.1 h.
    "3/locality:33-64:volcano-hypernode",
    "3/p99",
    // 33-64 nodes: 4 of 29 local against 7 of 29 (kai-topology).
    "4/locality:33-64:kai-topology",
    // 33-64 nodes: 7 of 30 local against 10 of 30 (volcano-hypernode).
    "5/locality:33-64:volcano-hypernode",
};

// Every (seed, axis) where Phalanx misses the goal on this report, with the figures.
std::vector<std::pair<std::string, std::string>> Misses(uint64_t seed,
                                                        const SimulationReport& report) {
  std::vector<std::pair<std::string, std::string>> misses;
  const RunResult& phalanx = report.results[0];
  const Summary& p = phalanx.summary;
  double best_util = 0;
  double best_p99 = 1e300;
  std::string best_util_name, best_p99_name;
  const std::vector<LocalityBucket> mine = LocalityBySize(phalanx);
  for (size_t i = 1; i < report.results.size(); ++i) {
    const Summary& b = report.results[i].summary;
    if (b.gpu_utilization > best_util) {
      best_util = b.gpu_utilization;
      best_util_name = b.policy;
    }
    if (b.wait_p99_s < best_p99) {
      best_p99 = b.wait_p99_s;
      best_p99_name = b.policy;
    }
    const std::vector<LocalityBucket> theirs = LocalityBySize(report.results[i]);
    for (size_t k = 0; k < mine.size(); ++k) {
      if (mine[k].total < kMinBucketJobs || theirs[k].total < kMinBucketJobs) continue;
      // local/total >= their local/their total, in integers.
      if (mine[k].local * theirs[k].total < theirs[k].local * mine[k].total) {
        misses.emplace_back(
            absl::StrCat(seed, "/locality:", mine[k].label(), ":", b.policy),
            absl::StrCat(mine[k].local, "/", mine[k].total, " local against ", theirs[k].local,
                         "/", theirs[k].total));
      }
    }
  }
  if (p.gpu_utilization < best_util - kUtilizationSlack) {
    misses.emplace_back(absl::StrCat(seed, "/utilization"),
                        absl::StrCat(100 * p.gpu_utilization, " % against ", 100 * best_util,
                                     " % (", best_util_name, ")"));
  }
  if (p.wait_p99_s > best_p99) {
    misses.emplace_back(absl::StrCat(seed, "/p99"),
                        absl::StrCat(p.wait_p99_s, " s against ", best_p99, " s (",
                                     best_p99_name, ")"));
  }
  return misses;
}

TEST(GoalTest, DefaultScenarioSeedsOneToFive) {
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SimulateOptions options;
    options.seed = seed;
    ASSERT_OK_AND_ASSIGN(Scenario scenario, LoadScenario(options));
    ASSERT_OK_AND_ASSIGN(SimulationReport report, RunScenario(scenario, options));
    ASSERT_EQ(report.results.size(), 5u);
    const Summary& p = report.results[0].summary;
    ASSERT_EQ(p.policy, "phalanx");
    // Violations, counted by the engine: never excused.
    EXPECT_EQ(p.partial_gang_events, 0) << "seed " << seed;
    EXPECT_EQ(p.overcommit_events, 0) << "seed " << seed;
    EXPECT_EQ(p.group_violation_events, 0) << "seed " << seed;
    EXPECT_EQ(p.required_level_violation_events, 0) << "seed " << seed;
    EXPECT_EQ(p.invalid_actions, 0) << "seed " << seed;
    EXPECT_EQ(p.jobs_never_started, 0) << "seed " << seed;
    EXPECT_EQ(p.jobs_unplaceable, 0) << "seed " << seed;
    EXPECT_EQ(p.jobs_completed, p.jobs) << "seed " << seed;
    for (const auto& [axis, figures] : Misses(seed, report)) {
      seen.insert(axis);
      if (kShortfalls.count(axis) > 0) {
        std::printf("known shortfall %s: %s\n", axis.c_str(), figures.c_str());
      } else {
        ADD_FAILURE() << "goal missed, not in kShortfalls: " << axis << ": " << figures;
      }
    }
  }
  for (const std::string& axis : kShortfalls) {
    EXPECT_TRUE(seen.count(axis) > 0) << axis << " now meets the goal: take it off kShortfalls";
  }
}

}  // namespace
}  // namespace phalanx::sim
