// A first-order communication cost model: the time of one all-reduce for a placed gang, and its
// slowdown against the ideal placement of the same gang. Documented with its constants in
// docs/simulator.md ("Communication cost model").
//
//   double slowdown = CommSlowdown(cluster, placement_nodes, /*gpus_per_pod=*/8);
//   // 1.0 = as good as packing the gang into the tightest domain; 1.3 = 30 % slower
//
// Model: NCCL-style hierarchical ring. Inside a node, a ring over its GPUs on NVLink; across
// nodes, rings in rank order over EFA (or over NVLink between nodes of one NVL72 clique). A
// ring runs at the pace of its slowest hop, and every network layer a hop climbs costs latency
// and bandwidth efficiency.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.h"

namespace phalanx::sim {

struct CommConstants {
  double message_bytes = 1024.0 * 1024 * 1024;  // one all-reduce of 1 GiB (bf16 gradients)
  double nvlink_hop_latency_s = 2e-6;
  double efa_hop_latency_s = 20e-6;          // one EFA ring step inside the lowest domain
  double per_layer_latency_s = 5e-6;         // extra per network layer climbed
  double per_layer_bandwidth_factor = 0.85;  // effective EFA bandwidth kept per layer climbed
};

// Seconds for one all-reduce of `message_bytes` across all GPUs of the gang whose rank r runs
// on node rank_nodes[r], each pod using `gpus_per_pod` GPUs.
double AllReduceSeconds(const ClusterModel& cluster, const std::vector<int32_t>& rank_nodes,
                        int32_t gpus_per_pod, const CommConstants& constants = {});

// AllReduceSeconds(placement) / AllReduceSeconds(ideal), where ideal packs the same pods onto
// the fewest consecutive nodes of the same node group (the tightest domains, ranks in order).
// 1.0 for single-node gangs.
double CommSlowdown(const ClusterModel& cluster, const std::vector<int32_t>& rank_nodes,
                    int32_t gpus_per_pod, const CommConstants& constants = {});

}  // namespace phalanx::sim
