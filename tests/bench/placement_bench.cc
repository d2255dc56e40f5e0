// Placement benchmarks (docs/benchmarks.md's targets): placing gangs of 1, 8, 64 and 256 pods on
// 4,096 nodes x 8 GPUs in the eks-4layer topology, 70 % occupied by a realistic job mix; and the
// cost of the snapshot's incremental updates (pod bind/unbind, node update).
//
//   build-placement/tests/bench/phalanx_placement_bench --benchmark_format=json
//
// Google Benchmark reports means; `phalanx bench placement` reports p50/p99 per placement.
// Searches are cold (the snapshot's per-shape cache dropped before each one) unless the name
// says Warm: a repeated search of an unchanged snapshot would only measure a cache hit.
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "scheduler/synthetic_cluster.h"

namespace phalanx::placement {
namespace {

const SyntheticClusterOptions& Options() {
  static const SyntheticClusterOptions options{.topology = "eks-4layer", .nodes = 4096,
                                               .occupancy = 0.7, .seed = 1};
  return options;
}

// One cluster shared by every benchmark, built once (the build itself takes ~100 ms).
ClusterSnapshot& Cluster() {
  static SyntheticCluster* cluster = [] {
    absl::StatusOr<SyntheticCluster> built = BuildSyntheticCluster(Options());
    if (!built.ok()) {
      std::fprintf(stderr, "cannot build the cluster: %s\n", built.status().ToString().c_str());
      std::abort();
    }
    return new SyntheticCluster(std::move(built).value());
  }();
  return cluster->snapshot;
}

void BM_PlaceGang(benchmark::State& state) {
  ClusterSnapshot& snapshot = Cluster();
  const int32_t pods = static_cast<int32_t>(state.range(0));
  GangRequest request = GpuGang("bench/gang", pods, 8, Options());
  int64_t placed = 0;
  for (auto _ : state) {
    snapshot.DropSearchCaches();
    absl::StatusOr<PlacementResult> result = snapshot.Place(request);
    placed += result.ok() && result->placed;
    benchmark::DoNotOptimize(result);
  }
  state.counters["placed_fraction"] =
      static_cast<double>(placed) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PlaceGang)->Arg(1)->Arg(8)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

// The same search after 16 pod binds / unbinds on random nodes (untimed): the cache refreshes
// only the paths above those nodes.
void BM_PlaceGangWarm(benchmark::State& state) {
  ClusterSnapshot& snapshot = Cluster();
  GangRequest request = GpuGang("bench/gang", static_cast<int32_t>(state.range(0)), 8, Options());
  std::mt19937 rng(5);
  std::vector<std::string> bound;
  int64_t round = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (const std::string& key : bound) (void)snapshot.RemovePod(key);
    bound.clear();
    for (int c = 0; c < 16; ++c) {
      PodInfo pod{absl::StrCat("bench/churn-", round, "-", c),
                  absl::StrFormat("node-%05d", static_cast<int>(rng() % Options().nodes)),
                  {{"cpu", 1000}}, "", -1};
      if (snapshot.AddPod(pod).ok()) bound.push_back(pod.key);
    }
    ++round;
    state.ResumeTiming();
    benchmark::DoNotOptimize(snapshot.Place(request));
  }
  for (const std::string& key : bound) (void)snapshot.RemovePod(key);
}
BENCHMARK(BM_PlaceGangWarm)->Arg(64)->Unit(benchmark::kMicrosecond);

// A gang that must fit in one layer-2 domain (256 nodes): the usual shape of a large job.
void BM_PlaceGangRequiredLayer2(benchmark::State& state) {
  ClusterSnapshot& snapshot = Cluster();
  GangRequest request =
      GpuGang("bench/gang", static_cast<int32_t>(state.range(0)), 8, Options());
  request.required_level = "topology.k8s.aws/network-node-layer-2";
  for (auto _ : state) {
    snapshot.DropSearchCaches();
    benchmark::DoNotOptimize(snapshot.Place(request));
  }
}
BENCHMARK(BM_PlaceGangRequiredLayer2)->Arg(64)->Unit(benchmark::kMicrosecond);

// A gang that cannot fit (300 pods in one 256-node layer-2 domain): the cost of a "no" with its
// Explanation, which admission pays every cycle for every gang still waiting.
void BM_PlaceGangThatDoesNotFit(benchmark::State& state) {
  ClusterSnapshot& snapshot = Cluster();
  GangRequest request = GpuGang("bench/too-big", 300, 8, Options());
  request.required_level = "topology.k8s.aws/network-node-layer-2";
  for (auto _ : state) {
    snapshot.DropSearchCaches();
    benchmark::DoNotOptimize(snapshot.Place(request));
  }
}
BENCHMARK(BM_PlaceGangThatDoesNotFit)->Unit(benchmark::kMicrosecond);

// Reserve then Release: what admission pays per admitted gang, including the O(depth) charge
// of every rank.
void BM_ReserveRelease(benchmark::State& state) {
  ClusterSnapshot& snapshot = Cluster();
  GangRequest request =
      GpuGang("bench/reserved", static_cast<int32_t>(state.range(0)), 8, Options());
  for (auto _ : state) {
    absl::StatusOr<PlacementResult> result = snapshot.Reserve(request);
    if (result.ok() && result->placed) benchmark::DoNotOptimize(snapshot.Release(request.job));
  }
}
BENCHMARK(BM_ReserveRelease)->Arg(64)->Unit(benchmark::kMicrosecond);

// A 64-pod gang that needs one whole layer-3 domain (64 nodes) at 90 % occupancy: no domain is
// free, so PlanPreemption must pick victims among every running job.
void BM_PlanPreemption(benchmark::State& state) {
  static SyntheticCluster* busy = [] {
    SyntheticClusterOptions options = Options();
    options.occupancy = 0.9;
    return new SyntheticCluster(std::move(BuildSyntheticCluster(options)).value());
  }();
  ClusterSnapshot& snapshot = busy->snapshot;
  GangRequest request = GpuGang("bench/urgent", 64, 8, Options());
  request.required_level = state.range(0) ? "topology.k8s.aws/network-node-layer-3" : "";
  request.priority = 10;
  std::vector<RunningGang> candidates;
  for (const std::string& job : snapshot.ReservedJobs()) candidates.push_back({job, 0, {}});
  int64_t victims = 0;
  for (auto _ : state) {
    snapshot.DropSearchCaches();
    absl::StatusOr<PreemptionPlan> plan = snapshot.PlanPreemption(request, candidates);
    if (plan.ok()) victims = static_cast<int64_t>(plan->victims.size());
  }
  state.counters["victims"] = static_cast<double>(victims);
}
BENCHMARK(BM_PlanPreemption)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// One pod bound then unbound on a random node: two snapshot updates per iteration.
void BM_PodBindUnbind(benchmark::State& state) {
  ClusterSnapshot& snapshot = Cluster();
  std::mt19937 rng(7);
  std::vector<PodInfo> pods;
  for (int i = 0; i < 1024; ++i) {
    pods.push_back({absl::StrCat("bench/pod-", i),
                    absl::StrFormat("node-%05d", static_cast<int>(rng() % 4096)),
                    {{"cpu", 1000}, {"memory", int64_t{4} << 30}},
                    "",
                    -1});
  }
  size_t i = 0;
  for (auto _ : state) {
    const PodInfo& pod = pods[i++ % pods.size()];
    benchmark::DoNotOptimize(snapshot.AddPod(pod));
    benchmark::DoNotOptimize(snapshot.RemovePod(pod.key));
  }
  state.SetItemsProcessed(2 * state.iterations());
}
BENCHMARK(BM_PodBindUnbind)->Unit(benchmark::kNanosecond);

// A node's status changes (Ready flips, a taint appears) without moving in the topology.
void BM_NodeUpdate(benchmark::State& state) {
  ClusterSnapshot& snapshot = Cluster();
  const Topology& topology = snapshot.topology();
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < 1024; ++i) {
    nodes.push_back(SyntheticNode(Options(), topology, (i * 4) % 4096));
    nodes.back().ready = i % 2 == 0;
  }
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(snapshot.UpdateNode(nodes[i++ % nodes.size()]));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NodeUpdate)->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace phalanx::placement

BENCHMARK_MAIN();
