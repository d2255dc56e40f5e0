// Synthetic admission configurations for benchmarks, `phalanx bench admission` and (later) the
// simulator: many ClusterQueues in cohorts over one GPU flavor, and a realistic mix of pending
// training jobs (many single-node experiments, a few 32-node pre-training gangs, some elastic,
// some with a required topology level). Deterministic for a given seed.
//
//   SyntheticQueuesOptions options{.queues = 100, .cohorts = 10, .pending = 10000};
//   Snapshot snapshot = BuildSyntheticQueues(options);
//   CycleResult result = RunAdmissionCycle(snapshot, service);  // service over 4,096 nodes
//
// Quota: `total_gpus` is split evenly as nominal quota over the queues, so the cohorts together
// own exactly the cluster; a third of the queues cap borrowing, a third cap lending.
#pragma once

#include <cstdint>
#include <string>

#include "operator/admission/types.h"

namespace phalanx::admission {

struct SyntheticQueuesOptions {
  int queues = 100;
  int cohorts = 10;
  int pending = 10000;
  int64_t total_gpus = 4096 * 8;
  int64_t gpus_per_pod = 8;
  // Topology levels used by the jobs' required levels (defaults: the eks-4layer preset).
  std::string block_level = "topology.k8s.aws/network-node-layer-4";
  std::string spine_level = "topology.k8s.aws/network-node-layer-3";
  // The flavor selects nodes by this label (synthetic nodes are all p5.48xlarge); "" = none.
  std::string flavor_label = "node.kubernetes.io/instance-type";
  std::string flavor_value = "p5.48xlarge";
  double strict_fifo_fraction = 0.2;
  double elastic_fraction = 0.1;
  uint64_t seed = 1;
};

Snapshot BuildSyntheticQueues(const SyntheticQueuesOptions& options);

// The steady state: `snapshot` after `filled` (its first cycle) was applied, keeping only the
// admitted workloads, plus a fresh batch of options.pending workloads (seed + 1, keys "-new",
// created after the first batch) at time 1.
Snapshot SteadyStateQueues(Snapshot snapshot, const CycleResult& filled,
                           const SyntheticQueuesOptions& options);

}  // namespace phalanx::admission
