#include "scheduler/synthetic_cluster.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"

namespace phalanx::placement {
namespace {

struct JobShape {
  int32_t pods;
  int64_t gpus_per_pod;
  int weight;
};

// Roughly what a shared training cluster runs: many small experiments, fewer but much larger
// multi-node gangs that hold most of the GPUs.
constexpr JobShape kJobMix[] = {
    {1, 1, 10}, {1, 2, 8}, {1, 4, 8}, {1, 8, 10}, {2, 8, 10},
    {4, 8, 12}, {8, 8, 12}, {16, 8, 8}, {32, 8, 4}, {64, 8, 2},
};

}  // namespace

NodeInfo SyntheticNode(const SyntheticClusterOptions& options, const Topology& topology,
                       int index) {
  NodeInfo node;
  node.name = absl::StrFormat("node-%05d", index);
  int64_t domain = index / std::max(1, options.nodes_per_leaf);
  for (int level = topology.depth(); level >= 1; --level) {
    std::string prefix = level == topology.depth() && topology.levels().back() == kGpuCliqueLabel
                             ? "clique"
                             : absl::StrCat("nn", level);
    node.labels[topology.LevelLabel(level)] = absl::StrFormat("%s-%04d", prefix, domain);
    domain /= std::max(1, options.fanout);
  }
  node.labels["node.kubernetes.io/instance-type"] = "p5.48xlarge";
  node.allocatable = {{std::string(kResourceCpu), options.cpu_millis},
                      {std::string(kResourceMemory), options.memory_bytes},
                      {std::string(kResourceGpu), options.gpus_per_node},
                      {std::string(kResourceEfa), options.efa_per_node},
                      {std::string(kResourcePods), kDefaultPodsPerNode}};
  return node;
}

GangRequest GpuGang(std::string job, int32_t pods, int64_t gpus_per_pod,
                    const SyntheticClusterOptions& shape) {
  GangRequest request;
  request.job = std::move(job);
  request.count = pods;
  int64_t gpus = std::max<int64_t>(1, shape.gpus_per_node);
  // Leave headroom for daemonsets: a whole-node pod asks for 90% of cpu and memory.
  // Whole cores and whole GiB, as people write them.
  constexpr int64_t kGi = int64_t{1} << 30;
  request.per_pod = {
      {std::string(kResourceGpu), gpus_per_pod},
      {std::string(kResourceCpu), shape.cpu_millis * 9 / 10 * gpus_per_pod / gpus / 1000 * 1000},
      {std::string(kResourceMemory), shape.memory_bytes * 9 / 10 * gpus_per_pod / gpus / kGi * kGi},
      {std::string(kResourceEfa), shape.efa_per_node * gpus_per_pod / gpus},
  };
  return request;
}

absl::StatusOr<SyntheticCluster> BuildSyntheticCluster(const SyntheticClusterOptions& options) {
  if (options.nodes < 1) {
    return absl::InvalidArgumentError(absl::StrCat("nodes (", options.nodes, ") must be >= 1"));
  }
  if (options.occupancy < 0 || options.occupancy > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("occupancy (", options.occupancy, ") must be within [0, 1]"));
  }
  ASSIGN_OR_RETURN(Topology topology, Topology::Preset(options.topology));
  SyntheticCluster cluster{ClusterSnapshot(topology)};
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  for (int i = 0; i < options.nodes; ++i) {
    NodeInfo node = SyntheticNode(options, topology, i);
    if (unit(rng) < options.not_ready_fraction) node.ready = false;
    if (unit(rng) < options.cordoned_fraction) node.unschedulable = true;
    if (unit(rng) < options.unhealthy_fraction) {
      node.labels[std::string(kNodeHealthLabel)] = "Unschedulable";
    }
    if (unit(rng) < options.tainted_fraction) {
      node.taints.push_back({"example.com/maintenance", "true", "NoSchedule"});
    }
    if (topology.depth() > 0 && unit(rng) < options.missing_label_fraction) {
      int keep = static_cast<int>(rng() % static_cast<uint64_t>(topology.depth()));
      for (int level = keep + 1; level <= topology.depth(); ++level) {
        node.labels.erase(topology.LevelLabel(level));
      }
    }
    RETURN_IF_ERROR(cluster.snapshot.AddNode(node));
    cluster.total_gpus += options.gpus_per_node;
  }

  int total_weight = 0;
  for (const JobShape& shape : kJobMix) total_weight += shape.weight;
  std::map<std::string, int64_t> job_gpus;
  std::map<std::string, std::vector<std::string>> job_pods;
  const int64_t target = static_cast<int64_t>(options.occupancy * cluster.total_gpus);
  const int64_t peak = std::min<int64_t>(
      cluster.total_gpus, static_cast<int64_t>((options.occupancy + options.churn) *
                                               cluster.total_gpus));
  int failures = 0;
  for (int serial = 0; cluster.used_gpus < peak && failures < 64; ++serial) {
    int pick = static_cast<int>(rng() % static_cast<uint64_t>(total_weight));
    const JobShape* shape = &kJobMix[0];
    for (const JobShape& s : kJobMix) {
      if (pick < s.weight) {
        shape = &s;
        break;
      }
      pick -= s.weight;
    }
    int64_t gpus_per_pod = std::min(shape->gpus_per_pod, options.gpus_per_node);
    // A job larger than an eighth of the cluster would make occupancy swing wildly.
    if (shape->pods * gpus_per_pod * 8 > cluster.total_gpus && shape->pods > 1) continue;
    std::string job = absl::StrFormat("synthetic/job-%05d", serial);
    ASSIGN_OR_RETURN(PlacementResult result,
                     cluster.snapshot.Reserve(GpuGang(job, shape->pods, gpus_per_pod, options)));
    if (!result.placed) {
      ++failures;
      continue;
    }
    failures = 0;
    job_gpus[job] = shape->pods * gpus_per_pod;
    cluster.used_gpus += shape->pods * gpus_per_pod;
    if (unit(rng) < options.bound_fraction) {
      GangRequest request = GpuGang(job, shape->pods, gpus_per_pod, options);
      for (size_t rank = 0; rank < result.placement.nodes.size(); ++rank) {
        PodInfo pod{absl::StrCat(job, "-", rank), result.placement.nodes[rank], request.per_pod,
                    job, static_cast<int32_t>(rank)};
        RETURN_IF_ERROR(cluster.snapshot.AddPod(pod));
        job_pods[job].push_back(pod.key);
      }
    }
  }
  // Finish random jobs (pods first, as Kubernetes would) until occupancy is back at the target.
  std::vector<std::string> jobs;
  for (const auto& [job, gpus] : job_gpus) jobs.push_back(job);
  std::shuffle(jobs.begin(), jobs.end(), rng);
  // Jobs whose end would undershoot the target by more than 2 % are kept running.
  const int64_t slack = cluster.total_gpus / 50;
  std::vector<std::string> running;
  for (const std::string& job : jobs) {
    if (cluster.used_gpus <= target || cluster.used_gpus - job_gpus[job] < target - slack) {
      running.push_back(job);
      continue;
    }
    for (const std::string& pod : job_pods[job]) RETURN_IF_ERROR(cluster.snapshot.RemovePod(pod));
    RETURN_IF_ERROR(cluster.snapshot.Release(job));
    cluster.used_gpus -= job_gpus[job];
  }
  std::sort(running.begin(), running.end());
  cluster.jobs = std::move(running);
  return cluster;
}

}  // namespace phalanx::placement
