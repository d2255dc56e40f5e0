// `phalanx bench placement`: times Place() on a synthetic cluster (scheduler/synthetic_cluster.h,
// the same generator the benchmarks and tests use) and reports percentiles, which Google
// Benchmark does not. With --json it prints exactly one JSON line.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "scheduler/synthetic_cluster.h"

namespace phalanx::cli {
namespace {

using placement::ClusterSnapshot;
using placement::GangRequest;
using placement::PlacementResult;
using placement::PodInfo;
using placement::SyntheticCluster;
using placement::SyntheticClusterOptions;
using Clock = std::chrono::steady_clock;

constexpr char kUsage[] =
    R"(Usage: phalanx bench placement [--nodes N] [--occupancy F] [--gang G] [--iterations K]
                               [--gpus-per-pod P] [--required LEVEL] [--topology NAME]
                               [--churn C] [--seed S] [--json]

Builds a synthetic cluster (N nodes x 8 GPUs, occupied to fraction F by a realistic job mix
with churn), then times K dry-run placements of a gang of G pods x P GPUs and reports p50/p99
latency (wall clock, and thread CPU time, which leaves out time the OS gave to other
processes), how many placements succeeded, and the CPU cost of one snapshot update (pod bind
or unbind, node status update).

Each placement is timed twice: cold, with the snapshot's per-shape search cache dropped first
(the cost of a shape's first search; the headline p50/p99), and warm, after C pod binds and
unbinds on random nodes since the previous search (what a scheduler sees between gangs).

  --nodes N        nodes, 1 to 100000 (default 4096)
  --occupancy F    fraction of GPUs in use, 0..1 (default 0.7)
  --gang G         pods per gang, 1 to 65536 (default 64)
  --iterations K   placements to time, 1 to 10000000 (default 1000)
  --gpus-per-pod P GPUs per pod, 0 to 1024 (default 8)
  --required LEVEL required topology level label (default: none)
  --topology NAME  eks, eks-4layer or gb200 (default eks-4layer)
  --churn C        pod binds + unbinds between warm placements, 0 to 1000000 (default 16)
  --seed S         cluster generator seed (default 1)
  --json           print one JSON line:
                   {"nodes":..,"gang":..,"p50_us":..,"p99_us":..,"placed":..,"failed":..,
                    "p50_cpu_us":..,"p99_cpu_us":..,"warm_p50_us":..,"warm_p99_us":..,
                    "update_ns":..,"node_update_ns":..,...}

Exit codes: 0 success, 1 runtime failure, 2 bad input.)";

constexpr char kCommand[] = "bench placement";

double Percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0;
  size_t index = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

double ElapsedNs(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// CPU time of this thread: unlike wall time it does not count the time the OS ran something
// else, which on a busy 2-core machine dominates any p99 of sub-millisecond work.
double ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Mean CPU cost of one pod bind or unbind, over `pairs` bind+unbind pairs on random nodes.
double PodUpdateNs(ClusterSnapshot& snapshot, int nodes, int pairs) {
  std::mt19937 rng(11);
  std::vector<PodInfo> pods;
  for (int i = 0; i < 1024; ++i) {
    pods.push_back({absl::StrCat("bench/pod-", i),
                    absl::StrFormat("node-%05d", static_cast<int>(rng() % nodes)),
                    {{"cpu", 1000}, {"memory", int64_t{4} << 30}}, "", -1});
  }
  double start = ThreadCpuNs();
  for (int i = 0; i < pairs; ++i) {
    const PodInfo& pod = pods[i % pods.size()];
    if (!snapshot.AddPod(pod).ok() || !snapshot.RemovePod(pod.key).ok()) return -1;
  }
  return (ThreadCpuNs() - start) / (2.0 * pairs);
}

// Mean CPU cost of one node status update (Ready flips; the node stays where it is in the tree).
double NodeUpdateNs(ClusterSnapshot& snapshot, const SyntheticClusterOptions& options,
                    int updates) {
  std::vector<placement::NodeInfo> infos;
  for (int i = 0; i < 1024; ++i) {
    infos.push_back(placement::SyntheticNode(options, snapshot.topology(), (i * 7) % options.nodes));
    infos.back().ready = i % 2 == 1;
  }
  double start = ThreadCpuNs();
  for (int i = 0; i < updates; ++i) {
    if (!snapshot.UpdateNode(infos[i % infos.size()]).ok()) return -1;
  }
  double ns = (ThreadCpuNs() - start) / updates;
  for (int i = 0; i < options.nodes; ++i) {  // every node Ready again
    (void)snapshot.UpdateNode(placement::SyntheticNode(options, snapshot.topology(), i));
  }
  return ns;
}

int RunBenchPlacement(const std::vector<std::string>& args) {
  SyntheticClusterOptions options;
  int32_t gang = 64;
  int32_t iterations = 1000;
  int32_t churn = 16;
  int32_t gpus_per_pod = 8;
  std::string required;
  bool json = false;
  FlagSet flags;
  flags.Int({"--nodes"}, &options.nodes, 1, 100'000)
      .Double({"--occupancy"}, &options.occupancy, 0, 1)
      .Int({"--gang"}, &gang, 1, 65'536)
      .Int({"--iterations"}, &iterations, 1, 10'000'000)
      .Int({"--gpus-per-pod"}, &gpus_per_pod, 0, 1024)
      .Int({"--churn"}, &churn, 0, 1'000'000)
      .String({"--required"}, &required)
      .String({"--topology"}, &options.topology)
      .Uint({"--seed"}, &options.seed)
      .Bool({"--json"}, &json);
  if (absl::Status parsed = flags.Parse(args); !parsed.ok()) return BadInput(kCommand, parsed);

  Clock::time_point build_start = Clock::now();
  absl::StatusOr<SyntheticCluster> built = placement::BuildSyntheticCluster(options);
  if (!built.ok()) return BadInput(kCommand, built.status());
  double build_ms = ElapsedNs(build_start) / 1e6;
  SyntheticCluster& cluster = *built;
  ClusterSnapshot& snapshot = cluster.snapshot;

  GangRequest request = placement::GpuGang("bench/gang", gang, gpus_per_pod, options);
  request.required_level = required;
  std::vector<double> latencies_us;
  std::vector<double> cpu_us;
  latencies_us.reserve(static_cast<size_t>(iterations));
  cpu_us.reserve(static_cast<size_t>(iterations));
  std::vector<double> warm_us;
  std::vector<double> warm_cpu_us;
  int placed = 0;
  int failed = 0;
  std::string domain;
  std::mt19937 rng(17);
  std::vector<std::string> churned;  // small pods bound last round, unbound this round
  for (int i = 0; i < iterations; ++i) {
    snapshot.DropSearchCaches();
    double cpu_start = ThreadCpuNs();
    Clock::time_point start = Clock::now();
    absl::StatusOr<PlacementResult> result = snapshot.Place(request);
    latencies_us.push_back(ElapsedNs(start) / 1e3);
    cpu_us.push_back((ThreadCpuNs() - cpu_start) / 1e3);
    if (!result.ok()) return BadInput(kCommand, result.status());
    // Churn, then the same search again with the cache as the churn left it.
    for (const std::string& key : churned) {
      if (!snapshot.RemovePod(key).ok()) return kExitFailure;
    }
    churned.clear();
    for (int c = 0; c < churn; ++c) {
      PodInfo pod{absl::StrCat("bench/churn-", i, "-", c),
                  absl::StrFormat("node-%05d", static_cast<int>(rng() % options.nodes)),
                  {{"cpu", 1000}, {"memory", int64_t{4} << 30}}, "", -1};
      if (!snapshot.AddPod(pod).ok()) return kExitFailure;
      churned.push_back(pod.key);
    }
    cpu_start = ThreadCpuNs();
    start = Clock::now();
    absl::StatusOr<PlacementResult> warm = snapshot.Place(request);
    warm_us.push_back(ElapsedNs(start) / 1e3);
    warm_cpu_us.push_back((ThreadCpuNs() - cpu_start) / 1e3);
    if (!warm.ok()) return BadInput(kCommand, warm.status());
    if (result->placed) {
      ++placed;
      domain = result->placement.domain.ToString();
    } else {
      ++failed;
      domain = result->explanation.summary;
    }
  }
  std::sort(latencies_us.begin(), latencies_us.end());
  double p50 = Percentile(latencies_us, 0.50);
  double p99 = Percentile(latencies_us, 0.99);
  double max = latencies_us.back();
  std::sort(cpu_us.begin(), cpu_us.end());
  double p50_cpu = Percentile(cpu_us, 0.50);
  double p99_cpu = Percentile(cpu_us, 0.99);
  std::sort(warm_us.begin(), warm_us.end());
  std::sort(warm_cpu_us.begin(), warm_cpu_us.end());
  double warm_p50 = Percentile(warm_us, 0.50);
  double warm_p99 = Percentile(warm_us, 0.99);
  double warm_p99_cpu = Percentile(warm_cpu_us, 0.99);
  for (const std::string& key : churned) (void)snapshot.RemovePod(key);
  double update_ns = PodUpdateNs(snapshot, options.nodes, 100000);
  double node_update_ns = NodeUpdateNs(snapshot, options, 20000);
  if (update_ns < 0 || node_update_ns < 0) {
    std::fprintf(stderr, "phalanx bench placement: a snapshot update failed\n");
    return kExitFailure;
  }
  double occupancy = static_cast<double>(cluster.used_gpus) / static_cast<double>(cluster.total_gpus);

  if (json) {
    std::printf(
        "{\"nodes\":%d,\"gang\":%d,\"gpus_per_pod\":%d,\"occupancy\":%.3f,\"iterations\":%d,"
        "\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,\"p50_cpu_us\":%.1f,"
        "\"p99_cpu_us\":%.1f,\"warm_p50_us\":%.1f,\"warm_p99_us\":%.1f,"
        "\"warm_p99_cpu_us\":%.1f,\"churn\":%d,\"placed\":%d,\"failed\":%d,"
        "\"update_ns\":%.0f,\"node_update_ns\":%.0f,\"build_ms\":%.0f}\n",
        options.nodes, gang, gpus_per_pod, occupancy, iterations, p50, p99, max, p50_cpu, p99_cpu,
        warm_p50, warm_p99, warm_p99_cpu, churn, placed, failed, update_ns, node_update_ns,
        build_ms);
    return kExitOk;
  }
  std::printf("cluster: %d nodes (%s), %.1f%% of GPUs in use by %zu jobs, built in %.0f ms\n",
              options.nodes, options.topology.c_str(), 100 * occupancy, cluster.jobs.size(),
              build_ms);
  std::printf("gang:    %d pods x %d GPUs%s%s\n", gang, gpus_per_pod,
              required.empty() ? "" : ", required level ", required.c_str());
  std::printf("place:   p50 %.1f us, p99 %.1f us, max %.1f us over %d placements (wall)\n",
              p50, p99, max, iterations);
  std::printf("         p50 %.1f us, p99 %.1f us (thread CPU time); cold: no search cache\n",
              p50_cpu, p99_cpu);
  std::printf("warm:    p50 %.1f us, p99 %.1f us (wall), p99 %.1f us CPU, %d pod updates since "
              "the last search\n", warm_p50, warm_p99, warm_p99_cpu, churn);
  std::printf("result:  %d placed, %d failed; %s\n", placed, failed, domain.c_str());
  std::printf("update:  pod bind/unbind %.0f ns, node status %.0f ns (CPU)\n", update_ns,
              node_update_ns);
  return kExitOk;
}

PHALANX_COMMAND("bench placement", "time gang placement on a synthetic cluster (p50/p99)",
                kUsage, RunBenchPlacement);

}  // namespace
}  // namespace phalanx::cli
