#include "scheduler/server/snapshot_metrics.h"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace phalanx::scheduler {

std::vector<metrics::LabelledValue> DomainGpuSeries(const placement::SnapshotSummary& summary,
                                                    bool allocated) {
  std::vector<metrics::LabelledValue> series;
  series.reserve(summary.domains.size());
  for (const placement::DomainSummary& d : summary.domains) {
    const bool cluster = d.domain.level.empty() || d.domain.path.empty();
    series.push_back({.labels = {cluster ? "cluster" : d.domain.level,
                                 cluster ? "cluster" : d.domain.path.back()},
                      .value = static_cast<double>(allocated ? d.gpus - d.free_gpus : d.gpus)});
  }
  return series;
}

std::vector<metrics::LabelledValue> UnschedulableNodeSeries(
    const placement::SnapshotSummary& summary) {
  std::vector<metrics::LabelledValue> series;
  for (placement::NodeCondition c :
       {placement::NodeCondition::kNotReady, placement::NodeCondition::kUnschedulable,
        placement::NodeCondition::kUnhealthy}) {
    std::string reason(placement::NodeConditionName(c));
    auto it = summary.nodes_by_condition.find(reason);
    series.push_back({.labels = {reason},
                      .value = it == summary.nodes_by_condition.end() ? 0.0 : it->second});
  }
  return series;
}

void AddSnapshotMetrics(metrics::Registry& registry,
                        std::function<placement::SnapshotSummary()> summarize) {
  // One summary per scrape for the three families: each walk of the snapshot holds its read
  // lock, which the extender's filter and bind also take. The hook and the callbacks all run
  // under the Registry's lock, one Render at a time, so `summary` needs no lock of its own.
  // A summary that failed is no summary: the families are left out of that scrape (and the
  // failure logged), as when each family summarized for itself.
  auto summary = std::make_shared<std::optional<placement::SnapshotSummary>>();
  registry.AddRenderHook([summary, summarize = std::move(summarize)] {
    summary->reset();
    *summary = summarize();
  });
  auto current = [summary]() -> const placement::SnapshotSummary& {
    if (!summary->has_value()) throw std::runtime_error("no snapshot summary for this scrape");
    return **summary;
  };
  registry.AddCallbackGaugeFamily(
      "phalanx_domain_allocatable_gpus",
      "Allocatable GPUs of the Schedulable nodes in each topology domain (label level and "
      "value; the cluster as level=\"cluster\"), down to the finest label level, never single "
      "nodes.",
      {"level", "domain"}, [current] { return DomainGpuSeries(current(), false); });
  registry.AddCallbackGaugeFamily(
      "phalanx_domain_allocated_gpus",
      "GPUs taken by bound pods or reserved for a gang on the Schedulable nodes of each topology "
      "domain.",
      {"level", "domain"}, [current] { return DomainGpuSeries(current(), true); });
  registry.AddCallbackGaugeFamily(
      "phalanx_unschedulable_nodes",
      "Live nodes the scheduler will not place on, by reason: NotReady (Ready condition not "
      "True), Unschedulable (cordoned), Unhealthy (HyperPod node-health-status other than "
      "Schedulable).",
      {"reason"}, [current] { return UnschedulableNodeSeries(current()); });
}

}  // namespace phalanx::scheduler
