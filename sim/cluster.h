// The simulated cluster: what the user writes (ClusterSpec, from YAML or the built-in default)
// and what the simulator builds from it (ClusterModel: labelled nodes in a topology tree).
//
//   ASSIGN_OR_RETURN(ClusterSpec spec, LoadClusterSpec("cluster.yaml"));
//   ASSIGN_OR_RETURN(ClusterModel cluster, BuildCluster(spec));
//   cluster.nodes[0].name;                         // "p5-0000"
//   cluster.nodes[0].labels.at("topology.k8s.aws/network-node-layer-3");
//
// Node order is topology order: every domain is a contiguous range of node indices, so the
// baselines, the cost model and the metrics can reason about domains with index arithmetic.
// The YAML format is documented in docs/simulator.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/resources.h"
#include "sim/instance_catalog.h"

namespace phalanx::sim {

inline constexpr std::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";
inline constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";
// Every simulated node names its node group; the group's ResourceFlavor selects on it.
inline constexpr std::string_view kNodeGroupLabel = "sim.phalanx.dev/node-group";

// Node label keys of a topology preset, coarsest first (scheduler/topology.h); empty if unknown.
std::vector<std::string> PresetLevels(std::string_view preset);

struct NodeGroupSpec {
  std::string name;           // also the ResourceFlavor name of its nodes
  std::string instance_type;  // a catalog name
  int32_t count = 0;
  std::string preset;  // eks | eks-4layer | gb200
  // Children per domain at each preset level, coarsest first; the last entry is nodes per
  // lowest domain (a layer-3 block for eks, an NVL72 clique for gb200). Top-level domains are
  // as many as `count` needs.
  std::vector<int32_t> fanout;
};

struct FlavorQuota {
  std::string flavor;  // a node group name
  ResourceList nominal;
  std::optional<ResourceList> borrowing_limit;  // unset = may borrow without limit
  std::optional<ResourceList> lending_limit;    // unset = lends everything unused
};

// A team's ClusterQueue (with a LocalQueue of the same name), Kueue semantics.
struct QueueSpec {
  std::string name;
  std::string cohort;
  std::vector<FlavorQuota> flavors;
  std::string queueing_strategy = "BestEffortFIFO";    // or StrictFIFO
  // The ClusterTrainingQueue CRD's defaults (crds/phalanx.dev_clustertrainingqueues.yaml), so a
  // queue copied from a cluster simulates the same policy.
  std::string within_cluster_queue = "Never";   // Never | LowerPriority | ...
  std::string reclaim_within_cohort = "Never";  // Never | LowerPriority | Any
  // borrowWithinCohort: whether a job that must borrow may preempt lower-priority borrowers of
  // other queues in the cohort, those with priority <= the threshold (unset = any below it).
  std::string borrow_within_cohort = "Never";  // Never | LowerPriority
  std::optional<int32_t> borrow_max_priority_threshold;
  double fair_sharing_weight = 1.0;
  // Phalanx only (ClusterQueue locality_wait_seconds, docs/admission.md); unset = its default.
  std::optional<int64_t> locality_wait_s;
  // Phalanx only (ClusterQueue backfill_quota, docs/admission.md "Backfill for quota"):
  // Never | HoldForHead, the latter only without a cohort.
  std::string backfill_quota = "Never";
};

// Pods one node holds at most: the kubelet's default maxPods, the simulated nodes' `pods`
// allocatable. Every policy and the engine's check count against it, GPU-less pods included.
inline constexpr int32_t kMaxPodsPerNode = 110;

// Pods of `gpus_per_pod` GPUs an empty node of `node_gpus` GPUs holds: as many as its GPUs
// allow, at most kMaxPodsPerNode (the only bound for pods without GPUs).
inline int32_t PodsPerNode(int32_t gpus_per_pod, int32_t node_gpus) {
  if (gpus_per_pod <= 0) return kMaxPodsPerNode;
  return std::min(kMaxPodsPerNode, node_gpus / gpus_per_pod);
}

// Node failures: exponential time between failures per node, fixed repair time.
struct FailureSpec {
  double node_mtbf_hours = 0;  // 0 = no failures
  double repair_hours = 4;
};

struct ClusterSpec {
  std::string name = "default";
  std::string source = "built-in";  // file path, for messages
  std::vector<NodeGroupSpec> groups;
  std::vector<QueueSpec> queues;
  FailureSpec failures;
  // Seconds between admission cycles while something is waiting (Kueue/kube-scheduler run
  // continuously; the simulator batches events into cycles at this granularity).
  double cycle_seconds = 10;
};

// The built-in default: `nodes` p5.48xlarge in EKS 3-layer topology (16 nodes per layer-3
// block, 4 blocks per layer-2, 2 layer-2 per layer-1), three teams in one cohort sharing the GPUs
// 40/35/25 with borrowing and preemption (withinClusterQueue LowerPriority, reclaimWithinCohort
// Any, set explicitly: the queue defaults are the CRD's Never / Never).
ClusterSpec DefaultClusterSpec(int32_t nodes = 128);

// Parses a cluster YAML file; bad input is InvalidArgument naming the file, line and field.
absl::StatusOr<ClusterSpec> LoadClusterSpec(const std::string& path);
absl::StatusOr<ClusterSpec> ParseClusterSpec(const std::string& text, const std::string& source);

// A domain of the topology tree. Nodes [begin, end) belong to it.
struct Domain {
  int32_t group = 0;
  int32_t level = 0;    // index into the group's levels (0 = coarsest)
  int32_t parent = -1;  // domain index, -1 for top-level domains
  int32_t begin = 0;
  int32_t end = 0;
  std::string value;              // the label value
  std::vector<int32_t> children;  // child domains (empty at the lowest level: nodes are below)
  int32_t size() const { return end - begin; }
};

struct SimNode {
  std::string name;
  int32_t group = 0;
  const InstanceType* type = nullptr;
  std::map<std::string, std::string> labels;
  ResourceList allocatable;      // canonical units
  std::vector<int32_t> domains;  // domain index per level of its group, coarsest first
};

struct NodeGroup {
  NodeGroupSpec spec;
  const InstanceType* type = nullptr;
  std::vector<std::string> levels;  // label keys, coarsest first (hostname implicit)
  int32_t begin = 0;                // node range of the group
  int32_t end = 0;
  // Domains of each level, in node order.
  std::vector<std::vector<int32_t>> level_domains;
};

struct ClusterModel {
  ClusterSpec spec;
  std::vector<NodeGroup> groups;
  std::vector<SimNode> nodes;
  std::vector<Domain> domains;
  int64_t total_gpus = 0;

  // Index of the node named `name`, or -1.
  int32_t NodeIndex(std::string_view name) const;
  // Levels (counted from the finest network level up) that a hop between two nodes climbs:
  // 0 = same lowest domain, levels.size() = different top-level domains or node groups.
  int32_t LevelsCrossed(int32_t a, int32_t b) const;
  // Index of `level` (a label key) in the group's levels, -1 if the group does not have it.
  int32_t LevelIndex(int32_t group, std::string_view level) const;

  std::map<std::string, int32_t> node_index;
};

// The most GPUs `queue` could ever hold of node group (flavor) `flavor`, by Kueue's quota rules:
// its nominal quota plus what it may borrow from the rest of its cohort (their nominal quota,
// or their lendingLimit where set), capped by its own borrowingLimit. 0 if the queue does not
// list the flavor: a ClusterQueue uses only the flavors of its own resource groups.
int64_t ReachableGpus(const ClusterSpec& spec, const QueueSpec& queue, std::string_view flavor);

// Builds labelled nodes and the domain tree; InvalidArgument for inconsistent specs.
absl::StatusOr<ClusterModel> BuildCluster(const ClusterSpec& spec);

// "128 x p5.48xlarge (eks 2/4/16)", for tables and the JSON header.
std::string DescribeCluster(const ClusterModel& cluster);

}  // namespace phalanx::sim
