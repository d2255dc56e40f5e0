// Elastic growth: after admission and preemption, running elastic workloads grow toward their
// maxReplicas with capacity nobody is waiting for, quota-checked here and placed next to their
// existing ranks by PlacementService::Resize. The rule for "nobody is waiting" is in
// docs/admission.md ("Elastic growth").
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/counted_noun.h"
#include "operator/admission/internal/cycle.h"

namespace phalanx::admission::internal {

namespace {

// Who holds a workload's growth back: a pending index (>= 0), an evicted running index r as
// -(r + 2), or kNone.
constexpr int kNone = -1;

// A size the elastic grid allows: min + k * step, divisible by the group size when set.
bool OnGrowthGrid(const Workload& w, int32_t size) {
  const placement::ElasticRange& range = *w.elastic;
  return size >= range.min && (size - range.min) % range.step == 0 &&
         (w.group_size <= 0 || size % w.group_size == 0);
}

}  // namespace

// Running elastic workloads that may grow this cycle, best first. A workload may not grow while
// a workload that could use what it would take is left waiting: one pending (or evicted this
// cycle, so pending next cycle) in its ClusterQueue or cohort, which competes for the same
// quota, or one that could run in one of its flavors, which competes for the same nodes. Those
// held back although quota would let them grow are told who holds them (`holds`).
std::vector<int> Cycle::Growable(std::vector<GrowthHold>& holds) const {
  std::vector<int> queue_blocker(model_.cqs.size(), kNone);
  std::vector<int> cohort_blocker(model_.cohorts.size(), kNone);
  std::vector<int> flavor_blocker(model_.flavors.size(), kNone);
  auto first = [](int& slot, int who) {
    if (slot == kNone) slot = who;
  };
  auto block_queue = [&](int cq, int who) {
    first(queue_blocker[cq], who);
    if (model_.cqs[cq].cohort >= 0) first(cohort_blocker[model_.cqs[cq].cohort], who);
  };
  for (size_t p = 0; p < pending_.size(); ++p) {
    const PendingEntry& entry = pending_[p];
    // Only workloads whose shape was resolved can ever use capacity: the others wait for a fix
    // to their own spec or their queue, which growth cannot delay.
    // Nor can one its caller's budgets hold back (its namespace's quota room), as a held one.
    if (entry.admitted || entry.cq < 0 || entry.shape.cq < 0 ||
        entry.reason == PendingReason::kNamespaceQuota) {
      continue;
    }
    block_queue(entry.cq, static_cast<int>(p));
    const CompiledClusterQueue& queue = model_.cqs[entry.shape.cq];
    for (size_t g = 0; g < entry.shape.groups.size(); ++g) {
      for (int position : entry.shape.compatible[g]) {
        first(flavor_blocker[queue.groups[entry.shape.groups[g]].flavors[position]],
              static_cast<int>(p));
      }
    }
  }
  for (size_t i = 0; i < running_.size(); ++i) {
    const RunningEntry& r = running_[i];
    if (!r.touched || r.count > 0) continue;  // evicted this cycle: it queues again
    const int who = -(static_cast<int>(i) + 2);
    block_queue(r.cq, who);
    for (const auto& [fr, amount] : r.per_pod) first(flavor_blocker[model_.frs[fr].first], who);
  }
  // "ns/job (ClusterTrainingQueue q) waits", or "... was evicted and queues again"; the queue
  // left out when it is the grower's own.
  auto describe = [&](int who, bool same_queue) {
    const bool pending = who >= 0;
    const Workload& w = pending ? *pending_[who].workload : *running_[-who - 2].workload;
    const int cq = pending ? pending_[who].cq : running_[-who - 2].cq;
    const std::string queue =
        same_queue ? "" : absl::StrCat(" (ClusterTrainingQueue ", model_.cqs[cq].spec->name, ")");
    return absl::StrCat(w.key, queue, pending ? " waits" : " was evicted and queues again");
  };
  std::vector<int> out;
  for (size_t i = 0; i < running_.size(); ++i) {
    const RunningEntry& r = running_[i];
    const Workload& w = *r.workload;
    if (!w.elastic || r.touched || r.count <= 0 || r.count >= w.elastic->max) continue;
    const CompiledClusterQueue& queue = model_.cqs[r.cq];
    if (!queue.held.empty() || LocalQueueStopOf(w) != nullptr) continue;
    const int by_queue = queue_blocker[r.cq];
    const int by_cohort = queue.cohort >= 0 ? cohort_blocker[queue.cohort] : kNone;
    int by_flavor = kNone;
    int flavor = -1;
    for (const auto& [fr, amount] : r.per_pod) {
      flavor = model_.frs[fr].first;
      by_flavor = flavor_blocker[flavor];
      if (by_flavor != kNone) break;
    }
    if (by_queue == kNone && by_cohort == kNone && by_flavor == kNone) {
      out.push_back(static_cast<int>(i));
      continue;
    }
    // Told only when quota would let it take its next size: otherwise quota, not the waiting
    // one, holds it (a larger size needs more quota still).
    int32_t next = r.count + 1;
    while (next <= w.elastic->max && !OnGrowthGrid(w, next)) ++next;
    if (next > w.elastic->max || !quota_.Fits(r.cq, Scale(r.per_pod, next - r.count))) continue;
    const std::string held =
        by_queue != kNone
            ? absl::StrCat(describe(by_queue, true), " in the same ClusterTrainingQueue ",
                           queue.spec->name)
        : by_cohort != kNone
            ? absl::StrCat(describe(by_cohort, false), " in cohort ", model_.cohorts[queue.cohort])
            : absl::StrCat(describe(by_flavor, false), " and could run on NodeFlavor ",
                           model_.flavors[flavor]->name);
    holds.push_back({w.key, r.count,
                     absl::StrCat("not grown beyond ", CountedNoun(r.count, "pod"), " while ", held,
                                  " (growth takes only capacity nobody waits for)")});
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
  for (int i : Growable(result_.growth_holds)) {
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
    if (!OnGrowthGrid(w, size)) continue;
    const Demand more = Scale(r.per_pod, size - r.count);
    if (!quota_.Fits(r.cq, more) || size - r.count > BudgetRoom(w)) continue;
    --tries;
    --budget;
    absl::StatusOr<placement::PlacementResult> grown = service_.Resize(w.key, size);
    ++result_.calls.resize;
    // A service error leaves the reservation as it was; the workload keeps running as is.
    if (!grown.ok()) return;
    if (!grown->placed) continue;
    quota_.Add(r.cq, more, +1);
    ChargeBudgets(w, size - r.count);
    result_.growths.push_back({w.key, model_.cqs[r.cq].spec->name, r.count, size,
                               quota_.BorrowingAny(r.cq, r.per_pod), grown->placement});
    r.count = size;
    r.touched = true;
    return;
  }
}

}  // namespace phalanx::admission::internal
