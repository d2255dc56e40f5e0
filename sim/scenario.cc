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

absl::StatusOr<std::unique_ptr<Policy>> MakePolicy(const std::string& name) {
  if (name == "phalanx") return MakePhalanxPolicy();
  return MakeBaseline(name);
}

absl::StatusOr<Scenario> LoadScenario(const SimulateOptions& options) {
  Scenario scenario;
  ClusterSpec spec;
  if (!options.cluster_file.empty()) {
    ASSIGN_OR_RETURN(spec, LoadClusterSpec(options.cluster_file));
  } else {
    if (options.nodes < 2 || options.nodes > 100000) {
      return absl::InvalidArgumentError("--nodes: must be between 2 and 100000");
    }
    spec = DefaultClusterSpec(options.nodes);
  }
  ASSIGN_OR_RETURN(ClusterModel cluster, BuildCluster(spec));
  scenario.cluster = std::make_unique<ClusterModel>(std::move(cluster));
  if (!options.trace_file.empty()) {
    ASSIGN_OR_RETURN(scenario.jobs, LoadTrace(options.trace_file));
    scenario.trace_source = options.trace_file;
  } else {
    if (options.jobs < 1 || options.jobs > 10'000'000) {
      return absl::InvalidArgumentError("--jobs: must be between 1 and 10000000");
    }
    scenario.jobs = GenerateTrace(
        *scenario.cluster, {.jobs = options.jobs, .seed = options.seed, .load = options.load});
    scenario.trace_source = absl::StrCat("generated (seed ", options.seed, ")");
  }
  RETURN_IF_ERROR(ValidateTrace(scenario.jobs, *scenario.cluster, options.allow_unplaceable));
  return scenario;
}

absl::StatusOr<SimulationReport> RunScenario(const Scenario& scenario,
                                             const SimulateOptions& options) {
  std::vector<std::string> names = options.policies.empty() ? PolicyNames() : options.policies;
  std::vector<std::unique_ptr<Policy>> policies;
  for (const std::string& name : names) {
    ASSIGN_OR_RETURN(std::unique_ptr<Policy> policy, MakePolicy(name));
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
