// A bounded, read-only summary of a ClusterSnapshot for people: node counts by condition, pods,
// reservations, GPUs, and free GPUs per topology domain. The Placement service's Snapshot RPC
// serves it to `kubectl phalanx`; it is plain data so the placement core stays free of I/O.
//
//   SnapshotSummary summary = Summarize(snapshot, {.max_level = 2, .max_domains = 100});
//   for (const DomainSummary& d : summary.domains)
//     fmt::print("{} {} free GPUs\n", d.domain.ToString(), d.free_gpus);
//
// Cost: O(nodes x depth + domains listed); callers hold the snapshot's lock meanwhile.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scheduler/cluster_snapshot.h"
#include "scheduler/placement_types.h"

namespace phalanx::placement {

struct SummaryOptions {
  // Deepest level whose domains are listed, as a level index (0 = the cluster only); -1 = every
  // label level. Single nodes are never listed: a 10,000-node summary would not be a summary.
  int max_level = -1;
  // At most this many domains, coarsest first; <= 0 lists none.
  int max_domains = 1000;
  // Fill DomainSummary::free_gpu_histogram.
  bool histogram = false;
  // Fill SnapshotSummary::reservation_list (one entry per reserved gang).
  bool reservations = false;
};

// One gang's reservation: which node each rank holds.
struct ReservationSummary {
  std::string job;                 // "namespace/name"
  std::vector<std::string> nodes;  // nodes[rank]
  DomainId domain;

  friend bool operator==(const ReservationSummary&, const ReservationSummary&) = default;
};

struct DomainSummary {
  DomainId domain;
  int level_index = 0;             // 0 = the cluster, 1 = the coarsest label level, ...
  int32_t nodes = 0;               // live nodes below, schedulable or not
  int32_t schedulable_nodes = 0;
  int64_t gpus = 0;                // allocatable GPUs of the schedulable nodes below
  int64_t free_gpus = 0;           // over the schedulable nodes below
  // Schedulable nodes by free GPUs (kGpuBuckets entries, the last "or more"); empty unless
  // SummaryOptions::histogram.
  std::vector<int32_t> free_gpu_histogram;

  friend bool operator==(const DomainSummary&, const DomainSummary&) = default;
};

struct SnapshotSummary {
  std::vector<std::string> levels;  // topology label keys, coarsest first
  int32_t nodes = 0;                // live nodes
  int32_t schedulable_nodes = 0;
  // Live nodes by NodeCondition name ("Schedulable", "NotReady", "Unschedulable",
  // "Unhealthy"); conditions no node is in are absent.
  std::map<std::string, int32_t> nodes_by_condition;
  int32_t tainted_nodes = 0;        // schedulable, but with a NoSchedule / NoExecute taint
  int64_t pods = 0;
  int32_t reservations = 0;
  int64_t gpus = 0;                 // allocatable GPUs of the schedulable nodes
  int64_t free_gpus = 0;            // free GPUs of the schedulable nodes
  // Domains holding at least one live node, level by level, each level in topology order.
  std::vector<DomainSummary> domains;
  int32_t total_domains = 0;        // how many matched max_level before max_domains cut them
  // Every reservation sorted by job, when SummaryOptions::reservations asked for them.
  std::vector<ReservationSummary> reservation_list;

  friend bool operator==(const SnapshotSummary&, const SnapshotSummary&) = default;
};

// "Schedulable", "NotReady", "Unschedulable" or "Unhealthy": the names Explanation uses.
std::string_view NodeConditionName(NodeCondition condition);

SnapshotSummary Summarize(const ClusterSnapshot& snapshot, const SummaryOptions& options = {});

}  // namespace phalanx::placement
