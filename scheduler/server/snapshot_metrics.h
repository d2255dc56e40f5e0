// The snapshot's capacity as Prometheus series, computed at each scrape from a SnapshotSummary:
// GPUs allocatable and allocated per topology domain, and live nodes that are not Schedulable
// by reason. docs/metrics.md lists them.
//
//   AddSnapshotMetrics(registry, [&] {
//     SnapshotSummary s;
//     service.Read([&](const ClusterSnapshot& c) { s = Summarize(c, kSnapshotMetricsSummary); });
//     return s;
//   });
//
// Cardinality is bounded by design: domains are listed down to the finest label level, never
// single nodes, and at most kMaxDomainSeries of them (coarsest first).
#pragma once

#include <functional>
#include <vector>

#include "common/metrics/registry.h"
#include "scheduler/snapshot_summary.h"

namespace phalanx::scheduler {

// Domains per GPU family at most: 10,000 p5 nodes in EKS's three layers make a few hundred.
inline constexpr int kMaxDomainSeries = 2000;
inline const placement::SummaryOptions kSnapshotMetricsSummary = {
    .max_level = -1, .max_domains = kMaxDomainSeries, .histogram = false};

// One series per listed domain: {level, domain} = {label key, label value}, or {"cluster",
// "cluster"} for the whole cluster. `allocated` picks allocatable - free (bound pods and
// reserved slots) instead of allocatable; both count Schedulable nodes only.
std::vector<metrics::LabelledValue> DomainGpuSeries(const placement::SnapshotSummary& summary,
                                                    bool allocated);

// Live nodes that are not Schedulable, one series per reason (NotReady, Unschedulable,
// Unhealthy), every reason listed even at 0 so that a rise is visible from the first node.
std::vector<metrics::LabelledValue> UnschedulableNodeSeries(
    const placement::SnapshotSummary& summary);

// Registers phalanx_domain_allocatable_gpus, phalanx_domain_allocated_gpus and
// phalanx_unschedulable_nodes; `summarize` is called once per scrape (a Registry render hook),
// and the three families read its result.
void AddSnapshotMetrics(metrics::Registry& registry,
                        std::function<placement::SnapshotSummary()> summarize);

}  // namespace phalanx::scheduler
