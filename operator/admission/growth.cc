// Elastic growth: after admission and preemption, running elastic workloads grow toward their
// maxReplicas with capacity nobody is waiting for, quota-checked here and placed next to their
// existing ranks by PlacementService::Resize. The rule for "nobody is waiting" is in
// docs/admission.md ("Elastic growth").
#include <algorithm>

#include "operator/admission/internal/cycle.h"

namespace phalanx::admission::internal {

// Running elastic workloads that may grow this cycle, best first. A workload may not grow while
// a workload that could use what it would take is left waiting: one pending (or evicted this
// cycle, so pending next cycle) in its ClusterQueue or cohort, which competes for the same
// quota, or one that could run in one of its flavors, which competes for the same nodes.
std::vector<int> Cycle::Growable() const {
  std::vector<char> queue_blocked(model_.cqs.size(), 0);
  std::vector<char> cohort_blocked(model_.cohorts.size(), 0);
  std::vector<char> flavor_blocked(model_.flavors.size(), 0);
  auto block_queue = [&](int cq) {
    queue_blocked[cq] = 1;
    if (model_.cqs[cq].cohort >= 0) cohort_blocked[model_.cqs[cq].cohort] = 1;
  };
  for (const PendingEntry& entry : pending_) {
    // Only workloads whose shape was resolved can ever use capacity: the others wait for a fix
    // to their own spec or their queue, which growth cannot delay.
    if (entry.admitted || entry.cq < 0 || entry.shape.cq < 0) continue;
    block_queue(entry.cq);
    const CompiledClusterQueue& queue = model_.cqs[entry.shape.cq];
    for (size_t g = 0; g < entry.shape.groups.size(); ++g) {
      for (int position : entry.shape.compatible[g]) {
        flavor_blocked[queue.groups[entry.shape.groups[g]].flavors[position]] = 1;
      }
    }
  }
  for (const RunningEntry& r : running_) {
    if (!r.touched || r.count > 0) continue;  // evicted this cycle: it queues again
    block_queue(r.cq);
    for (const auto& [fr, amount] : r.per_pod) flavor_blocked[model_.frs[fr].first] = 1;
  }
  std::vector<int> out;
  for (size_t i = 0; i < running_.size(); ++i) {
    const RunningEntry& r = running_[i];
    const Workload& w = *r.workload;
    if (!w.elastic || r.touched || r.count <= 0 || r.count >= w.elastic->max) continue;
    const CompiledClusterQueue& queue = model_.cqs[r.cq];
    if (!queue.held.empty() || LocalQueueStopOf(w) != nullptr || queue_blocked[r.cq] ||
        (queue.cohort >= 0 && cohort_blocked[queue.cohort])) {
      continue;
    }
    if (std::any_of(r.per_pod.begin(), r.per_pod.end(),
                    [&](const auto& d) { return flavor_blocked[model_.frs[d.first].first]; })) {
      continue;
    }
    out.push_back(static_cast<int>(i));
  }
  // Higher priority first, then the longest running: the order admission would have used.
  std::sort(out.begin(), out.end(), [&](int a, int b) {
    const RunningEntry& x = running_[a];
    const RunningEntry& y = running_[b];
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.workload->admitted->admission_time != y.workload->admitted->admission_time) {
      return x.workload->admitted->admission_time < y.workload->admitted->admission_time;
    }
    return x.workload->key < y.workload->key;
  });
  return out;
}

void Cycle::Grow() {
  int budget = options_.max_growth_resizes;
  if (budget <= 0) return;
  for (int i : Growable()) {
    if (budget <= 0) break;
    GrowOne(running_[i], budget);
  }
}

// The largest size on the elastic grid (min + k * step, divisible by the group size) that quota
// allows, placed by Resize; smaller sizes after a placement refusal, a bounded number of them.
void Cycle::GrowOne(RunningEntry& r, int& budget) {
  const Workload& w = *r.workload;
  const placement::ElasticRange& range = *w.elastic;
  int tries = options_.growth_sizes_per_workload;
  for (int32_t k = (range.max - range.min) / range.step; k >= 0 && tries > 0 && budget > 0; --k) {
    const int32_t size = range.min + k * range.step;
    if (size <= r.count) break;
    if (w.group_size > 0 && size % w.group_size != 0) continue;
    const Demand more = Scale(r.per_pod, size - r.count);
    if (!quota_.Fits(r.cq, more)) continue;
    --tries;
    --budget;
    absl::StatusOr<placement::PlacementResult> grown = service_.Resize(w.key, size);
    ++result_.calls.resize;
    // A service error leaves the reservation as it was; the workload keeps running as is.
    if (!grown.ok()) return;
    if (!grown->placed) continue;
    quota_.Add(r.cq, more, +1);
    result_.growths.push_back({w.key, model_.cqs[r.cq].spec->name, r.count, size,
                               quota_.BorrowingAny(r.cq, r.per_pod), grown->placement});
    r.count = size;
    r.touched = true;
    return;
  }
}

}  // namespace phalanx::admission::internal
