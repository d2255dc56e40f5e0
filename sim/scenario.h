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
#include "sim/baselines.h"
#include "sim/cluster.h"
#include "sim/phalanx_policy.h"
#include "sim/policy.h"
#include "sim/report.h"
#include "sim/trace.h"

namespace phalanx::sim {

struct SimulateOptions {
  std::string cluster_file;  // "" = the built-in cluster of `scenario`
  std::string trace_file;    // "" = a generated trace
  std::string scenario = "default";  // a BuiltInScenarioNames() entry, without --cluster
  int32_t nodes = 0;         // size of the built-in cluster; 0 = the scenario's own
  int32_t jobs = 3000;       // size of the generated trace
  uint64_t seed = 1;
  double load = 0.9;
  std::vector<std::string> policies;  // empty = every policy
  PhalanxPolicyOptions phalanx;       // ablation switches for the phalanx policy
  BaselineOptions baselines;          // and for the baselines (fair sharing)
  bool progress = false;              // draw a progress bar (only if stderr is a terminal)
  // Run jobs that can never be placed (counted apart, in no figure) instead of refusing the
  // trace as bad input.
  bool allow_unplaceable = false;
  int threads = 2;
  // The engine's eviction cost for every policy (EngineOptions): the reload after each
  // interruption, and how much work is lost (0: none).
  double restart_overhead_s = 120;
  double checkpoint_interval_s = 0;
};

// The built-in scenarios `phalanx simulate --scenario NAME` runs without --cluster:
//   default  128 p5.48xlarge, EKS 3-layer topology (DefaultClusterSpec);
//   gb200    144 p6e-gb200.36xlarge in 8 NVL72 cliques (nvidia.com/gpu.clique), gangs in
//            tensor-parallel groups of 4 or 8 nodes inside one clique;
//   mixed    64 p5.48xlarge (EKS 3-layer) + 64 p6-b200.48xlarge (EKS 4-layer) in one
//            4-layer Topology, every queue with quota in both flavors.
// Each has three teams' queues in one cohort sharing 40/35/25 % with borrowing and preemption.
std::vector<std::string> BuiltInScenarioNames();
// The cluster of scenario `name` at `nodes` nodes (0 = its own size), and how its generated
// trace differs from the default generator's. InvalidArgument for an unknown name.
struct BuiltInScenario {
  ClusterSpec cluster;
  TraceOptions trace;  // jobs, seed and load are the caller's
};
absl::StatusOr<BuiltInScenario> MakeBuiltInScenario(const std::string& name, int32_t nodes);
// `--scenario NAME` beside `--cluster FILE`, as `phalanx simulate` and `phalanx plan` take them:
// InvalidArgument when both were given, or for an unknown name.
absl::Status CheckScenarioFlag(const std::string& name, bool scenario_given, bool cluster_given);

// Every policy name, Phalanx first.
std::vector<std::string> PolicyNames();
absl::StatusOr<std::unique_ptr<Policy>> MakePolicy(const std::string& name,
                                                   const PhalanxPolicyOptions& phalanx = {},
                                                   const BaselineOptions& baselines = {});

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
