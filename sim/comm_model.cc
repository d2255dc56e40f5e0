#include "sim/comm_model.h"

#include <algorithm>
#include <cmath>

namespace phalanx::sim {

namespace {

// Nodes in rank order with consecutive duplicates folded (several pods on one node form one
// ring member), and the most GPUs the gang uses on any one node.
std::vector<int32_t> RingMembers(const std::vector<int32_t>& rank_nodes, int32_t gpus_per_pod,
                                 int32_t* max_gpus_on_node) {
  std::vector<int32_t> members;
  std::vector<std::pair<int32_t, int32_t>> per_node;  // node -> GPUs, small linear map
  for (int32_t node : rank_nodes) {
    if (members.empty() || members.back() != node) members.push_back(node);
    auto it = std::find_if(per_node.begin(), per_node.end(),
                           [&](const auto& p) { return p.first == node; });
    if (it == per_node.end())
      per_node.push_back({node, gpus_per_pod});
    else
      it->second += gpus_per_pod;
  }
  if (members.size() > 1 && members.front() == members.back()) members.pop_back();
  *max_gpus_on_node = 0;
  for (const auto& p : per_node) *max_gpus_on_node = std::max(*max_gpus_on_node, p.second);
  // A node visited twice in a ring (ranks interleaved across nodes) still counts once per visit:
  // each visit is a hop the data takes.
  return members;
}

double RingSeconds(double bytes, int32_t members, double bandwidth, double latency) {
  if (members <= 1) return 0;
  const double n = members;
  return 2 * (n - 1) / n * bytes / bandwidth + 2 * (n - 1) * latency;
}

}  // namespace

double AllReduceSeconds(const ClusterModel& cluster, const std::vector<int32_t>& rank_nodes,
                        int32_t gpus_per_pod, const CommConstants& c) {
  if (rank_nodes.empty()) return 0;
  int32_t local_gpus = 0;
  const std::vector<int32_t> ring = RingMembers(rank_nodes, std::max(gpus_per_pod, 1), &local_gpus);
  const InstanceType* type = cluster.nodes[rank_nodes[0]].type;
  const double node_nvlink = type->nvlink_tbytes_per_s * 1e12;
  const double gpu_nvlink = node_nvlink / std::max(type->gpus, 1);
  // Inside a node: ring over its GPUs on NVLink.
  const double intra = RingSeconds(c.message_bytes, local_gpus, gpu_nvlink, c.nvlink_hop_latency_s);
  if (ring.size() <= 1) return intra;
  // Across nodes: the slowest hop paces the ring; the worst latency paces each step.
  double bandwidth = 1e300;
  double latency = 0;
  for (size_t i = 0; i < ring.size(); ++i) {
    const int32_t a = ring[i];
    const int32_t b = ring[(i + 1) % ring.size()];
    const SimNode& na = cluster.nodes[a];
    const NodeGroup& group = cluster.groups[na.group];
    int32_t crossed = cluster.LevelsCrossed(a, b);
    const bool clique_level = type->nvlink_domain_nodes > 1 && !group.levels.empty() &&
                              group.levels.back() == "nvidia.com/gpu.clique";
    double hop_bandwidth;
    double hop_latency;
    if (clique_level && crossed == 0) {
      hop_bandwidth = node_nvlink;  // multi-node NVLink inside an NVL72 clique
      hop_latency = c.nvlink_hop_latency_s;
    } else {
      const int32_t network_layers = std::max(0, crossed - (clique_level ? 1 : 0));
      hop_bandwidth =
          type->efa_gbytes_per_s * 1e9 * std::pow(c.per_layer_bandwidth_factor, network_layers);
      hop_latency = c.efa_hop_latency_s + network_layers * c.per_layer_latency_s;
    }
    bandwidth = std::min(bandwidth, hop_bandwidth);
    latency = std::max(latency, hop_latency);
  }
  return intra +
         RingSeconds(c.message_bytes, static_cast<int32_t>(ring.size()), bandwidth, latency);
}

double CommSlowdown(const ClusterModel& cluster, const std::vector<int32_t>& rank_nodes,
                    int32_t gpus_per_pod, const CommConstants& c) {
  if (rank_nodes.empty()) return 1.0;
  const SimNode& first = cluster.nodes[rank_nodes[0]];
  const NodeGroup& group = cluster.groups[first.group];
  const int32_t node_gpus = std::max(first.type->gpus, 1);
  const int32_t per_pod = std::max(gpus_per_pod, 1);
  const int32_t pods_per_node = std::max(1, node_gpus / per_pod);
  // Ideal: the same pods packed onto the first nodes of the group, whose consecutive ranges
  // are the tightest domains by construction.
  std::vector<int32_t> ideal;
  ideal.reserve(rank_nodes.size());
  for (size_t r = 0; r < rank_nodes.size(); ++r) {
    const int32_t node = group.begin + static_cast<int32_t>(r) / pods_per_node;
    ideal.push_back(std::min(node, group.end - 1));
  }
  const double best = AllReduceSeconds(cluster, ideal, gpus_per_pod, c);
  const double actual = AllReduceSeconds(cluster, rank_nodes, gpus_per_pod, c);
  if (best <= 0) return 1.0;
  return std::max(1.0, actual / best);
}

}  // namespace phalanx::sim
