// Baseline policies: how the systems users would pick instead of Phalanx place gangs, written
// from their documented behaviour (docs/baselines.md has each rule and its source).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Policy> policy, MakeBaseline("kueue-tas"));
//
//   first-fit          kube-scheduler placing pod by pod on the first node that fits, behind a
//                      coscheduling gang gate (pods wait at Permit, holding their node, until
//                      the whole gang is placed or the wait times out); Kueue quota in front.
//   kueue-tas          Kueue quota admission with Topology Aware Scheduling: BestFit domain at
//                      the requested level, then most-free children first.
//   volcano-hypernode  Volcano network-topology-aware scheduling: the lowest HyperNode tier
//                      where the gang fits, the fullest HyperNode there (binpack), nodes binpacked.
//   kai-topology       KAI scheduler topology plugin: from the preferred level up to the
//                      required one, the first level where a domain fits, the fullest domain.
//
// All four share one Kueue-style quota book (nominal quota, cohort borrowing, priority
// preemption inside a queue and reclaim of borrowed quota) so that the comparison isolates
// placement; the victims of that preemption are chosen by quota and priority only.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/cluster.h"
#include "sim/policy.h"

namespace phalanx::sim {

std::vector<std::string> BaselineNames();
absl::StatusOr<std::unique_ptr<Policy>> MakeBaseline(std::string_view name);

// Free GPUs per node with per-domain "how many pods of g GPUs fit" aggregates, kept up to date
// incrementally for every pod shape registered up front. Exposed for tests.
class FreeCapacity {
 public:
  FreeCapacity(const ClusterModel& cluster, std::vector<int32_t> shapes);

  void Use(int32_t node, int32_t gpus);  // gpus < 0 frees
  void SetUp(int32_t node, bool up);
  bool up(int32_t node) const { return up_[node] != 0; }
  int32_t Free(int32_t node) const;  // 0 while down
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
  void Contribute(int32_t node, int sign);

  const ClusterModel& cluster_;
  std::vector<int32_t> shapes_;
  std::vector<int32_t> capacity_;
  std::vector<int32_t> used_;
  std::vector<char> up_;
  std::vector<std::vector<int64_t>> domain_fit_;  // [shape][domain]
  std::vector<std::vector<int64_t>> group_fit_;   // [shape][group]
  std::vector<int64_t> domain_free_;
  std::vector<int64_t> domain_capacity_;
};

// The placement rules alone, for the hand-checked tests: rank -> node for `pods` pods of
// `job`'s shape inside node group `group`, or empty if the baseline would not place it.
std::vector<int32_t> PlaceKueueTas(const ClusterModel& cluster, const FreeCapacity& free,
                                   const TraceJob& job, int32_t group, int32_t pods);
std::vector<int32_t> PlaceVolcano(const ClusterModel& cluster, const FreeCapacity& free,
                                  const TraceJob& job, int32_t group, int32_t pods);
std::vector<int32_t> PlaceKai(const ClusterModel& cluster, const FreeCapacity& free,
                              const TraceJob& job, int32_t group, int32_t pods);
// Per-pod first fit: as many pods as fit (possibly fewer than `pods`) on the first nodes.
std::vector<int32_t> PlaceFirstFit(const ClusterModel& cluster, const FreeCapacity& free,
                                   const TraceJob& job, int32_t group, int32_t pods);

}  // namespace phalanx::sim
