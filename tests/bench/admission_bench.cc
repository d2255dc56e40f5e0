// Admission benchmarks (docs/benchmarks.md's target: one cycle, 10,000 pending over 100
// ClusterQueues, < 100 ms): a full cycle against the real in-process placement service on 4,096
// nodes x 8 GPUs (eks-4layer), from an empty cluster (the cycle that admits the most) and in steady
// state (the cluster full, 10,000 new workloads that mostly cannot be admitted).
//
//   build-admission/tests/bench/phalanx_admission_bench --benchmark_format=json
//
// `phalanx bench admission --json` reports the same cycle once, with its counts.
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "benchmark/benchmark.h"
#include "operator/admission/admission_cycle.h"
#include "operator/admission/synthetic_queues.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/synthetic_cluster.h"

namespace phalanx::admission {
namespace {

const placement::SyntheticClusterOptions kCluster{.topology = "eks-4layer", .nodes = 4096,
                                                  .occupancy = 0, .churn = 0, .seed = 1};

// The empty cluster, built once; every iteration copies it so it starts from the same state.
const placement::ClusterSnapshot& EmptyCluster() {
  static const placement::ClusterSnapshot* snapshot = [] {
    absl::StatusOr<placement::SyntheticCluster> built = placement::BuildSyntheticCluster(kCluster);
    if (!built.ok()) {
      std::fprintf(stderr, "cannot build the cluster: %s\n", built.status().ToString().c_str());
      std::abort();
    }
    return new placement::ClusterSnapshot(std::move(built->snapshot));
  }();
  return *snapshot;
}

SyntheticQueuesOptions Queues(int pending, uint64_t seed) {
  return {.queues = 100, .cohorts = 10, .pending = pending,
          .total_gpus = int64_t{kCluster.nodes} * kCluster.gpus_per_node, .seed = seed};
}

void Report(benchmark::State& state, const CycleResult& result) {
  state.counters["admitted"] = static_cast<double>(result.admissions.size());
  state.counters["preemptions"] = static_cast<double>(result.preemptions.size());
  state.counters["round_trips"] = result.calls.Total();
  state.counters["admissions_per_second"] = benchmark::Counter(
      static_cast<double>(result.admissions.size()), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_AdmissionCycleEmptyCluster(benchmark::State& state) {
  Snapshot snapshot = BuildSyntheticQueues(Queues(static_cast<int>(state.range(0)), 1));
  CycleResult result;
  std::optional<placement::InProcessPlacementService> service;
  for (auto _ : state) {
    state.PauseTiming();
    service.reset();  // copying and freeing 4,096 nodes is not part of the cycle
    service.emplace(EmptyCluster());
    state.ResumeTiming();
    result = RunAdmissionCycle(snapshot, *service);
  }
  Report(state, result);
}
BENCHMARK(BM_AdmissionCycleEmptyCluster)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_AdmissionCycleSteadyState(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  // Fill once: admit what fits from one batch, then queue a second batch.
  placement::InProcessPlacementService filled(EmptyCluster());
  Snapshot snapshot = BuildSyntheticQueues(Queues(pending, 1));
  CycleResult fill = RunAdmissionCycle(snapshot, filled);
  snapshot = SteadyStateQueues(std::move(snapshot), fill, Queues(pending, 1));
  const placement::ClusterSnapshot* full = nullptr;
  filled.Read([&](const placement::ClusterSnapshot& s) { full = new placement::ClusterSnapshot(s); });
  CycleResult result;
  std::optional<placement::InProcessPlacementService> service;
  for (auto _ : state) {
    state.PauseTiming();
    service.reset();
    service.emplace(*full);
    state.ResumeTiming();
    result = RunAdmissionCycle(snapshot, *service);
  }
  delete full;
  Report(state, result);
}
BENCHMARK(BM_AdmissionCycleSteadyState)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace phalanx::admission

BENCHMARK_MAIN();
