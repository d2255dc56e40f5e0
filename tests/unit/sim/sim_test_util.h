// Small clusters and jobs for the simulator's tests.
//
//   ClusterModel cluster = SmallCluster();   // 16 p5 nodes: 4 layer-3 blocks of 4
//   TraceJob job = Gang("a", 2, 8);
#pragma once

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/cluster.h"
#include "sim/trace.h"

namespace phalanx::sim::testing {

// One node group of `nodes` p5.48xlarge: fanout [2, 2, 4] (4 nodes per layer-3 block, 2 blocks
// per layer-2, 2 layer-2 per layer-1) and one queue "q" owning every GPU, preempting lower
// priorities (withinClusterQueue LowerPriority; the CRD's default would be Never).
inline ClusterModel SmallCluster(int32_t nodes = 16) {
  ClusterSpec spec;
  spec.groups.push_back(NodeGroupSpec{"p5", "p5.48xlarge", nodes, "eks", {2, 2, 4}});
  QueueSpec queue;
  queue.name = "q";
  queue.within_cluster_queue = "LowerPriority";
  queue.reclaim_within_cohort = "Any";
  queue.flavors.push_back(
      FlavorQuota{"p5", {{"nvidia.com/gpu", int64_t{nodes} * 8}}, std::nullopt, std::nullopt});
  spec.queues.push_back(queue);
  absl::StatusOr<ClusterModel> cluster = BuildCluster(spec);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return *std::move(cluster);
}

// `nodes` p6e-gb200.36xlarge (4 GPUs each) in the gb200 preset with `fanout` (the last entry is
// nodes per NVL72 clique) and one queue "all" owning every GPU.
inline ClusterModel Gb200Cluster(int32_t nodes, std::vector<int32_t> fanout) {
  ClusterSpec spec;
  spec.groups.push_back(
      NodeGroupSpec{"gb", "p6e-gb200.36xlarge", nodes, "gb200", std::move(fanout)});
  QueueSpec queue;
  queue.name = "all";
  queue.flavors.push_back(
      FlavorQuota{"gb", {{"nvidia.com/gpu", int64_t{nodes} * 4}}, std::nullopt, std::nullopt});
  spec.queues.push_back(queue);
  absl::StatusOr<ClusterModel> cluster = BuildCluster(spec);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return *std::move(cluster);
}

inline TraceJob Gang(std::string name, int32_t pods, int32_t gpus_per_pod, double submit = 0,
                     double duration = 3600) {
  TraceJob job;
  job.name = std::move(name);
  job.queue = "q";
  job.pods = pods;
  job.gpus_per_pod = gpus_per_pod;
  job.submit_s = submit;
  job.duration_s = duration;
  job.origin = "test";
  return job;
}

inline constexpr char kLayer2[] = "topology.k8s.aws/network-node-layer-2";
inline constexpr char kLayer3[] = "topology.k8s.aws/network-node-layer-3";

}  // namespace phalanx::sim::testing
