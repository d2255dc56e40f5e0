#include "sim/scenario.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "sim/baselines.h"
#include "sim/engine.h"
#include "sim/phalanx_policy.h"
#include "sim/progress.h"

namespace phalanx::sim {

std::vector<std::string> PolicyNames() {
  std::vector<std::string> names = {"phalanx"};
  for (const std::string& name : BaselineNames()) names.push_back(name);
  return names;
}

absl::StatusOr<std::unique_ptr<Policy>> MakePolicy(const std::string& name,
                                                   const PhalanxPolicyOptions& phalanx,
                                                   const BaselineOptions& baselines) {
  if (name == "phalanx") return MakePhalanxPolicy(phalanx);
  return MakeBaseline(name, baselines);
}

std::vector<std::string> BuiltInScenarioNames() { return {"default", "gb200", "mixed"}; }

namespace {

// Three teams in cohort `research` sharing each node group 40/35/25 % (whole nodes; the last
// team gets the remainder), borrowing allowed, preemption on as in the default scenario.
std::vector<QueueSpec> TeamQueues(const std::vector<NodeGroupSpec>& groups) {
  const char* names[3] = {"team-a", "team-b", "team-c"};
  std::vector<QueueSpec> queues(3);
  for (int i = 0; i < 3; ++i) {
    queues[i].name = names[i];
    queues[i].cohort = "research";
    queues[i].within_cluster_queue = "LowerPriority";
    queues[i].reclaim_within_cohort = "Any";
  }
  for (const NodeGroupSpec& group : groups) {
    const int64_t node_gpus = FindInstanceType(group.instance_type)->gpus;
    const int64_t gpus = int64_t{group.count} * node_gpus;
    const int64_t a = gpus * 40 / 100 / node_gpus * node_gpus;
    const int64_t b = gpus * 35 / 100 / node_gpus * node_gpus;
    const int64_t shares[3] = {a, b, gpus - a - b};
    for (int i = 0; i < 3; ++i) {
      queues[i].flavors.push_back(FlavorQuota{
          group.name, {{std::string(kResourceGpu), shares[i]}}, std::nullopt, std::nullopt});
    }
  }
  return queues;
}

}  // namespace

absl::StatusOr<BuiltInScenario> MakeBuiltInScenario(const std::string& name, int32_t nodes) {
  BuiltInScenario scenario;
  if (nodes != 0 && (nodes < 2 || nodes > 100000)) {
    return absl::InvalidArgumentError("--nodes: must be between 2 and 100000");
  }
  ClusterSpec& spec = scenario.cluster;
  if (name == "default") {
    spec = DefaultClusterSpec(nodes == 0 ? 128 : nodes);
    return scenario;
  }
  if (name == "gb200") {
    spec.name = "gb200";
    spec.groups.push_back(
        NodeGroupSpec{"gb200", "p6e-gb200.36xlarge", nodes == 0 ? 144 : nodes, "gb200",
                      {2, 2, 4, 18}});
    // Tensor parallelism over 4 or 8 nodes (16 or 32 GPUs) inside one NVL72 clique.
    scenario.trace.group_sizes = {4, 8};
  } else if (name == "mixed") {
    spec.name = "mixed";
    const int32_t total = nodes == 0 ? 128 : nodes;
    if (total < 4) return absl::InvalidArgumentError("--nodes: the mixed scenario needs 4 or more");
    spec.groups.push_back(NodeGroupSpec{"p5", "p5.48xlarge", total / 2, "eks", {2, 4, 16}});
    spec.groups.push_back(NodeGroupSpec{"b200", "p6-b200.48xlarge", total - total / 2,
                                        "eks-4layer", {2, 2, 4, 16}});
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--scenario: unknown scenario \"", name,
                                                   "\" (known: ",
                                                   absl::StrJoin(BuiltInScenarioNames(), ", "),
                                                   ")"));
  }
  spec.queues = TeamQueues(spec.groups);
  return scenario;
}

absl::Status CheckScenarioFlag(const std::string& name, bool scenario_given, bool cluster_given) {
  if (scenario_given && cluster_given) {
    return absl::InvalidArgumentError(
        "--scenario picks a built-in cluster; it cannot be combined with --cluster");
  }
  return MakeBuiltInScenario(name, 0).status();
}

absl::StatusOr<Scenario> LoadScenario(const SimulateOptions& options) {
  Scenario scenario;
  ClusterSpec spec;
  TraceOptions trace_options;
  if (!options.cluster_file.empty()) {
    ASSIGN_OR_RETURN(spec, LoadClusterSpec(options.cluster_file));
  } else {
    ASSIGN_OR_RETURN(BuiltInScenario built_in,
                     MakeBuiltInScenario(options.scenario, options.nodes));
    spec = std::move(built_in.cluster);
    trace_options = std::move(built_in.trace);
  }
  ASSIGN_OR_RETURN(ClusterModel cluster, BuildCluster(spec));
  RETURN_IF_ERROR(CheckQueues(cluster));
  scenario.cluster = std::make_unique<ClusterModel>(std::move(cluster));
  if (!options.trace_file.empty()) {
    ASSIGN_OR_RETURN(scenario.jobs, LoadTrace(options.trace_file));
    scenario.trace_source = options.trace_file;
  } else {
    if (options.jobs < 1 || options.jobs > 10'000'000) {
      return absl::InvalidArgumentError("--jobs: must be between 1 and 10000000");
    }
    trace_options.jobs = options.jobs;
    trace_options.seed = options.seed;
    trace_options.load = options.load;
    scenario.jobs = GenerateTrace(*scenario.cluster, trace_options);
    scenario.trace_source = absl::StrCat("generated (seed ", options.seed, ")");
    // The generator's jobs pass the loaders' rules by construction, but for their submit times,
    // which a tiny --load spreads past any horizon.
    if (!scenario.jobs.empty() && !(scenario.jobs.back().submit_s <= kMaxSubmitSeconds)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--load: ", options.load, " spreads ", options.jobs,
          " jobs past 100000000000 seconds of submit times; use a larger --load"));
    }
  }
  RETURN_IF_ERROR(ValidateTrace(scenario.jobs, *scenario.cluster, options.allow_unplaceable));
  return scenario;
}

absl::StatusOr<SimulationReport> RunScenario(const Scenario& scenario,
                                             const SimulateOptions& options) {
  std::vector<std::string> names = options.policies.empty() ? PolicyNames() : options.policies;
  std::vector<std::unique_ptr<Policy>> policies;
  for (const std::string& name : names) {
    ASSIGN_OR_RETURN(std::unique_ptr<Policy> policy,
                     MakePolicy(name, options.phalanx, options.baselines));
    policies.push_back(std::move(policy));
  }
  SimulationReport report;
  report.cluster = scenario.cluster.get();
  report.trace_source = scenario.trace_source;
  report.jobs = static_cast<int64_t>(scenario.jobs.size());
  report.seed = options.seed;
  std::vector<absl::StatusOr<RunResult>> results(policies.size(), absl::InternalError("not run"));
  ProgressBar bar("simulating", static_cast<int>(policies.size()),
                  options.progress && ProgressBar::StderrIsTerminal());
  // Policies are independent: run them on worker threads, each with its own engine.
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < policies.size(); i = next++) {
      EngineOptions engine_options;
      engine_options.seed = options.seed;
      engine_options.restart_overhead_s = options.restart_overhead_s;
      engine_options.checkpoint_interval_s = options.checkpoint_interval_s;
      engine_options.progress = bar.Reporter(static_cast<int>(i));
      Engine engine(*scenario.cluster, scenario.jobs, engine_options);
      results[i] = engine.Run(*policies[i]);
    }
  };
  const int threads = std::clamp<int>(options.threads, 1, static_cast<int>(policies.size()));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  bar.Finish();
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok()) {
      return Annotate(results[i].status(), absl::StrCat("policy ", names[i]));
    }
    report.results.push_back(*std::move(results[i]));
  }
  return report;
}

}  // namespace phalanx::sim
