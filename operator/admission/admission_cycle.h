// One admission cycle: given a Snapshot of queues, quotas and workloads, admit every pending
// workload that both fits quota (Kueue semantics: flavors, cohorts, borrowing and lending
// limits) and can really be placed as a whole gang, preempt where the ClusterQueues' policies
// allow it, and say for every workload left pending why, in words a user can act on.
//
//   placement::InProcessPlacementService service(...);   // or the operator's gRPC client
//   CycleResult result = RunAdmissionCycle(snapshot, service);
//   for (const AdmissionDecision& a : result.admissions) WriteAdmission(a);   // status update
//   for (const PreemptionDecision& p : result.preemptions) Evict(p);
//   for (const GrowthDecision& g : result.growths) ScaleUp(g);
//   for (const PendingDecision& p : result.pending) SetQueuedCondition(p);
//
// The cycle mutates `service`: admissions are already reserved there and victims already
// released or shrunk, so the service and the returned decisions agree. Admitted workloads in
// the snapshot are expected to hold their reservations in the service.
//
// Round trips: one ReserveBatch per admission pass (at most CycleOptions::max_passes, usually
// one or two: a second pass runs only when a placement failed, to retry its freed quota and
// the next flavor); one Release per StrictFIFO follower reserved behind a head whose placement
// failed; per preemption, one PlanPreemption plus one Release or Resize per victim plus one
// Reserve, and after the preemptions up to max_passes more passes for what the victims freed
// beyond their preemptors' needs; per elastic growth, one Resize per size tried (bounded by CycleOptions).
// CycleResult::calls counts them.
//
// Elastic growth runs last: a running elastic workload grows toward its maxReplicas only when
// nothing that could use the capacity is left waiting (see docs/admission.md).
#pragma once

#include <memory>

#include "operator/admission/types.h"
#include "scheduler/placement_service.h"

namespace phalanx::admission {

namespace internal {
class Cycle;
struct CycleCacheState;
}  // namespace internal

// What an admission loop may keep from one cycle to the next so that a cycle's setup follows
// what changed: each running workload's queue, priority and per-pod charge in its flavors,
// re-resolved only when the workload's admission, requests or priority change, or when the
// queue configuration they were resolved against does (checked every cycle). A large cluster
// runs thousands of workloads and changes a few between cycles. Results are the same with or
// without it; one cache per admission loop, not shared between threads.
//
//   CycleCache cache;
//   CycleOptions options;
//   options.cache = &cache;
//   while (...) result = RunAdmissionCycle(NextSnapshot(), service, options);
class CycleCache {
 public:
  CycleCache();
  ~CycleCache();
  CycleCache(const CycleCache&) = delete;
  CycleCache& operator=(const CycleCache&) = delete;

 private:
  friend class internal::Cycle;
  std::unique_ptr<internal::CycleCacheState> state_;
};

struct CycleOptions {
  // Admission passes, each one ReserveBatch; later passes retry what a failed placement freed.
  int max_passes = 4;
  // Preemptors planned per cycle, each one PlanPreemption round trip.
  int max_preemption_attempts = 32;
  // Elastic growth (docs/admission.md): Resize calls per cycle spent growing running elastic
  // workloads, and sizes tried per workload (largest first). 0 turns growth off.
  int max_growth_resizes = 16;
  int growth_sizes_per_workload = 3;
  // Backfill (docs/admission.md "Backfill"): the first gang of a pass that cannot be placed gets
  // a start-time reservation (nodes and an estimated start, from running workloads'
  // expected_runtime_seconds), and workloads behind it may use those nodes only if they are
  // expected to end before that start. Inert when no workload carries an estimate.
  bool backfill = true;
  // Whether a gang in its locality wait is planned for too, its wait ending early when no
  // preferred domain is expected to free before the wait would end. Off: a waiting gang is
  // left to its wait and only planned for once the wait is over.
  bool backfill_ends_locality_wait = false;
  // Optional, caller-owned: see CycleCache.
  CycleCache* cache = nullptr;
};

// Never fails as a whole: bad objects and service errors become ObjectErrors and pending
// reasons, and everything unaffected is still admitted.
CycleResult RunAdmissionCycle(const Snapshot& snapshot, placement::PlacementService& service,
                              const CycleOptions& options = {});

}  // namespace phalanx::admission
