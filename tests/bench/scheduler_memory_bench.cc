// How much memory phalanx-scheduler needs for a cluster (docs/benchmarks.md: 10,000 nodes + 100,000
// pods in < 500 MB RSS): the Node and Pod informers' caches, filled by the real kube::Informer
// from a paged list of realistic API-server JSON, and the placement core's ClusterSnapshot with
// every node and every bound pod added by the scheduler's own LiveSnapshot::Build. Prints one
// JSON line:
//
//   build-decode/tests/bench/phalanx_scheduler_memory_bench --nodes 10000 --pods 100000
//   {"nodes":10000,"pods":100000,...,"rss_mb_informers":..,"rss_mb_total":..,"peak_rss_mb":..,
//    "sync_ms":..,"generate_ms":..,"decode_ms":..,"decode_cpu_ms":..,"snapshot_build_ms":..}
//
// rss_mb_* is VmRSS after each stage (MB = 10^6 bytes), peak_rss_mb VmHWM at the end. sync_ms is
// the wall time until both informers have synced (nodes first, then pods) and generate_ms the
// part of it spent writing JSON; decode_ms is the difference (decoding plus the informers' own
// bookkeeping), decode_cpu_ms the same in CPU time.
//
// The cluster (tests/bench/cluster_json.h): p5.48xlarge nodes with the `eks` preset's topology
// labels and 8 GPUs; per node one 8-GPU training rank and nine DaemonSet pods (aws-node,
// kube-proxy, device plugins, exporters, ...), with managedFields and everything else the API
// server sends. --pods-per-node 1 makes every pod a training rank instead (labels unique to
// each pod: the least the decoder can share). Pages of 500 are generated when the reflector
// asks for them and freed after, as an API server's responses would be, so RSS counts what is
// kept, not the text.
//
// Not included: the TrainingJob informer (a few hundred jobs in such a cluster, kept as JSON
// text) and the servers' buffers.
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/objects.h"
#include "scheduler/cluster_snapshot.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/server/live_snapshot.h"
#include "scheduler/topology.h"
#include "spdlog/spdlog.h"
#include "tests/bench/cluster_json.h"

namespace {

namespace bench = phalanx::bench;
namespace placement = phalanx::placement;

// VmRSS / VmHWM of this process in MB (MiB would read as less; the target is stated in MB).
double StatusMb(std::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, field.size(), field) != 0 || line.size() <= field.size() ||
        line[field.size()] != ':') {
      continue;
    }
    return std::strtod(line.c_str() + field.size() + 1, nullptr) * 1024 / 1e6;  // kB
  }
  return -1;
}

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double CpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// An API server holding a generated cluster that never changes: lists come in pages of
// `limit`, generated on request; a watch sees nothing until it is cancelled.
class GeneratedCluster : public kube::Client {
 public:
  // One pod in `pods_per_node` is a training rank, the others DaemonSet pods.
  GeneratedCluster(int nodes, int pods, int pods_per_node) : nodes_(nodes), pods_(pods) {
    mix_.nodes = nodes;
    mix_.pods_per_node = pods_per_node;
  }

  // Time spent generating JSON (so that it can be taken out of the informers' sync time).
  double generate_ms() const { return generate_ms_; }
  double generate_cpu_ms() const { return generate_cpu_ms_; }

 protected:
  absl::Status DoListPages(
      const kube::Resource& resource, std::string_view, const kube::ListOptions& options,
      const std::function<absl::Status(std::string_view page)>& on_page) override {
    const bool nodes = resource.plural == "nodes";
    const int total = nodes ? nodes_ : pods_;
    const int limit = options.limit > 0 ? static_cast<int>(options.limit) : total;
    for (int first = 0; first < total || first == 0; first += limit) {
      const int count = std::min(limit, total - first);
      const bool more = first + count < total;
      double start = NowMs(), start_cpu = CpuMs();
      std::string page = bench::ListJson(
          nodes ? "NodeList" : "PodList", first, count,
          [&](int i) { return nodes ? bench::NodeJson(i) : bench::ClusterPodJson(i, mix_); },
          more ? absl::StrCat("page-", first + count) : "");
      generate_ms_ += NowMs() - start;
      generate_cpu_ms_ += CpuMs() - start_cpu;
      RETURN_IF_ERROR(on_page(page));
      if (!more) break;
    }
    return absl::OkStatus();
  }

  absl::Status DoWatch(const kube::Resource&, std::string_view, const kube::WatchOptions&,
                       const kube::WatchCallback&, const kube::Cancellation* cancel) override {
    while (cancel != nullptr && !cancel->WaitFor(absl::Seconds(1))) {
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> DoGet(const kube::Resource&, std::string_view, std::string_view,
                                    std::string_view) override {
    return Unsupported();
  }
  absl::StatusOr<std::string> DoCreate(const kube::Resource&, std::string_view, std::string_view,
                                       const kube::WriteOptions&, std::string_view,
                                       std::string_view) override {
    return Unsupported();
  }
  absl::StatusOr<std::string> DoUpdate(const kube::Resource&, std::string_view, std::string_view,
                                       std::string_view, const kube::WriteOptions&,
                                       std::string_view) override {
    return Unsupported();
  }
  absl::StatusOr<std::string> DoPatch(const kube::Resource&, std::string_view, std::string_view,
                                      kube::PatchType, std::string_view,
                                      const kube::WriteOptions&, std::string_view) override {
    return Unsupported();
  }
  absl::Status DoDelete(const kube::Resource&, std::string_view, std::string_view,
                        const kube::DeleteOptions&) override {
    return Unsupported();
  }

 private:
  static absl::Status Unsupported() {
    return absl::UnimplementedError("the generated cluster is read-only");
  }

  const int nodes_;
  const int pods_;
  bench::PodMix mix_;
  double generate_ms_ = 0;
  double generate_cpu_ms_ = 0;
};

// Runs an informer until its first list is in the cache, then stops it (the cache stays).
template <typename T>
bool Sync(kube::Informer<T>& informer) {
  kube::Cancellation stop;
  std::thread run([&] { informer.Run(&stop); });
  bool synced = informer.WaitForSync(absl::Minutes(30));
  stop.Cancel();
  run.join();
  return synced;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "phalanx_scheduler_memory_bench: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 10000;
  int pods = 100000;
  int pods_per_node = 0;  // pods / nodes, rounded up
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> int { return i + 1 < argc ? std::atoi(argv[++i]) : -1; };
    if (arg == "--nodes") {
      nodes = value();
    } else if (arg == "--pods") {
      pods = value();
    } else if (arg == "--pods-per-node") {
      pods_per_node = value();
    } else {
      std::fprintf(
          stderr,
          "usage: phalanx_scheduler_memory_bench [--nodes N] [--pods N] [--pods-per-node K]\n"
          "Fills the Node and Pod informers and a ClusterSnapshot with a generated cluster\n"
          "and prints RSS after each stage as one JSON line. Pods fill the nodes K at a time\n"
          "(default: pods/nodes, rounded up), one training rank (8 GPUs) and K-1 DaemonSet\n"
          "pods per node, wrapping around; --pods-per-node 1 makes every pod a training rank.\n");
      return arg == "--help" ? 0 : 2;
    }
  }
  if (pods_per_node == 0) pods_per_node = std::max(1, (pods + nodes - 1) / std::max(1, nodes));
  if (nodes <= 0 || pods < 0 || pods_per_node <= 0) {
    return Fail("--nodes and --pods-per-node must be > 0, --pods >= 0");
  }
  spdlog::set_level(spdlog::level::warn);  // stdout carries the JSON line only

  const double rss_start = StatusMb("VmRSS");
  GeneratedCluster cluster(nodes, pods, pods_per_node);
  kube::Informer<kube::Node> node_informer(cluster, kube::Nodes());
  kube::Informer<kube::Pod> pod_informer(cluster, kube::Pods());
  const double sync_start = NowMs(), sync_start_cpu = CpuMs();
  if (!Sync(node_informer) || !Sync(pod_informer)) return Fail("informers did not sync");
  const double sync_ms = NowMs() - sync_start;
  const double sync_cpu_ms = CpuMs() - sync_start_cpu;
  if (node_informer.size() != static_cast<size_t>(nodes) ||
      pod_informer.size() != static_cast<size_t>(pods)) {
    return Fail(absl::StrCat("informers hold ", node_informer.size(), " nodes and ",
                             pod_informer.size(), " pods"));
  }
  const double rss_informers = StatusMb("VmRSS");

  // What phalanx-scheduler does once its informers have synced: LiveSnapshot::Build adds every
  // node, then every bound pod that has not finished, to the placement service's snapshot.
  absl::StatusOr<placement::Topology> topology = placement::Topology::Preset("eks");
  if (!topology.ok()) return Fail(topology.status().ToString());
  const double build_start = NowMs();
  placement::InProcessPlacementService service(placement::ClusterSnapshot(*std::move(topology)));
  phalanx::scheduler::LiveSnapshot live(service);
  live.Build(node_informer.List(), /*jobs=*/{}, pod_informer.List());
  const double build_ms = NowMs() - build_start;
  const double rss_total = StatusMb("VmRSS");
  size_t bound = 0, snapshot_nodes = 0;
  service.Read([&](const placement::ClusterSnapshot& snapshot) {
    bound = snapshot.pod_count();
    snapshot_nodes = snapshot.nodes().size();
  });
  if (live.counters().errors != 0 || snapshot_nodes != static_cast<size_t>(nodes)) {
    return Fail(absl::StrCat("snapshot holds ", snapshot_nodes, " nodes, ", bound, " pods, ",
                             live.counters().errors, " errors"));
  }

  std::printf(
      "{\"nodes\":%d,\"pods\":%d,\"pods_per_node\":%d,\"bound_pods\":%zu,"
      "\"rss_mb_start\":%.1f,\"rss_mb_informers\":%.1f,\"rss_mb_total\":%.1f,"
      "\"peak_rss_mb\":%.1f,\"sync_ms\":%.0f,\"generate_ms\":%.0f,\"decode_ms\":%.0f,"
      "\"decode_cpu_ms\":%.0f,\"snapshot_build_ms\":%.0f}\n",
      nodes, pods, pods_per_node, bound, rss_start, rss_informers, rss_total, StatusMb("VmHWM"),
      sync_ms, cluster.generate_ms(), sync_ms - cluster.generate_ms(),
      sync_cpu_ms - cluster.generate_cpu_ms(), build_ms);
  return 0;
}
