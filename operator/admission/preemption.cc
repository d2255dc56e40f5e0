// Preemption: which running workloads a pending one may displace (Kueue's policies and
// candidate order), which of them the placement core needs gone for the gang to fit in one
// domain (PlanPreemption), and which more must go for quota to fit.
#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/counted_noun.h"
#include "operator/admission/internal/cycle.h"

namespace phalanx::admission::internal {
namespace {

bool PolicyMayPreempt(const CompiledClusterQueue& queue) {
  const ClusterQueuePreemption& p = queue.spec->preemption;
  return p.within_cluster_queue != WithinClusterQueuePolicy::kNever ||
         (queue.cohort >= 0 && p.reclaim_within_cohort != ReclaimWithinCohortPolicy::kNever);
}

// True if a workload charged `usage` holds some of what `demand` asks for: evicting one that
// does not would free nothing the preemptor can use.
bool UsesAny(const Demand& usage, const Demand& demand) {
  return std::any_of(usage.begin(), usage.end(), [&](const auto& u) {
    return std::any_of(demand.begin(), demand.end(),
                       [&](const auto& d) { return d.first == u.first; });
  });
}

}  // namespace

Demand Cycle::Freed(const RunningEntry& victim, int32_t new_count) const {
  return Scale(victim.per_pod, victim.count - new_count);
}

bool Cycle::AllowedByFairSharing(int cq, const Demand& demand, const RunningEntry& victim,
                                 const Demand& freed) const {
  double mine = quota_.Share(cq, demand, +1);
  for (FairSharingStrategy strategy : snapshot_.fair_sharing.preemption_strategies) {
    if (strategy == FairSharingStrategy::kLessThanOrEqualToFinalShare &&
        mine <= quota_.Share(victim.cq, freed, -1)) {
      return true;
    }
    if (strategy == FairSharingStrategy::kLessThanInitialShare &&
        mine < quota_.Share(victim.cq, {}, 0)) {
      return true;
    }
  }
  return false;
}

std::vector<Candidate> Cycle::Candidates(const PendingEntry& entry, const Demand& demand) const {
  const CompiledClusterQueue& queue = model_.cqs[entry.cq];
  const ClusterQueuePreemption& policy = queue.spec->preemption;
  const bool fair = snapshot_.fair_sharing.enable;
  const int32_t p = entry.priority;
  const bool within_nominal = quota_.FitsNominal(entry.cq, demand);
  std::vector<Candidate> out;
  std::vector<int> scope = running_by_cq_[entry.cq];
  if (queue.cohort >= 0 && policy.reclaim_within_cohort != ReclaimWithinCohortPolicy::kNever) {
    for (int member : model_.cohort_members[queue.cohort]) {
      if (member == entry.cq) continue;
      scope.insert(scope.end(), running_by_cq_[member].begin(), running_by_cq_[member].end());
    }
  }
  for (int i : scope) {
    const RunningEntry& r = running_[i];
    if (r.touched || r.count <= 0) continue;
    if (r.cq == entry.cq) {
      bool allowed = false;
      switch (policy.within_cluster_queue) {
        case WithinClusterQueuePolicy::kNever: break;
        case WithinClusterQueuePolicy::kLowerPriority: allowed = r.priority < p; break;
        case WithinClusterQueuePolicy::kLowerOrNewerEqualPriority:
          allowed = r.priority < p || (r.priority == p && r.workload->creation_time >
                                                              entry.workload->creation_time);
          break;
      }
      if (allowed) out.push_back({i, PreemptionReason::kInClusterQueue});
      continue;
    }
    // Another queue's workload: only from the same cohort, only while that queue borrows
    // what the preemptor needs, and only as the reclaim/borrow policies say.
    if (queue.cohort < 0 || model_.cqs[r.cq].cohort != queue.cohort ||
        policy.reclaim_within_cohort == ReclaimWithinCohortPolicy::kNever ||
        !quota_.BorrowingAny(r.cq, demand) || !UsesAny(r.per_pod, demand)) {
      continue;
    }
    bool priority_ok =
        policy.reclaim_within_cohort == ReclaimWithinCohortPolicy::kAny || r.priority < p;
    if (fair) {
      if (priority_ok && AllowedByFairSharing(entry.cq, demand, r, Freed(r, 0))) {
        out.push_back({i, PreemptionReason::kFairSharing});
      }
    } else if (within_nominal) {
      if (priority_ok) out.push_back({i, PreemptionReason::kReclaimWithinCohort});
    } else if (policy.borrow_within_cohort.policy == BorrowWithinCohortPolicy::kLowerPriority) {
      const std::optional<int32_t>& threshold = policy.borrow_within_cohort.max_priority_threshold;
      if (r.priority < p && (!threshold.has_value() || r.priority <= *threshold)) {
        out.push_back({i, PreemptionReason::kBorrowWithinCohort});
      }
    }
  }
  // Kueue's preference: other queues' borrowers first (under fair sharing, the queue with the
  // largest share first), then lowest priority, then most recently admitted.
  std::map<int, double> share;
  if (fair) {
    for (const Candidate& c : out) share.try_emplace(running_[c.running].cq, 0);
    for (auto& [cq, value] : share) value = quota_.Share(cq, {}, 0);
  }
  std::stable_sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
    const RunningEntry& x = running_[a.running];
    const RunningEntry& y = running_[b.running];
    bool x_other = x.cq != entry.cq;
    bool y_other = y.cq != entry.cq;
    if (x_other != y_other) return x_other;
    if (fair && share[x.cq] != share[y.cq]) return share[x.cq] > share[y.cq];
    if (x.priority != y.priority) return x.priority < y.priority;
    int64_t xt = x.workload->admitted->admission_time;
    int64_t yt = y.workload->admitted->admission_time;
    if (xt != yt) return xt > yt;
    return x.workload->key < y.workload->key;
  });
  return out;
}

// The lowest priority among the untouched running workloads of `cqs`, or INT32_MAX.
int32_t Cycle::LowestRunningPriority(const std::vector<int>& cqs, int except) const {
  int32_t lowest = std::numeric_limits<int32_t>::max();
  for (int cq : cqs) {
    if (cq == except) continue;
    for (int i : running_by_cq_[cq]) {
      if (!running_[i].touched && running_[i].count > 0) lowest = std::min(lowest, running_[i].priority);
    }
  }
  return lowest;
}

// False when no running workload can be a candidate for a preemptor of this priority: a cheap
// test that spares most of a long pending list the full candidate search.
bool Cycle::MayHaveCandidates(int cq, int32_t priority) {
  const CompiledClusterQueue& queue = model_.cqs[cq];
  const ClusterQueuePreemption& p = queue.spec->preemption;
  if (lowest_priority_.empty()) {
    lowest_priority_.resize(model_.cqs.size());
    for (size_t q = 0; q < model_.cqs.size(); ++q) {
      int32_t own = LowestRunningPriority({static_cast<int>(q)}, -1);
      int32_t others = model_.cqs[q].cohort < 0
                           ? std::numeric_limits<int32_t>::max()
                           : LowestRunningPriority(model_.cohort_members[model_.cqs[q].cohort],
                                                   static_cast<int>(q));
      lowest_priority_[q] = {own, others};
    }
  }
  const auto& [own, others] = lowest_priority_[cq];
  bool within = p.within_cluster_queue == WithinClusterQueuePolicy::kLowerPriority
                    ? own < priority
                    : p.within_cluster_queue == WithinClusterQueuePolicy::kLowerOrNewerEqualPriority &&
                          own <= priority;
  bool cohort = queue.cohort >= 0 &&
                (p.reclaim_within_cohort == ReclaimWithinCohortPolicy::kAny
                     ? others != std::numeric_limits<int32_t>::max()
                     : p.reclaim_within_cohort != ReclaimWithinCohortPolicy::kNever &&
                           others < priority);
  return within || cohort;
}

void Cycle::Preempt() {
  std::vector<int> order;
  for (size_t cq = 0; cq < model_.cqs.size(); ++cq) {
    if (!model_.cqs[cq].inactive.empty() || !PolicyMayPreempt(model_.cqs[cq])) continue;
    if (model_.cqs[cq].spec->queueing_strategy == QueueingStrategy::kStrictFifo) {
      // Only the head may preempt; everything behind it waits for it.
      if (blocker_[cq] >= 0 && pending_[blocker_[cq]].waiting) order.push_back(blocker_[cq]);
      continue;
    }
    for (int index : queue_order_[cq]) {
      const PendingEntry& entry = pending_[index];
      if (entry.waiting && !entry.held_for_quota &&
          (entry.reason == PendingReason::kQuota || entry.reason == PendingReason::kTopology)) {
        order.push_back(index);
      }
    }
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) { return Before(a, b); });
  int attempts = 0;
  for (int index : order) {
    if (attempts >= options_.max_preemption_attempts) break;
    PendingEntry& entry = pending_[index];
    if (!entry.waiting) continue;
    if (!MayHaveCandidates(entry.cq, entry.priority)) {
      entry.preemption_note = absl::StrCat("preemption: no running workload is eligible under "
                                           "ClusterTrainingQueue ", model_.cqs[entry.cq].spec->name,
                                           "'s preemption policy");
      continue;
    }
    int before = result_.calls.plan_preemption;
    TryPreempt(index);
    attempts += result_.calls.plan_preemption - before;
  }
}

void Cycle::TryPreempt(int index) {
  PendingEntry& entry = pending_[index];
  const Workload& w = *entry.workload;
  const int cq = entry.cq;
  const std::string& cq_name = model_.cqs[cq].spec->name;
  // An elastic preemptor displaces others only for its minimum; it grows into free room later.
  const int32_t count = w.elastic ? w.elastic->min : w.count;
  // Gangs admitted before it this cycle may have taken its namespace's room (its caller's
  // budgets): then evicting others frees none of what it waits for.
  const int32_t room = BudgetRoom(w);
  if (room < count) {
    entry.reason = PendingReason::kNamespaceQuota;
    entry.message = BudgetShortfall(w, count);
    return;
  }

  // The first flavor choice, in preference order, for which removing every eligible candidate
  // would make quota fit.
  std::optional<Assignment> assignment;
  std::vector<Candidate> candidates;
  bool saw_candidates = false;
  const bool memo = !snapshot_.fair_sharing.enable;  // fair-sharing candidates depend on size
  for (FlavorChoice& choice : AllChoices(model_, entry.shape)) {
    Demand demand = DemandFor(model_, entry.shape, choice, count);
    auto key = std::make_tuple(cq, choice, quota_.FitsNominal(cq, demand));
    if (auto it = no_candidates_.find(key); memo && it != no_candidates_.end() &&
                                            entry.priority <= it->second) {
      continue;
    }
    std::vector<Candidate> eligible = Candidates(entry, demand);
    if (eligible.empty()) {
      if (memo) no_candidates_[key] = entry.priority;
      continue;
    }
    saw_candidates = true;
    for (const Candidate& c : eligible) {
      const RunningEntry& r = running_[c.running];
      quota_.Add(r.cq, Freed(r, 0), -1);
    }
    bool fits = quota_.Fits(cq, demand);
    for (const Candidate& c : eligible) {
      const RunningEntry& r = running_[c.running];
      quota_.Add(r.cq, Freed(r, 0), +1);
    }
    if (fits) {
      assignment = MakeAssignment(model_, entry.shape, std::move(choice), count);
      candidates = std::move(eligible);
      break;
    }
  }
  if (!assignment) {
    entry.preemption_note = absl::StrCat(
        "preemption: ",
        saw_candidates
            ? "evicting every workload ClusterTrainingQueue " + cq_name +
                  " may preempt would still not free enough quota"
            : "no running workload is eligible under ClusterTrainingQueue " + cq_name +
                  "'s preemption policy");
    return;
  }

  // Topology: the placement core picks the fewest victims among the eligible ones. Admission
  // has already applied the queue's policy, so the request carries a priority just above every
  // candidate's (the planner never picks a candidate at or above the request's priority).
  placement::GangRequest request = Request(entry, *assignment, count);
  request.elastic.reset();
  request.count = count;
  std::vector<placement::RunningGang> gangs;
  int64_t top = entry.priority;
  std::map<std::string_view, size_t> by_key;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const RunningEntry& r = running_[candidates[i].running];
    gangs.push_back({r.workload->key, r.priority, r.workload->elastic});
    top = std::max<int64_t>(top, int64_t{r.priority} + 1);
    by_key.emplace(r.workload->key, i);
  }
  request.priority = static_cast<int32_t>(std::min<int64_t>(top, std::numeric_limits<int32_t>::max()));
  // Locality: victims that let the gang into one domain of its preferred level are worth one
  // more plan; only if there are none does the plan settle for its required level (and not at
  // all during its locality wait, when the request already requires the preferred level).
  absl::StatusOr<placement::PreemptionPlan> plan = absl::InternalError("not planned");
  bool at_preferred = entry.locality_wait;
  if (WantsPreferredLevel(w) && !entry.locality_wait) {
    placement::GangRequest tight = request;
    tight.required_level = w.preferred_level;
    plan = service_.PlanPreemption(tight, gangs);
    ++result_.calls.plan_preemption;
    at_preferred = plan.ok() && plan->feasible;
  }
  // During the locality wait `request` already requires the preferred level: plan that once.
  if (!at_preferred || entry.locality_wait) {
    plan = service_.PlanPreemption(request, gangs);
    ++result_.calls.plan_preemption;
  }
  if (!plan.ok()) {
    // The Placement service failed, not quota: say so in the reason, so that an outage of
    // phalanx-scheduler is not filed under InsufficientQuota (audit 32).
    entry.reason = PendingReason::kPlacementError;
    entry.message = absl::StrCat("it needs preemption (its queue's quota is in use), and ",
                                 "planning it failed: ", PlacementErrorText(plan.status(), w));
    return;
  }
  if (!plan->feasible) {
    entry.preemption_note = absl::StrCat("preemption: even with every eligible victim gone, ",
                                         plan->explanation.summary);
    return;
  }

  // Victims in the order they are taken: candidate index -> pods left (0 = evicted).
  std::vector<std::pair<size_t, int32_t>> taken;
  std::vector<std::pair<int, Demand>> undo;
  auto take = [&](size_t c, int32_t new_count) {
    const Candidate& candidate = candidates[c];
    RunningEntry& r = running_[candidate.running];
    auto it = std::find_if(taken.begin(), taken.end(), [&](const auto& t) { return t.first == c; });
    int32_t current = it == taken.end() ? r.count : it->second;
    if (new_count >= current) return true;
    Demand freed = Scale(r.per_pod, current - new_count);
    // Another queue's workload may be taken only while that queue still borrows (and, under
    // fair sharing, still holds a larger share): this is what rules out preemption loops.
    if (r.cq != cq) {
      if (!quota_.BorrowingAny(r.cq, assignment->demand)) return false;
      if (snapshot_.fair_sharing.enable &&
          !AllowedByFairSharing(cq, assignment->demand, r, freed)) {
        return false;
      }
    }
    quota_.Add(r.cq, freed, -1);
    undo.emplace_back(r.cq, std::move(freed));
    if (it == taken.end()) {
      taken.emplace_back(c, new_count);
    } else {
      it->second = new_count;
    }
    return true;
  };
  auto rollback = [&](std::string why) {
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) quota_.Add(it->first, it->second, +1);
    entry.preemption_note = absl::StrCat("preemption: ", why);
  };
  for (const placement::Victim& victim : plan->victims) {
    auto it = by_key.find(victim.job);
    if (it == by_key.end()) {
      return rollback(absl::StrCat("the placement plan named ", victim.job,
                                   ", which is not an eligible candidate"));
    }
    int32_t new_count = std::clamp(victim.new_count, 0, running_[candidates[it->second].running].count);
    if (!take(it->second, new_count)) {
      return rollback(absl::StrCat("the gang only fits where it would displace ", victim.job,
                                   ", whose ClusterTrainingQueue is no longer above its fair share "
                                   "or nominal quota"));
    }
  }
  const size_t from_plan = taken.size();
  // Quota: shrink elastic candidates to their minimum first, then evict, in preference order.
  for (bool evict : {false, true}) {
    for (size_t c = 0; c < candidates.size() && !quota_.Fits(cq, assignment->demand); ++c) {
      const RunningEntry& r = running_[candidates[c].running];
      int32_t target = evict ? 0 : (r.workload->elastic ? r.workload->elastic->min : r.count);
      take(c, target);
    }
  }
  if (!quota_.Fits(cq, assignment->demand)) {
    return rollback("the eligible victims do not free enough quota");
  }
  // Give back what the quota step took but did not need, last taken first.
  for (size_t i = taken.size(); i-- > from_plan;) {
    RunningEntry& r = running_[candidates[taken[i].first].running];
    Demand restored = Scale(r.per_pod, r.count - taken[i].second);
    quota_.Add(r.cq, restored, +1);
    if (quota_.Fits(cq, assignment->demand)) {
      taken.erase(taken.begin() + static_cast<long>(i));
    } else {
      quota_.Add(r.cq, restored, -1);
    }
  }

  // Commit: free the victims in the placement service, then reserve the preemptor. Borrowing
  // changes with it, so what other queues may preempt must be looked at afresh.
  no_candidates_.clear();
  lowest_priority_.clear();
  std::vector<std::string> victims;
  for (const auto& [c, new_count] : taken) {
    const Candidate& candidate = candidates[c];
    RunningEntry& r = running_[candidate.running];
    int32_t left = new_count;
    if (left > 0) {
      absl::StatusOr<placement::PlacementResult> resized = service_.Resize(r.workload->key, left);
      ++result_.calls.resize;
      if (!resized.ok() || !resized->placed) {
        // Could not shrink in place: evict instead; quota only gets freer.
        quota_.Add(r.cq, Scale(r.per_pod, left), -1);
        left = 0;
      }
    }
    if (left == 0) {
      (void)service_.Release(r.workload->key);
      ++result_.calls.release;
    }
    std::string why;
    switch (candidate.reason) {
      case PreemptionReason::kInClusterQueue:
        // LowerOrNewerEqualPriority also takes a victim of equal priority created after it.
        why = r.priority < entry.priority
                  ? absl::StrCat("lower priority than ", w.key, " in ClusterTrainingQueue ",
                                 cq_name)
                  : absl::StrCat("same priority as ", w.key, " and created after it, in ",
                                 "ClusterTrainingQueue ", cq_name, " (LowerOrNewerEqualPriority)");
        break;
      case PreemptionReason::kReclaimWithinCohort:
        why = absl::StrCat("ClusterTrainingQueue ", cq_name,
                           " reclaims its nominal quota lent in cohort ",
                           model_.cohorts[model_.cqs[cq].cohort]);
        break;
      case PreemptionReason::kBorrowWithinCohort:
        why = absl::StrCat("borrowing ", w.key, " of ClusterTrainingQueue ", cq_name,
                           " outranks it (borrowWithinCohort)");
        break;
      case PreemptionReason::kFairSharing:
        why = absl::StrCat("its ClusterTrainingQueue is above its fair share of cohort ",
                           model_.cohorts[model_.cqs[cq].cohort], " relative to ", cq_name);
        break;
      case PreemptionReason::kClusterQueueStopped:
      case PreemptionReason::kLocalQueueStopped: break;
    }
    if (left > 0) shrinks_.emplace_back(result_.preemptions.size(), candidate.running);
    result_.preemptions.push_back(
        {r.workload->key, model_.cqs[r.cq].spec->name, left, w.key, candidate.reason,
         absl::StrCat(left > 0 ? absl::StrCat("shrunk to ", CountedNoun(left, "pod")) : "evicted",
                      " to make room for ", w.key, ": ", why),
         cq_name});
    victims.push_back(r.workload->key);
    r.touched = true;
    r.count = left;
  }

  // The preemptor: elastic ones take the largest count quota now allows in the chosen flavors.
  int32_t want = count;
  if (w.elastic) {
    for (int32_t k = (w.elastic->max - w.elastic->min) / w.elastic->step; k > 0; --k) {
      int32_t c = w.elastic->min + k * w.elastic->step;
      if (c <= room && quota_.Fits(cq, DemandFor(model_, entry.shape, assignment->choice, c))) {
        want = c;
        break;
      }
    }
  }
  Assignment final_assignment = MakeAssignment(model_, entry.shape, assignment->choice, want);
  quota_.Add(cq, final_assignment.demand, +1);
  // Where the plan made room: inside one domain of the preferred level when it planned there
  // (an elastic gang would otherwise take its largest count across domains), else anywhere.
  placement::GangRequest reserve = Request(entry, final_assignment, want);
  const std::string required = reserve.required_level;
  if (at_preferred) reserve.required_level = w.preferred_level;
  absl::StatusOr<placement::PlacementResult> reserved = service_.Reserve(reserve);
  ++result_.calls.reserve;
  if (reserved.ok() && !reserved->placed && reserve.required_level != required) {
    reserve.required_level = required;
    reserved = service_.Reserve(reserve);
    ++result_.calls.reserve;
  }
  if (!reserved.ok() || !reserved->placed) {
    quota_.Add(cq, final_assignment.demand, -1);
    entry.waiting = false;
    entry.reason = reserved.ok() ? PendingReason::kTopology : PendingReason::kPlacementError;
    entry.message = absl::StrCat(
        "preempted ", absl::StrJoin(victims, ", "), " but the reservation failed: ",
        reserved.ok() ? reserved->explanation.summary : PlacementErrorText(reserved.status(), w),
        "; it will be retried next cycle");
    return;
  }
  int32_t placed = static_cast<int32_t>(reserved->placement.nodes.size());
  if (placed != want) {
    quota_.Add(cq, final_assignment.demand, -1);
    final_assignment.demand = DemandFor(model_, entry.shape, final_assignment.choice, placed);
    quota_.Add(cq, final_assignment.demand, +1);
  }
  ChargeBudgets(w, placed);
  Admit(index, final_assignment, reserved->placement, std::move(victims));
}

}  // namespace phalanx::admission::internal
