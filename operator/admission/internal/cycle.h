// The state of one admission cycle, shared by the admission passes (admission_cycle.cc) and
// preemption (preemption.cc). Not part of the public surface: use admission_cycle.h.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "operator/admission/admission_cycle.h"
#include "operator/admission/flavor_assigner.h"
#include "operator/admission/model.h"
#include "operator/admission/quota.h"

namespace phalanx::admission::internal {

// True if the workload prefers a level below the one it requires: one domain of the preferred
// level is better, but a placement anywhere in the required level is acceptable.
inline bool WantsPreferredLevel(const Workload& w) {
  return !w.preferred_level.empty() && w.preferred_level != w.required_level;
}

// What a workload's owner reads when the placement service refused or failed a request for it:
// a refusal of the request itself (INVALID_ARGUMENT, such as a topology level the scheduler's
// topology lacks) names the TrainingJob field that holds the refused level, not the request's;
// anything else (the service down or restarting) is the status as it came.
std::string PlacementErrorText(const absl::Status& status, const Workload& w);

struct PendingEntry {
  const Workload* workload = nullptr;
  int cq = -1;
  int32_t priority = 0;
  ResourceList per_pod;            // with "pods" when the queue covers it
  Shape shape;
  std::set<FlavorChoice> failed;   // choices whose placement failed this cycle
  bool waiting = false;            // still a candidate this cycle
  // In its locality wait: placed (and preempted for) only inside one domain of its preferred
  // level this cycle. Seconds of the wait left.
  bool locality_wait = false;
  int64_t locality_wait_left = 0;
  bool admitted = false;
  PendingReason reason = PendingReason::kQuota;
  // Empty for kQuota until Finish: the quota message is written once, from the final quota
  // state, for `quota_count` pods, instead of in every pass.
  std::string message;
  int32_t quota_count = 0;
  std::string preemption_note;     // why preemption did not help, appended to the message
  std::string backfill_note;       // its start-time reservation, appended to the message
  std::string quota_hold_note;     // its queue's quota held for it (the last pass's), the same
  // Quota would admit it, but it was held back for its queue's quota hold this pass (it does
  // not preempt either: it waits for the holder, which comes first).
  bool held_for_quota = false;
};

// A workload's expected end and its key (a view of Workload::key, which outlives the cycle).
using ExpectedEnd = std::pair<int64_t, std::string_view>;

// A start-time reservation for a pending gang that cannot be placed now (backfill): the nodes
// it is expected to start on, and when. Workloads behind it in queue order may use those nodes
// only if they are expected to end by `start`.
struct BackfillReservation {
  int holder = -1;                 // pending index
  int64_t start = 0;               // estimated start, Snapshot::now's clock
  std::vector<std::string> nodes;  // sorted
  placement::DomainId domain;
};

// A workload's expected end and the quota it frees then (in its queue).
using QuotaEnd = std::pair<int64_t, Demand>;

// Backfill for quota (ClusterQueue::backfill_quota): the first workload of a pass that its
// queue's quota refuses, when the queue's workloads are expected to have freed enough for it, and
// the queue's quota as it is expected to stand then, without the holder. A workload behind it
// takes quota now only if it is expected to end by `start`, or if `at_start` with it still
// holds `demand`.
struct QuotaHold {
  int holder = -1;  // pending index
  int64_t start = 0;
  Demand demand;  // the holder's, in the flavors it would get at `start`
  QuotaTree at_start;
};

// A workload's resolution as CycleCache keeps it: the inputs it was computed from, and what
// Setup computed from them.
struct CachedWorkload {
  uint64_t seen = 0;  // the cycle that last saw the key (a second sighting is a duplicate)
  bool resolved = false;
  std::string cluster_queue;
  std::map<std::string, std::string> flavors;
  ResourceList per_pod;
  int32_t priority = 0;
  std::string priority_class;
  int cq = -1;  // -1: the ClusterQueue does not exist
  int32_t resolved_priority = 0;
  Demand demand;  // per pod, in its admitted flavors

  uint64_t revision = 0;

  bool Matches(const Workload& w) const {
    if (!resolved) return false;
    if (w.revision != 0 && w.revision == revision) return true;
    return priority == w.priority && cluster_queue == w.admitted->cluster_queue &&
           flavors == w.admitted->flavors && per_pod == w.per_pod &&
           priority_class == w.priority_class;
  }
};

struct CycleCacheState {
  uint64_t cycle = 0;
  // What resolutions depend on (queue names and indices, flavor-resource ids, which queues
  // define which, priority classes): a change clears every entry.
  std::string fingerprint;
  // Node-based, so that an entry's address is stable for `hints`.
  absl::node_hash_map<std::string, CachedWorkload> workloads;
  // hints[i]: the entry of the workload at position i of the last snapshot (each points to an
  // entry seen in that cycle, so erasing entries clears them). Callers keep their list in much
  // the same order from cycle to cycle, so one key comparison usually replaces hashing the key
  // and probing the map: 5 % of `phalanx simulate --nodes 4096 --jobs 100000 --policy phalanx`.
  std::vector<std::pair<const std::string, CachedWorkload>*> hints;
};

struct RunningEntry {
  const Workload* workload = nullptr;
  int cq = -1;
  int32_t priority = 0;
  Demand per_pod;                  // in its admitted flavors
  int32_t count = 0;
  bool touched = false;            // already shrunk or evicted this cycle
};

// A running workload the preemptor's queue policy allows it to preempt.
struct Candidate {
  int running = -1;                // RunningEntry index
  PreemptionReason reason = PreemptionReason::kInClusterQueue;
};

class Cycle {
 public:
  Cycle(const Snapshot& snapshot, placement::PlacementService& service,
        const CycleOptions& options);
  CycleResult Run();

 private:
  // admission_cycle.cc
  void Setup();
  void SetupWorkload(const Workload& workload);
  // The first problem with the workload's levels, named by their TrainingJob fields, or an
  // empty message: a level the placement service's topology lacks (kUnknownLevel), or a
  // preferred level coarser than the required one (kInvalid).
  std::pair<PendingReason, std::string> LevelProblem(const Workload& w);
  // Fills running.cq / priority / per_pod from the snapshot and the model (cq = -1 when the
  // ClusterQueue does not exist).
  void ResolveRunning(const Workload& w, RunningEntry& running) const;
  // CycleCacheState::fingerprint of this cycle's model.
  std::string Fingerprint() const;
  // The stopPolicy of the workload's LocalQueue; nullptr when it has none or does not exist.
  const LocalQueueStop* LocalQueueStopOf(const Workload& w) const;
  void Drain(int cq);
  // `last`: no pass follows, so nothing may be given back for a retry.
  bool Pass(bool last);
  // Admission passes again once preemption has freed room (more than its preemptors took).
  void AfterPreemption();
  void Finish();
  bool Before(int a, int b) const;  // queue order inside a ClusterQueue
  placement::GangRequest Request(const PendingEntry& entry, const Assignment& assignment,
                                 int32_t count) const;
  void Admit(int index, const Assignment& assignment, const placement::Placement& placement,
             std::vector<std::string> preempted);
  std::string QuotaLeft(int cq, const Demand& demand) const;
  // Caller budgets (Snapshot::budgets): how many pods of `w` all of its budgets have left for
  // (int32 max without any), what `pods` more of them take (negative: give back), and why
  // `pods` of them do not fit, as the pending message.
  int32_t BudgetRoom(const Workload& w) const;
  void ChargeBudgets(const Workload& w, int32_t pods);
  std::string BudgetShortfall(const Workload& w, int32_t pods) const;
  std::string LocalityWaitNote(const PendingEntry& entry) const;

  // backfill.cc
  // True if `w`, started now, is expected to end by `time` (false without an estimate).
  bool EndsBy(const Workload& w, int64_t time) const;
  // When running workload `w` (which has an estimate) is expected to end: now if past it.
  int64_t RunningEnd(const Workload& w) const;
  // True if `entry` comes after the holder of `r` in queue order and is not expected to end by
  // its start: it must not use the reservation's nodes.
  bool Blocks(const PendingEntry& entry, const BackfillReservation& r) const;
  // Running workloads (and this cycle's admissions) with an expected end, earliest first.
  std::vector<ExpectedEnd> ExpectedEnds() const;
  // The earliest expected start of `request` as the workloads of `ends` (earliest first) end,
  // and where; nullopt if it would need a workload with no expected end to go.
  std::optional<BackfillReservation> EarliestStart(
      const placement::GangRequest& request,
      const std::vector<ExpectedEnd>& ends);
  // After a pass's ReserveBatch refused pending entry `index` (the gangs placed in the batch
  // before it and kept: `ahead`, with their expected ends, as far as known; the keys of those
  // placed after it that yield to it: `behind`, all given back, so all count as ended now): if
  // its start can be estimated, calls
  // `give_back` (which releases those gangs), then reserves nodes and a start for it, or ends
  // its locality wait when no preferred domain is expected to free before the wait would end.
  enum class BackfillOutcome { kNone, kReserved, kWaitDropped };
  BackfillOutcome PlanBackfill(int index, const Assignment& assignment, int32_t count,
                               const std::vector<ExpectedEnd>& ahead,
                               const std::vector<std::string_view>& behind,
                               const std::function<void()>& give_back);
  // Whether queue `cq` holds quota for its blocked head (ClusterQueue::backfill_quota, with
  // backfill on, BestEffortFIFO and no cohort).
  bool HoldsQuota(int cq) const;
  // The quota of `cq` its workloads free as they are expected to end, earliest first: running
  // ones, this cycle's admissions, and `batch` (this pass's, charged but not yet placed).
  std::vector<QuotaEnd> QuotaEnds(int cq, const std::vector<QuotaEnd>& batch) const;
  // The hold for pending entry `index`, which quota refuses now: the first of `ends` after which
  // its smallest size fits; nullopt if none does.
  std::optional<QuotaHold> PlanQuotaHold(int index, const std::vector<QuotaEnd>& ends) const;
  // Whether a workload behind the holder may take `demand` of the queue's quota now: it is
  // expected to end by the hold's start, or what is left then still holds the holder's demand.
  bool KeepsQuotaHold(const QuotaHold& hold, const Workload& w, int cq, const Demand& demand) const;

  // preemption.cc
  void Preempt();
  void TryPreempt(int index);
  std::vector<Candidate> Candidates(const PendingEntry& entry, const Demand& demand) const;
  bool AllowedByFairSharing(int cq, const Demand& demand, const RunningEntry& victim,
                            const Demand& freed) const;
  Demand Freed(const RunningEntry& victim, int32_t new_count) const;
  int32_t LowestRunningPriority(const std::vector<int>& cqs, int except) const;
  bool MayHaveCandidates(int cq, int32_t priority);

  // growth.cc
  void Grow();
  std::vector<int> Growable(std::vector<GrowthHold>& holds) const;
  void GrowOne(RunningEntry& running, int& budget);

  const Snapshot& snapshot_;
  placement::PlacementService& service_;
  CycleOptions options_;
  Model model_;
  QuotaTree quota_;
  CycleResult result_;
  std::vector<PendingEntry> pending_;
  std::vector<RunningEntry> running_;
  std::vector<std::vector<int>> queue_order_;  // ClusterQueue -> pending indices, in order
  std::vector<std::vector<int>> running_by_cq_;  // ClusterQueue -> running indices
  std::map<std::pair<int, std::string_view>, bool> namespace_allowed_;  // (queue, namespace)
  std::vector<int> blocker_;                   // StrictFIFO: the pending head blocking the rest
  // Preemption: (queue, flavor choice, fits nominal) -> the highest priority that found no
  // eligible candidate since the last committed preemption. Candidate sets only shrink as the
  // priority drops, so lower-priority workloads need not look again.
  std::map<std::tuple<int, FlavorChoice, bool>, int32_t> no_candidates_;
  // Per queue: lowest priority running in it, and in the rest of its cohort (empty = stale).
  std::vector<std::pair<int32_t, int32_t>> lowest_priority_;
  std::vector<BackfillReservation> reservations_;
  // The placement service's topology levels, asked once a cycle (UnknownLevel); nullopt when
  // not asked yet or when it did not answer.
  bool levels_asked_ = false;
  std::optional<std::vector<std::string>> known_levels_;
  // (expected end, key) of the workloads admitted this cycle that carry an estimate.
  std::vector<ExpectedEnd> admitted_ends_;
  // Per ClusterQueue: the quota this cycle's admissions with an estimate free at their ends.
  std::vector<std::vector<QuotaEnd>> admitted_quota_ends_;
  // (CycleResult::preemptions index, RunningEntry index) of every shrink: Finish says whether
  // the victim's queue still borrows once the cycle's admissions are charged.
  std::vector<std::pair<size_t, int>> shrinks_;
  // What each caller budget has left, taken by this cycle's admissions and growths.
  std::map<std::string, int64_t, std::less<>> budget_left_;
};

}  // namespace phalanx::admission::internal
