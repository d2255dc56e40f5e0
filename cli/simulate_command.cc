// `phalanx simulate`: compare Phalanx with the baselines on a modelled cluster and job trace.
// With no arguments it runs the built-in default (128 p5.48xlarge in EKS 3-layer topology, three
// teams, a generated trace of 3,000 jobs). docs/simulator.md describes the model and formats.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "sim/report.h"
#include "sim/scenario.h"

namespace phalanx::cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: phalanx simulate [--cluster FILE] [--trace FILE] [--nodes N] [--jobs N] [--seed S]
                        [--load X] [--policy NAME]... [--json] [--report FILE]

Runs every policy on the same job trace and cluster with a simulated clock and compares them:
GPU utilization, wait times, job completion time, jobs never started, locality, modelled
communication slowdown, preemptions, and independently counted partial-gang and over-commit
events. Jobs never started are left out of the wait, locality and JCT figures, and a warning on
stderr names each policy that left some.

With no files: the built-in cluster (--nodes p5.48xlarge nodes, EKS 3-layer topology, three
teams' queues) and a generated trace (--jobs jobs, seeded, Philly/Helios-like mix).

  --cluster FILE   cluster spec YAML (node groups, topology shape, queues and quotas)
  --trace FILE     job trace, .csv or YAML
  --nodes N        nodes of the built-in cluster (default 128)
  --jobs N         jobs of the generated trace (default 3000)
  --seed S         seed of the generated trace and node failures (default 1)
  --load X         offered load of the generated trace, fraction of GPUs (default 0.9)
  --policy NAME    phalanx, first-fit, kueue-tas, volcano-hypernode, kai-topology
                   (repeatable or comma-separated; default: all)
  --json           print JSON instead of the table
  --report FILE    also write a self-contained HTML report with charts

Exit codes: 0 success, 1 runtime failure, 2 bad input.)";

int BadInput(const std::string& message) {
  std::fprintf(stderr, "phalanx simulate: %s\n", message.c_str());
  return kExitBadInput;
}

int RunSimulate(const std::vector<std::string>& args) {
  sim::SimulateOptions options;
  options.progress = true;
  bool json = false;
  bool nodes_set = false, jobs_set = false, load_set = false;
  std::string report_file;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    std::string v;
    if (flag == "--json") {
      json = true;
    } else if (flag == "--cluster" || flag == "--trace" || flag == "--report" ||
               flag == "--policy" || flag == "--nodes" || flag == "--jobs" || flag == "--seed" ||
               flag == "--load") {
      if (!value(&v)) return BadInput(absl::StrCat(flag, ": needs a value"));
      if (flag == "--cluster") options.cluster_file = v;
      if (flag == "--trace") options.trace_file = v;
      if (flag == "--report") report_file = v;
      if (flag == "--policy") {
        for (absl::string_view name : absl::StrSplit(v, ',', absl::SkipEmpty())) {
          options.policies.emplace_back(name);
        }
      }
      if (flag == "--nodes" && !(nodes_set = absl::SimpleAtoi(v, &options.nodes))) {
        return BadInput(absl::StrCat("--nodes: want an integer, got \"", v, "\""));
      }
      if (flag == "--jobs" && !(jobs_set = absl::SimpleAtoi(v, &options.jobs))) {
        return BadInput(absl::StrCat("--jobs: want an integer, got \"", v, "\""));
      }
      if (flag == "--seed" && !absl::SimpleAtoi(v, &options.seed)) {
        return BadInput(absl::StrCat("--seed: want a non-negative integer, got \"", v, "\""));
      }
      if (flag == "--load" && (!(load_set = absl::SimpleAtod(v, &options.load)) ||
                               options.load <= 0 || options.load > 10)) {
        return BadInput(absl::StrCat("--load: want a number in (0, 10], got \"", v, "\""));
      }
    } else {
      return BadInput(absl::StrCat("unknown flag \"", flag, "\" (see phalanx simulate --help)"));
    }
  }
  if (nodes_set && !options.cluster_file.empty()) {
    return BadInput("--nodes scales the built-in cluster; it cannot be combined with --cluster");
  }
  if ((jobs_set || load_set) && !options.trace_file.empty()) {
    return BadInput(
        "--jobs and --load shape the generated trace; they cannot be combined with "
        "--trace");
  }
  for (const std::string& name : options.policies) {
    if (!sim::MakePolicy(name).ok()) {
      return BadInput(std::string(sim::MakePolicy(name).status().message()));
    }
  }
  absl::StatusOr<sim::Scenario> scenario = sim::LoadScenario(options);
  if (!scenario.ok()) {
    std::fprintf(stderr, "phalanx simulate: %s\n",
                 std::string(scenario.status().message()).c_str());
    return absl::IsInvalidArgument(scenario.status()) ? kExitBadInput : kExitFailure;
  }
  absl::StatusOr<sim::SimulationReport> report = sim::RunScenario(*scenario, options);
  if (!report.ok()) {
    std::fprintf(stderr, "phalanx simulate: %s\n", std::string(report.status().message()).c_str());
    return absl::IsInvalidArgument(report.status()) ? kExitBadInput : kExitFailure;
  }
  const std::string out = json ? sim::FormatJson(*report) : sim::FormatTable(*report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  for (absl::string_view line :
       absl::StrSplit(sim::NeverStartedWarning(*report), '\n', absl::SkipEmpty())) {
    std::fprintf(stderr, "phalanx simulate: warning: %s\n", std::string(line).c_str());
  }
  if (!report_file.empty()) {
    std::ofstream file(report_file);
    file << sim::FormatHtml(*report);
    if (!file.good()) {
      std::fprintf(stderr, "phalanx simulate: cannot write %s\n", report_file.c_str());
      return kExitFailure;
    }
    std::fprintf(stderr, "report written to %s\n", report_file.c_str());
  }
  return kExitOk;
}

PHALANX_COMMAND("simulate", "compare Phalanx with baseline schedulers on a simulated cluster",
                kUsage, RunSimulate);

}  // namespace
}  // namespace phalanx::cli
