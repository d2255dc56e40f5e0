#include "operator/admission/synthetic_queues.h"

#include <random>

#include "operator/admission/apply.h"

#include "absl/strings/str_format.h"

namespace phalanx::admission {

Snapshot BuildSyntheticQueues(const SyntheticQueuesOptions& options) {
  std::mt19937_64 rng(options.seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };

  Snapshot snapshot;
  snapshot.flavors.push_back({.name = "p5"});
  if (!options.flavor_label.empty()) {
    snapshot.flavors[0].node_labels[options.flavor_label] = options.flavor_value;
  }
  snapshot.priority_classes = {{"low", 0}, {"normal", 100}, {"high", 1000}};
  const int queues = std::max(1, options.queues);
  const int64_t nominal = options.total_gpus / queues;
  for (int q = 0; q < queues; ++q) {
    ClusterQueue cq;
    cq.name = absl::StrFormat("team-%03d", q);
    if (options.cohorts > 0) cq.cohort = absl::StrFormat("org-%02d", q % options.cohorts);
    ResourceQuota quota{std::string(kResourceGpu), nominal};
    if (!cq.cohort.empty() && q % 3 == 1) quota.borrowing_limit = nominal;
    if (!cq.cohort.empty() && q % 3 == 2) quota.lending_limit = nominal / 2;
    cq.resource_groups.push_back({{std::string(kResourceGpu)}, {{"p5", {quota}}}});
    cq.queueing_strategy = chance(options.strict_fifo_fraction) ? QueueingStrategy::kStrictFifo
                                                                 : QueueingStrategy::kBestEffortFifo;
    cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
    cq.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kLowerPriority;
    snapshot.local_queues.push_back({cq.name, "main", cq.name});
    snapshot.namespaces.push_back({cq.name, {{"team", cq.name}}});
    snapshot.cluster_queues.push_back(std::move(cq));
  }
  // Pods per job: mostly small experiments, a tail of large pre-training gangs.
  const int sizes[] = {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 4, 4, 4, 8, 8, 16, 32};
  const char* classes[] = {"low", "normal", "normal", "high"};
  for (int i = 0; i < options.pending; ++i) {
    Workload w;
    w.namespace_name = snapshot.cluster_queues[uniform(0, queues - 1)].name;
    w.key = absl::StrFormat("%s/job-%05d", w.namespace_name, i);
    w.queue_name = "main";
    int pods = sizes[uniform(0, 19)];
    if (pods > 1 && chance(options.elastic_fraction)) {
      w.elastic = placement::ElasticRange{std::max(1, pods / 2), pods, 1};
    } else {
      w.count = pods;
    }
    w.per_pod = {{std::string(kResourceGpu), options.gpus_per_pod}};
    w.priority_class = classes[uniform(0, 3)];
    w.creation_time = i;
    if (pods >= 16) {
      w.required_level = options.spine_level;
    } else if (pods >= 2) {
      w.required_level = options.block_level;
    }
    snapshot.workloads.push_back(std::move(w));
  }
  return snapshot;
}

Snapshot SteadyStateQueues(Snapshot snapshot, const CycleResult& filled,
                           const SyntheticQueuesOptions& options) {
  ApplyDecisions(filled, snapshot);
  std::erase_if(snapshot.workloads, [](const Workload& w) { return !w.admitted; });
  SyntheticQueuesOptions fresh = options;
  fresh.seed = options.seed + 1;
  for (Workload& w : BuildSyntheticQueues(fresh).workloads) {
    w.key += "-new";
    w.creation_time += options.pending;
    snapshot.workloads.push_back(std::move(w));
  }
  snapshot.now = 1;
  return snapshot;
}

}  // namespace phalanx::admission
