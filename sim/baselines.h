// Baseline policies: how the systems users would pick instead of Phalanx place and preempt
// gangs, written from their code and documentation (docs/baselines.md has each rule and its
// source).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Policy> policy, MakeBaseline("kueue-tas"));
//
//   first-fit          Kueue without TAS in front of kube-scheduler: pods one by one on the
//                      first node that fits and their pod-affinity terms allow (required level,
//                      TP group), held at Permit by coscheduling until the gang is complete or
//                      the wait times out; per-pod DefaultPreemption.
//   kueue-tas          Kueue Topology Aware Scheduling (findTopologyAssignment: BestFit at the
//                      requested level, pooled descent, TP groups as PodSet slices); preemption
//                      until quota and a topology assignment fit, then fill-back.
//   volcano-hypernode  Volcano network-topology-aware scheduling: the lowest HyperNode tier
//                      that holds the job, the best HyperNode binpack score there, subgroups
//                      for TP groups; gangpreempt/gangreclaim inside one HyperNode.
//   kai-topology       KAI topology plugin: candidate domains from the preferred level up to
//                      the required one in bin-packing order, segments for TP groups;
//                      preempt/reclaim by simulated scenarios.
//
// All four share one Kueue-style quota book (nominal quota, cohort borrowing and lending
// limits, which jobs a queue's preemption settings let a job preempt), so that queue policy is
// the same for every baseline; what each does with the candidates is its own rule.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/cluster.h"
#include "sim/policy.h"

namespace phalanx::sim {

std::vector<std::string> BaselineNames();

struct BaselineOptions {
  // first-fit: a waiting gang whose last attempt placed and preempted nothing is not tried again
  // until something it could gain from changes (capacity released or a lower-priority job
  // started in the unit its next pod is confined to, a node, the preemption gate). Decisions
  // are the same either way; false retries every waiting gang every cycle (the tests' reference).
  bool skip_idle_attempts = true;
  int64_t* skipped_attempts = nullptr;  // if set, counts the attempts skipped (for tests)
  // Every baseline: a pending job whose request (queue, node group, shape, priority, sizes) is
  // identical to one refused since the last admission or eviction in the cycle is refused
  // without repeating the quota checks and searches. Decisions are the same either way; false
  // tries every pending job (the tests' reference).
  bool skip_repeated_refusals = true;
  int64_t* skipped_refusals = nullptr;  // if set, counts the refusals skipped (for tests)
  // Kueue's fairSharing.enable in the shared quota book (docs/baselines.md "Fair sharing"):
  // pending jobs go by their queue's share, and a job may take another queue's job when the
  // share rules allow it, within its nominal quota or not. Off, as Kueue's default.
  bool fair_sharing = false;
  // Empty: each baseline preempts by its own peer's rule (docs/baselines.md "Preemption").
  // "kueue-tas", "volcano-hypernode" or "kai-topology": the three topology-aware baselines all
  // preempt by that peer's rule and keep their own placement and admission; first-fit keeps
  // Kueue's rule without TAS. An ablation, to tell what a peer's figures owe to its preemption.
  std::string preemption_rule;
};
absl::StatusOr<std::unique_ptr<Policy>> MakeBaseline(std::string_view name,
                                                     const BaselineOptions& options = {});

// Free GPUs per node with per-domain "how many pods of g GPUs fit" aggregates, kept up to date
// incrementally for every pod shape registered up front. Exposed for tests.
class FreeCapacity {
 public:
  FreeCapacity(const ClusterModel& cluster, std::vector<int32_t> shapes);

  // Holds (pods > 0) or frees (pods < 0) `pods` pods of `gpus` GPUs in all on the node.
  void Use(int32_t node, int32_t gpus, int32_t pods);
  void SetUp(int32_t node, bool up);
  bool up(int32_t node) const { return up_[node] != 0; }
  int32_t Free(int32_t node) const;  // 0 while down
  int32_t PodRoom(int32_t node) const;  // more pods it may hold (kMaxPodsPerNode); 0 while down
  int32_t Capacity(int32_t node) const { return capacity_[node]; }
  int32_t NodeFit(int32_t node, int32_t gpus_per_pod) const;
  int64_t DomainFit(int32_t domain, int32_t gpus_per_pod) const;
  int64_t GroupFit(int32_t group, int32_t gpus_per_pod) const;
  int64_t DomainFree(int32_t domain) const { return domain_free_[domain]; }
  int64_t DomainCapacity(int32_t domain) const { return domain_capacity_[domain]; }

 private:
  int ShapeIndex(int32_t gpus_per_pod) const;
  // Unregistered shapes: summed over nodes [begin, end).
  int64_t RangeFit(int32_t begin, int32_t end, int32_t gpus_per_pod) const;
  // Moves the node's share of the per-domain and per-group counts from what was free before
  // (GPUs, pod room) to what is free now.
  void Shift(int32_t node, int32_t free_before, int32_t room_before);

  const ClusterModel& cluster_;
  std::vector<int32_t> shapes_;
  std::vector<int32_t> capacity_;
  std::vector<int32_t> used_;
  std::vector<int32_t> pods_;
  std::vector<char> up_;
  std::vector<std::vector<int64_t>> domain_fit_;  // [shape][domain]
  std::vector<std::vector<int64_t>> group_fit_;   // [shape][group]
  std::vector<int64_t> domain_free_;
  std::vector<int64_t> domain_capacity_;
};

// A node group's topology as the baselines walk it: levels 0 .. node_level()-1 are the domain
// levels (coarsest first), node_level() is the nodes themselves (kubernetes.io/hostname); level
// -1 is the whole group. Free capacity is read from a FreeCapacity, minus what Take() records
// (a trial placement of several parts).
class Topo {
 public:
  static constexpr int32_t kNoLevel = -1;       // level string empty
  static constexpr int32_t kUnknownLevel = -2;  // not a level of this group

  Topo(const ClusterModel& cluster, const FreeCapacity& free, int32_t group);
  int32_t node_level() const { return node_level_; }
  int32_t Level(const std::string& level) const;
  std::pair<int32_t, int32_t> Range(int32_t level, int32_t unit) const;  // node range
  std::vector<int32_t> Units(int32_t level) const;                       // in node order
  std::vector<int32_t> UnitsIn(int32_t level, int32_t begin, int32_t end) const;
  std::vector<int32_t> Children(int32_t level, int32_t unit) const;
  int32_t UnitOf(int32_t node, int32_t level) const;
  int32_t NodeFree(int32_t node) const;
  int64_t Fit(int32_t level, int32_t unit, int32_t gpus_per_pod) const;  // pods that fit
  int64_t NodeFit(int32_t node, int32_t gpus_per_pod) const;
  int64_t Free(int32_t level, int32_t unit) const;                       // free GPUs
  int64_t Capacity(int32_t level, int32_t unit) const;
  void Take(int32_t node, int32_t gpus);

 private:
  const ClusterModel& cluster_;
  const FreeCapacity& free_;
  int32_t group_;
  int32_t node_level_;
  std::map<int32_t, int32_t> taken_;                        // node -> GPUs
  std::map<int32_t, int32_t> taken_pods_;                   // node -> pods
  std::map<std::pair<int32_t, int32_t>, int64_t> taken_units_;  // (level, domain) -> GPUs
};

// The placement rules alone, for the hand-checked tests: rank -> node for `pods` pods of
// `job`'s shape inside node group `group`, or empty if the baseline would not place it.
std::vector<int32_t> PlaceKueueTas(const ClusterModel& cluster, const FreeCapacity& free,
                                   const TraceJob& job, int32_t group, int32_t pods);
// `domain` >= 0: inside that hyperNode only (gangpreempt's nomination in one domain).
std::vector<int32_t> PlaceVolcano(const ClusterModel& cluster, const FreeCapacity& free,
                                  const TraceJob& job, int32_t group, int32_t pods,
                                  int32_t domain = -1);
std::vector<int32_t> PlaceKai(const ClusterModel& cluster, const FreeCapacity& free,
                              const TraceJob& job, int32_t group, int32_t pods);
// Per-pod first fit for the pods after `placed` (ranks placed.size() ...): as many as fit
// (possibly fewer than `pods`), each on the first node with room that its pod-affinity terms
// allow, preferring the preferred-level domain of the gang's first pod.
std::vector<int32_t> PlaceFirstFit(const ClusterModel& cluster, const FreeCapacity& free,
                                   const TraceJob& job, int32_t group, int32_t pods,
                                   const std::vector<int32_t>& placed = {});

}  // namespace phalanx::sim
