// One `phalanx simulate` run: load or build the cluster and the trace, run every policy on the
// same trace (two at a time: this machine has two cores), and collect the report.
//
//   SimulateOptions options;            // defaults = the built-in scenario
//   options.policies = {"phalanx", "kueue-tas"};
//   ASSIGN_OR_RETURN(SimulationReport report, Simulate(options));
//   std::cout << FormatJson(report);
//
// Bad input (files, flags, unknown policies) is InvalidArgument naming the file, line and
// field; anything else that fails is an internal error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/cluster.h"
#include "sim/policy.h"
#include "sim/report.h"
#include "sim/trace.h"

namespace phalanx::sim {

struct SimulateOptions {
  std::string cluster_file;  // "" = the built-in default cluster
  std::string trace_file;    // "" = a generated trace
  int32_t nodes = 128;       // size of the built-in cluster
  int32_t jobs = 3000;       // size of the generated trace
  uint64_t seed = 1;
  double load = 0.9;
  std::vector<std::string> policies;  // empty = every policy
  bool progress = false;              // draw a progress bar (only if stderr is a terminal)
  // Run jobs that can never be placed (counted apart, in no figure) instead of refusing the
  // trace as bad input.
  bool allow_unplaceable = false;
  int threads = 2;
};

// Every policy name, Phalanx first.
std::vector<std::string> PolicyNames();
absl::StatusOr<std::unique_ptr<Policy>> MakePolicy(const std::string& name);

// Resolves options into the cluster model and the jobs to run (no simulation).
struct Scenario {
  std::unique_ptr<ClusterModel> cluster;  // stable address: reports point at it
  std::vector<TraceJob> jobs;
  std::string trace_source;
};
absl::StatusOr<Scenario> LoadScenario(const SimulateOptions& options);

// Runs the scenario under each policy. The report's cluster points into `scenario`.
absl::StatusOr<SimulationReport> RunScenario(const Scenario& scenario,
                                             const SimulateOptions& options);

}  // namespace phalanx::sim
