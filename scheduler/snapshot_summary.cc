#include "scheduler/snapshot_summary.h"

#include <algorithm>
#include <deque>

namespace phalanx::placement {

std::string_view NodeConditionName(NodeCondition condition) {
  switch (condition) {
    case NodeCondition::kSchedulable: return "Schedulable";
    case NodeCondition::kNotReady: return "NotReady";
    case NodeCondition::kUnschedulable: return "Unschedulable";
    case NodeCondition::kUnhealthy: return "Unhealthy";
  }
  return "Unknown";
}

SnapshotSummary Summarize(const ClusterSnapshot& snapshot, const SummaryOptions& options) {
  SnapshotSummary summary;
  const std::vector<ClusterSnapshot::Domain>& domains = snapshot.domains();
  summary.levels = snapshot.topology().levels();
  summary.pods = static_cast<int64_t>(snapshot.pod_count());
  const std::vector<std::string> reserved = snapshot.ReservedJobs();
  summary.reservations = static_cast<int32_t>(reserved.size());
  if (options.reservations) {
    for (const std::string& job : reserved) {
      const ClusterSnapshot::Reservation* r = snapshot.FindReservation(job);
      if (r == nullptr) continue;
      ReservationSummary& out = summary.reservation_list.emplace_back();
      out.job = job;
      out.domain = r->domain;
      for (const ClusterSnapshot::ReservedRank& rank : r->ranks) {
        out.nodes.push_back(snapshot.nodes()[rank.node].info.name);
      }
    }
  }
  summary.free_gpus = domains[0].free[kGpuIndex];

  // Domains keep no count of live nodes (removed nodes leave empty domains behind) nor of
  // allocatable GPUs, so count them here: live nodes are what hides stale domains from the list.
  std::vector<int32_t> live_below(domains.size(), 0);
  std::vector<int64_t> gpus_below(domains.size(), 0);
  for (const ClusterSnapshot::Node& node : snapshot.nodes()) {
    if (node.removed) continue;
    ++summary.nodes;
    ++summary.nodes_by_condition[std::string(NodeConditionName(node.condition))];
    for (int d = node.domain; d >= 0; d = domains[d].parent) ++live_below[d];
    if (node.condition != NodeCondition::kSchedulable) continue;
    ++summary.schedulable_nodes;
    if (node.hard_tainted) ++summary.tainted_nodes;
    summary.gpus += node.allocatable[kGpuIndex];
    for (int d = node.domain; d >= 0; d = domains[d].parent) {
      gpus_below[d] += node.allocatable[kGpuIndex];
    }
  }

  // Breadth first over children sorted by value: level by level, each in topology order, so a
  // cut by max_domains drops the finest domains first.
  const int depth = snapshot.topology().depth();
  const int max_level = options.max_level < 0 ? depth : std::min(options.max_level, depth);
  const size_t max_domains = static_cast<size_t>(std::max(options.max_domains, 0));
  std::deque<int> queue = {0};
  while (!queue.empty()) {
    int index = queue.front();
    queue.pop_front();
    const ClusterSnapshot::Domain& domain = domains[index];
    if (live_below[index] == 0) continue;
    ++summary.total_domains;
    if (summary.domains.size() < max_domains) {
      DomainSummary& out = summary.domains.emplace_back();
      out.domain = snapshot.DomainIdOf(index);
      out.level_index = domain.level;
      out.nodes = live_below[index];
      out.schedulable_nodes = domain.schedulable_nodes;
      out.gpus = gpus_below[index];
      out.free_gpus = domain.free[kGpuIndex];
      if (options.histogram) {
        out.free_gpu_histogram.assign(domain.gpu_histogram.begin(), domain.gpu_histogram.end());
      }
    }
    if (domain.level < max_level) queue.insert(queue.end(), domain.children.begin(),
                                               domain.children.end());
  }
  return summary;
}

}  // namespace phalanx::placement
