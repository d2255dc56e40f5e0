// Realistic API-server JSON for the objects phalanx-scheduler's informers hold: EKS GPU nodes and
// their pods (training-gang ranks and the DaemonSet pods every GPU node runs), with everything
// a real list response carries (managedFields, kubectl's last-applied annotation, volumes, env,
// container statuses, a node's images). Shared by the decode and memory benchmarks and by the
// decode test that checks the fast decoder against a plain DOM reading of the same text.
//
//   std::string page = phalanx::bench::ListJson("PodList", 0, 500, [](int i) {
//     return phalanx::bench::ClusterPodJson(i, {.nodes = 10000});
//   });
//   std::string node = phalanx::bench::NodeJson(7);
//   phalanx::bench::NodeName(7);   // "ip-10-1-0-8.ec2.internal"
//
// Deterministic: the same arguments always give the same bytes.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace phalanx::bench {

// The benchmark's training pod `i` (about 5.4 KB): rank i % 64 of job-<i/64> in namespace
// team-<i % 20>, 8 GPUs and 32 EFA devices, an init container and a sidecar. The overload
// without a node keeps the node name kube_decode_bench has always used, so decode figures stay
// comparable across versions.
std::string TrainingPodJson(int i);
std::string TrainingPodJson(int i, const std::string& node_name);

// What every EKS GPU node runs as DaemonSets, with their requests: aws-node, kube-proxy, the
// NVIDIA and EFA device plugins, DCGM exporter, node exporter, fluent-bit, the EBS CSI node
// plugin and the pod identity agent.
struct DaemonSet {
  const char* name;
  const char* namespace_;
  const char* image;
  const char* cpu;
  const char* memory;
};
inline constexpr int kDaemonSetKinds = 9;
extern const DaemonSet kDaemonSets[kDaemonSetKinds];

// The pod of DaemonSet kDaemonSets[kind % kDaemonSetKinds] on `node_name`, about 6 KB.
std::string DaemonSetPodJson(int i, int kind, const std::string& node_name);

// Node n's name and JSON: a p5.48xlarge with the `eks` preset's three topology labels (16 nodes
// per layer-3 domain, 256 per layer-2, 2,048 per layer-1), GPU feature-discovery labels, the
// nvidia.com/gpu taint, 8 GPUs, 32 EFA devices and the image list a kubelet reports (~11 KB).
std::string NodeName(int n);
std::string NodeJson(int n);

struct PodMix {
  int nodes = 10000;
  // One pod in `pods_per_node` is a training rank (8 GPUs: one per node when the cluster has
  // pods_per_node pods per node), the others are DaemonSet pods.
  int pods_per_node = 10;
};
// Pod `i` of a cluster laid out by `mix`: pods 0..pods_per_node-1 land on node 0, and so on,
// wrapping around the nodes.
std::string ClusterPodJson(int i, const PodMix& mix);

// A list response ({"kind":..,"apiVersion":"v1","metadata":{"resourceVersion":"2000000"},
// "items":[..]}) holding item(first) .. item(first + count - 1); `continue_token`, if not empty,
// goes into the metadata as the API server writes it when more pages follow.
std::string ListJson(std::string_view kind, int first, int count,
                     const std::function<std::string(int)>& item,
                     std::string_view continue_token = "");

}  // namespace phalanx::bench
