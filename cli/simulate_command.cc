// `phalanx simulate`: compare Phalanx with the baselines on a modelled cluster and job trace.
// With no arguments it runs the built-in default (128 p5.48xlarge in EKS 3-layer topology, three
// teams, a generated trace of 3,000 jobs). docs/simulator.md describes the model and formats.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "common/text_input.h"
#include "sim/baselines.h"
#include "sim/report.h"
#include "sim/scenario.h"

namespace phalanx::cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: phalanx simulate [--cluster FILE | --scenario NAME] [--trace FILE] [--nodes N]
                        [--jobs N] [--seed S] [--load X] [--policy NAME]... [--json]
                        [--report FILE] [--jobs-out FILE] [--allow-unplaceable]
                        [--backfill on|off] [--time-limit-factor F] [--locality-wait SECONDS]
                        [--fair-sharing on|off] [--baseline-preemption NAME]
                        [--restart-overhead SECONDS] [--checkpoint-interval SECONDS]

Runs every policy on the same job trace and cluster with a simulated clock and compares them:
GPU utilization (over the first submit to the last GPU released), wait times, job completion
time, jobs never started, locality, modelled communication slowdown, preemptions, and the rules
each policy broke. Jobs never started are left out of the wait, locality and JCT figures, and a
warning on stderr names each policy that left some.

With no files: a built-in cluster (--scenario, three teams' queues) and a generated trace
(--jobs jobs, seeded, Philly/Helios-like mix).

  --cluster FILE   cluster spec YAML (node groups, topology shape, queues and quotas)
  --scenario NAME  built-in cluster: default (128 p5.48xlarge, EKS 3-layer topology),
                   gb200 (144 p6e-gb200.36xlarge in NVL72 cliques, tensor-parallel groups of
                   4 or 8 nodes), mixed (64 p5.48xlarge + 64 p6-b200.48xlarge, 4-layer
                   topology) (default: default)
  --trace FILE     job trace, .csv or YAML
  --nodes N        nodes of the built-in cluster, 2 to 100000 (default: the scenario's)
  --jobs N         jobs of the generated trace, 1 to 10000000 (default 3000)
  --seed S         seed of the generated trace and node failures, 0 to 2^64-1 (default 1)
  --load X         offered load of the generated trace, fraction of GPUs, > 0 and <= 10
                   (default 0.9)
  --policy NAME    phalanx, first-fit, kueue-tas, volcano-hypernode, kai-topology
                   (repeatable or comma-separated; default: all)
  --backfill on|off
                   Phalanx's backfill with start-time reservations (docs/admission.md);
                   each job's trace duration is its expected run time (default on)
  --time-limit-factor F
                   Phalanx's backfill plans with time limits F times each job's real run
                   time, 1 to 100, like users' over-long limits (default 1: exact)
  --locality-wait SECONDS
                   Phalanx's locality wait for every queue, 0 to 86400, overriding the
                   cluster spec's localityWaitSeconds (default: the spec's, else 300)
  --fair-sharing on|off
                   every policy admits and preempts across a cohort by weighted share:
                   Kueue's fairSharing.enable, the operator's --fair-sharing for Phalanx,
                   the shared quota book's for the baselines (default off, as in Kueue)
  --baseline-preemption NAME
                   an ablation: kueue-tas, volcano-hypernode and kai-topology all preempt
                   by NAME's rule (one of the three), keeping their own placement and
                   admission; first-fit and Phalanx are unchanged (default: each its own)
  --restart-overhead SECONDS
                   what every policy's interrupted (preempted or failed) job pays on its
                   next start to reload its checkpoint, holding its GPUs, 0 to 86400
                   (default 120)
  --checkpoint-interval SECONDS
                   every job checkpoints after each this many seconds of productive run
                   time, and an interrupted one loses the work since its last checkpoint,
                   to be run again, 0 to 604800 (default 0: it checkpoints at the
                   interruption and loses nothing). An eviction's real cost: a policy that
                   evicts more pays more
  --json           print JSON instead of the table
  --report FILE    also write a self-contained HTML report with charts
  --jobs-out FILE  also write one CSV row per job and policy (submit, start, end, wait, pods,
                   nodes, level and domain placed, locality, preemptions, restarts, ..., and
                   why a job that never started was still waiting)
  --allow-unplaceable
                   run trace jobs that can never be placed on the cluster (too big for it
                   or for their required level, TP groups that cannot fit, no quota for any
                   node group they may use) instead of refusing the trace (exit 2, naming
                   each job's line); they are counted (column unplc, JSON jobs_unplaceable)
                   and left out of every per-job figure

Rules a policy breaks (partial gangs, over-commit, TP groups, required levels, invalid actions)
are counted by the simulator's own checks: column "violations", JSON *_events and a stderr line
per policy. They are results about the policy, not errors of the run.

Exit codes: 0 success (whatever the policies did), 1 runtime failure, 2 bad input.)";

constexpr char kCommand[] = "simulate";

int RunSimulate(const std::vector<std::string>& args) {
  sim::SimulateOptions options;
  options.progress = true;
  bool json = false;
  std::string report_file;
  std::string jobs_file;
  std::vector<std::string> policies;
  std::string backfill = "on";
  std::string fair_sharing = "off";
  int64_t locality_wait = 0;
  FlagSet flags;
  flags.String({"--cluster"}, &options.cluster_file)
      .String({"--trace"}, &options.trace_file)
      .String({"--scenario"}, &options.scenario)
      .String({"--report"}, &report_file)
      .String({"--jobs-out"}, &jobs_file)
      .Strings({"--policy"}, &policies)
      .Int({"--nodes"}, &options.nodes, 2, 100'000)
      .Int({"--jobs"}, &options.jobs, 1, 10'000'000)
      .Uint({"--seed"}, &options.seed)
      .Double({"--load"}, &options.load, 0, 10, /*min_exclusive=*/true)
      .Double({"--time-limit-factor"}, &options.phalanx.time_limit_factor, 1, 100)
      .String({"--backfill"}, &backfill)
      .String({"--fair-sharing"}, &fair_sharing)
      .String({"--baseline-preemption"}, &options.baselines.preemption_rule)
      .Int({"--locality-wait"}, &locality_wait, 0, 86'400)
      .Double({"--restart-overhead"}, &options.restart_overhead_s, 0, 86'400)
      .Double({"--checkpoint-interval"}, &options.checkpoint_interval_s, 0, 604'800)
      .Bool({"--json"}, &json)
      .Bool({"--allow-unplaceable"}, &options.allow_unplaceable);
  if (absl::Status parsed = flags.Parse(args); !parsed.ok()) return BadInput(kCommand, parsed);
  for (const auto& [flag, value, out] :
       {std::tuple{"--backfill", &backfill, &options.phalanx.backfill},
        std::tuple{"--fair-sharing", &fair_sharing, &options.phalanx.fair_sharing}}) {
    if (*value != "on" && *value != "off") {
      return BadInput(kCommand, absl::StrCat(flag, ": want on or off, got ", Quoted(*value)));
    }
    *out = *value == "on";
  }
  options.baselines.fair_sharing = options.phalanx.fair_sharing;  // every policy, or none
  if (flags.Seen("--locality-wait")) options.phalanx.locality_wait_s = locality_wait;
  for (const std::string& list : policies) {
    std::vector<std::string> names = absl::StrSplit(list, ',', absl::SkipEmpty());
    if (names.empty()) return BadInput(kCommand, "--policy: want a comma-separated list of names");
    for (std::string& name : names) {
      if (std::find(options.policies.begin(), options.policies.end(), name) !=
          options.policies.end()) {
        return BadInput(kCommand, absl::StrCat("--policy: ", Quoted(name), " is listed twice"));
      }
      options.policies.push_back(std::move(name));
    }
  }
  if (flags.Seen("--nodes") && !options.cluster_file.empty()) {
    return BadInput(kCommand,
                    "--nodes scales the built-in cluster; it cannot be combined with --cluster");
  }
  if (absl::Status chosen = sim::CheckScenarioFlag(options.scenario, flags.Seen("--scenario"),
                                                   !options.cluster_file.empty());
      !chosen.ok()) {
    return BadInput(kCommand, chosen);
  }
  if ((flags.Seen("--jobs") || flags.Seen("--load")) && !options.trace_file.empty()) {
    return BadInput(kCommand,
                    "--jobs and --load shape the generated trace; they cannot be combined with "
                    "--trace");
  }
  if (absl::Status known = sim::MakeBaseline("kueue-tas", options.baselines).status(); !known.ok()) {
    return BadInput(kCommand, absl::StrCat("--baseline-preemption: ", known.message()));
  }
  for (const std::string& name : options.policies) {
    if (absl::Status known = sim::MakePolicy(name).status(); !known.ok()) {
      return BadInput(kCommand, known);
    }
  }
  // Found out now, not after a run of minutes.
  for (const auto& [flag, path] : {std::pair{"--report", &report_file},
                                    std::pair{"--jobs-out", &jobs_file}}) {
    if (absl::Status writable = CheckOutputFile(*path); !writable.ok()) {
      return BadInput(kCommand, absl::StrCat(flag, ": ", writable.message()));
    }
  }
  // An output that is an input, or both outputs one file, would silently replace it.
  const std::vector<std::pair<const char*, const std::string*>> files = {
      {"--cluster", &options.cluster_file},
      {"--trace", &options.trace_file},
      {"--report", &report_file},
      {"--jobs-out", &jobs_file}};
  for (size_t out = 2; out < files.size(); ++out) {
    for (size_t other = 0; other < out; ++other) {
      if (SameFile(*files[out].second, *files[other].second)) {
        return BadInput(kCommand, absl::StrCat(files[out].first, " and ", files[other].first,
                                               " name the same file ",
                                               Quoted(*files[out].second)));
      }
    }
  }
  absl::StatusOr<sim::Scenario> scenario = sim::LoadScenario(options);
  if (!scenario.ok()) return Fail(kCommand, scenario.status());
  absl::StatusOr<sim::SimulationReport> report = sim::RunScenario(*scenario, options);
  if (!report.ok()) return Fail(kCommand, report.status());
  const std::string out = json ? sim::FormatJson(*report) : sim::FormatTable(*report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  for (absl::string_view line :
       absl::StrSplit(sim::RunWarnings(*report), '\n', absl::SkipEmpty())) {
    std::fprintf(stderr, "phalanx simulate: warning: %s\n", Printable(line).c_str());
  }
  if (!report_file.empty()) {
    std::ofstream file(report_file);
    file << sim::FormatHtml(*report);
    if (!file.good()) {
      return Fail(kCommand, absl::InternalError(absl::StrCat("cannot write ", Quoted(report_file))));
    }
    std::fprintf(stderr, "report written to %s\n", Printable(report_file).c_str());
  }
  if (!jobs_file.empty()) {
    std::ofstream file(jobs_file);
    sim::WriteJobsCsv(*report, scenario->jobs, file);
    if (!file.good()) {
      return Fail(kCommand, absl::InternalError(absl::StrCat("cannot write ", Quoted(jobs_file))));
    }
    std::fprintf(stderr, "jobs written to %s\n", Printable(jobs_file).c_str());
  }
  // A policy breaking a rule is a result about that policy (first-fit ignores topology by
  // design), printed above and on stderr, not a failure of the run: exit 0.
  return kExitOk;
}

PHALANX_COMMAND("simulate", "compare Phalanx with baseline schedulers on a simulated cluster",
                kUsage, RunSimulate);

}  // namespace
}  // namespace phalanx::cli
