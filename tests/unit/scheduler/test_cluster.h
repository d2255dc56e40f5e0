// Small hand-built clusters for the placement core's unit tests.
//
//   ClusterSnapshot snapshot(Eks());
//   AddNodes(snapshot, {"a", "b", "nn-1"}, "n", 4);       // n0..n3 under layer-3 "nn-1"
//   ASSERT_OK_AND_ASSIGN(PlacementResult r, snapshot.Reserve(Gang("ns/j", 4, 8, kLayer3)));
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"

namespace phalanx::placement::testing {

inline const std::string kLayer1 = "topology.k8s.aws/network-node-layer-1";
inline const std::string kLayer2 = "topology.k8s.aws/network-node-layer-2";
inline const std::string kLayer3 = "topology.k8s.aws/network-node-layer-3";
inline const std::string kClique = "nvidia.com/gpu.clique";
inline const std::string kHostname = "kubernetes.io/hostname";
inline constexpr int64_t kGi = int64_t{1} << 30;

inline Topology Eks() { return *Topology::Preset("eks"); }
inline Topology Gb200() { return *Topology::Preset("gb200"); }

// A GPU node whose topology labels are `path`, coarsest first (shorter = missing labels).
inline NodeInfo GpuNode(const Topology& topology, std::string name,
                        const std::vector<std::string>& path, int64_t gpus = 8) {
  NodeInfo node;
  node.name = std::move(name);
  for (size_t i = 0; i < path.size(); ++i) node.labels[topology.levels()[i]] = path[i];
  node.allocatable = {{"nvidia.com/gpu", gpus}, {"cpu", 192000}, {"memory", 2048 * kGi},
                      {"vpc.amazonaws.com/efa", 32}, {"pods", 110}};
  return node;
}

// Adds `count` nodes named <prefix>0.. under `path`; returns their names.
inline std::vector<std::string> AddNodes(ClusterSnapshot& snapshot,
                                         const std::vector<std::string>& path,
                                         const std::string& prefix, int count,
                                         int64_t gpus = 8) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    names.push_back(absl::StrCat(prefix, i));
    EXPECT_OK(snapshot.AddNode(GpuNode(snapshot.topology(), names.back(), path, gpus)));
  }
  return names;
}

inline GangRequest Gang(std::string job, int32_t count, int64_t gpus,
                        std::string required = "") {
  GangRequest request;
  request.job = std::move(job);
  request.count = count;
  request.per_pod = {{"nvidia.com/gpu", gpus}};
  request.required_level = std::move(required);
  return request;
}

// Binds a plain (gang-less) pod using `gpus` GPUs.
inline void Occupy(ClusterSnapshot& snapshot, const std::string& node, int64_t gpus) {
  static int serial = 0;
  EXPECT_OK(snapshot.AddPod({absl::StrCat("other/pod-", serial++), node,
                             {{"nvidia.com/gpu", gpus}}, "", -1}));
}

// Every node's usage, to check that a call changed nothing.
inline std::vector<ResourceVector> NodeUsage(const ClusterSnapshot& snapshot) {
  std::vector<ResourceVector> used;
  for (const auto& node : snapshot.nodes()) used.push_back(node.used);
  return used;
}

inline std::set<std::string> Distinct(const std::vector<std::string>& nodes) {
  return {nodes.begin(), nodes.end()};
}

inline std::string LabelOf(const ClusterSnapshot& snapshot, const std::string& node,
                           const std::string& label) {
  const auto& labels = snapshot.nodes()[snapshot.FindNode(node)].info.labels;
  auto it = labels.find(label);
  return it == labels.end() ? "" : it->second;
}

}  // namespace phalanx::placement::testing
