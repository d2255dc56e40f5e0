// Synthetic clusters for benchmarks, the `phalanx bench placement` / `phalanx demo` commands, the
// property tests and (later) the simulator: one generator so every consumer measures the same
// thing. Deterministic for a given seed.
//
//   SyntheticClusterOptions options{.nodes = 4096, .occupancy = 0.7, .seed = 7};
//   ASSIGN_OR_RETURN(SyntheticCluster cluster, BuildSyntheticCluster(options));
//   cluster.snapshot.Place(GpuGang("bench/g64", 64, 8));
//
// Layout: nodes are numbered node-00000...; `nodes_per_leaf` consecutive nodes share a
// finest-level domain, and `fanout` consecutive domains share a parent, up to the coarsest level.
// Occupancy is produced by reserving a realistic mix of jobs (single-GPU experiments to 64-node
// pre-training gangs) past the target and then finishing random jobs back down to it, so free
// capacity is fragmented the way churn fragments a real cluster.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/cluster_snapshot.h"

namespace phalanx::placement {

struct SyntheticClusterOptions {
  std::string topology = "eks-4layer";
  int nodes = 4096;
  int nodes_per_leaf = 16;  // nodes per finest-level domain (an NVL72 clique is 18)
  int fanout = 4;           // child domains per domain above the finest level
  // Per node: a p5.48xlarge by default.
  int64_t gpus_per_node = 8;
  int64_t cpu_millis = 192000;
  int64_t memory_bytes = int64_t{2} << 40;
  int64_t efa_per_node = 32;
  double occupancy = 0.7;   // fraction of GPUs held by synthetic jobs
  double churn = 0.1;       // fill to occupancy + churn, then finish jobs back down
  double bound_fraction = 0.5;  // jobs whose pods are bound (slots converted to pod usage)
  // Node health noise, each a fraction of nodes.
  double not_ready_fraction = 0;
  double cordoned_fraction = 0;
  double unhealthy_fraction = 0;
  double tainted_fraction = 0;       // NoSchedule taint "example.com/maintenance"
  double missing_label_fraction = 0;  // loses its finest topology labels
  uint64_t seed = 1;
};

struct SyntheticCluster {
  ClusterSnapshot snapshot;
  std::vector<std::string> jobs;  // synthetic jobs still holding reservations, sorted
  int64_t total_gpus = 0;
  int64_t used_gpus = 0;          // GPUs held by those jobs
};

absl::StatusOr<SyntheticCluster> BuildSyntheticCluster(const SyntheticClusterOptions& options);

// A gang of `pods` pods with `gpus_per_pod` GPUs each and a p5-proportional share of cpu,
// memory and EFA per GPU.
GangRequest GpuGang(std::string job, int32_t pods, int64_t gpus_per_pod,
                    const SyntheticClusterOptions& shape = {});

// The NodeInfo of synthetic node `index` (labels by position, p5 allocatable).
NodeInfo SyntheticNode(const SyntheticClusterOptions& options, const Topology& topology,
                       int index);

}  // namespace phalanx::placement
