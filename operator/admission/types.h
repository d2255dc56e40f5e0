// The admission core's vocabulary: Kueue-modelled ResourceFlavors, ClusterQueues, cohorts,
// LocalQueues and Workloads in (a Snapshot), and the cycle's decisions out (a CycleResult).
// Plain structs with no I/O and no clock: the operator fills a Snapshot from its informers,
// the simulator from its model, tests by hand.
//
//   Snapshot snapshot;
//   snapshot.flavors.push_back({.name = "h100", .node_labels = {{"node.kubernetes.io/instance-type",
//                                                                "p5.48xlarge"}}});
//   ClusterQueue cq{.name = "team-a", .cohort = "research"};
//   cq.resource_groups.push_back(
//       {.covered_resources = {"nvidia.com/gpu"},
//        .flavors = {{.flavor = "h100", .resources = {{.resource = "nvidia.com/gpu",
//                                                      .nominal = 64}}}}});
//   snapshot.cluster_queues.push_back(cq);
//   snapshot.local_queues.push_back({.namespace_name = "team-a", .name = "main",
//                                    .cluster_queue = "team-a"});
//   ASSIGN_OR_RETURN(CycleResult result, RunAdmissionCycle(snapshot, placement_service));
//
// Amounts are canonical integers (common/resources.h): cpu in millicores, everything else in
// whole units. Times are seconds on whatever clock the caller uses; only their order matters,
// except that admission times are stamped with Snapshot::now.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/resources.h"
#include "scheduler/placement_types.h"

namespace phalanx::admission {

// ---- Cluster-scoped configuration ------------------------------------------------------------

// A variant of a resource (a GPU model, spot vs on-demand) bound to a set of nodes. Its node
// labels become the gang's node selector and its tolerations are added to the gang's pods.
struct ResourceFlavor {
  std::string name;
  std::map<std::string, std::string> node_labels;
  std::vector<placement::Taint> node_taints;    // workloads must tolerate these to use it
  std::vector<placement::Toleration> tolerations;
  std::string topology_name;                    // the Topology the flavor's nodes follow
};

// Quota of one resource in one flavor of a ClusterQueue. Unset limits mean "no limit" exactly
// as in Kueue: borrow up to whatever the cohort has unused, lend out all of the nominal quota.
struct ResourceQuota {
  std::string resource;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;  // max usage above nominal (needs a cohort)
  std::optional<int64_t> lending_limit;    // max of the nominal quota others may use
};

struct FlavorQuotas {
  std::string flavor;  // a ResourceFlavor name
  std::vector<ResourceQuota> resources;
};

// Resources that are always assigned the same flavor (cpu + memory of one machine family).
// Flavors are listed in order of preference.
struct ResourceGroup {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;
};

enum class QueueingStrategy { kStrictFifo, kBestEffortFifo };
enum class WithinClusterQueuePolicy { kNever, kLowerPriority, kLowerOrNewerEqualPriority };
enum class ReclaimWithinCohortPolicy { kNever, kLowerPriority, kAny };
enum class BorrowWithinCohortPolicy { kNever, kLowerPriority };
enum class StopPolicy { kNone, kHold, kHoldAndDrain };
enum class BackfillQuota { kNever, kHoldForHead };

struct BorrowWithinCohort {
  BorrowWithinCohortPolicy policy = BorrowWithinCohortPolicy::kNever;
  // Only workloads with priority <= threshold may be preempted by a borrowing workload.
  std::optional<int32_t> max_priority_threshold;
};

struct ClusterQueuePreemption {
  WithinClusterQueuePolicy within_cluster_queue = WithinClusterQueuePolicy::kNever;
  ReclaimWithinCohortPolicy reclaim_within_cohort = ReclaimWithinCohortPolicy::kNever;
  BorrowWithinCohort borrow_within_cohort;
};

// A Kubernetes LabelSelector. An empty selector matches everything.
struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In | NotIn | Exists | DoesNotExist
  std::vector<std::string> values;
};
struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
};

inline constexpr int64_t kDefaultLocalityWaitSeconds = 300;

struct ClusterQueue {
  std::string name;
  std::string cohort;  // "" = no cohort: cannot borrow or lend
  std::vector<ResourceGroup> resource_groups;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFifo;
  // nullopt = Kueue's null selector, which admits no namespace. The C++ default is {} (every
  // namespace); the operator maps a CRD without the field to nullopt.
  std::optional<LabelSelector> namespace_selector = LabelSelector{};
  ClusterQueuePreemption preemption;
  double fair_sharing_weight = 1.0;  // 0 = always last in line and first to be reclaimed
  StopPolicy stop_policy = StopPolicy::kNone;
  // Deletion requested (metadata.deletionTimestamp), held by the operator's resource-in-use
  // finalizer until no admitted workload is left: admits and grows nothing, as stopPolicy Hold;
  // its admitted workloads keep their quota and run to the end.
  bool terminating = false;
  // Phalanx extension, like Slurm's --switches=N@max-time: a workload whose preferred topology
  // level is below its required one is admitted only inside one domain of its preferred level
  // until it has waited this long since its creation_time (seconds, Snapshot::now's clock); then
  // anywhere its required level allows. 0 = no wait. See docs/admission.md "Locality".
  int64_t locality_wait_seconds = kDefaultLocalityWaitSeconds;
  // Phalanx extension, backfill for quota (docs/admission.md "Backfill for quota"): with
  // kHoldForHead, a queue without a cohort holds its quota for the first workload quota refuses
  // in a pass, from the time its running workloads are expected to free enough of it; a
  // workload behind it takes quota now only if it is expected to end by then or leaves enough.
  // No effect with a cohort, under StrictFIFO, or with CycleOptions::backfill off.
  BackfillQuota backfill_quota = BackfillQuota::kNever;
};

// A Kueue v1beta1 Cohort object. Cohorts are flat here: a ClusterQueue's `cohort` names a
// group; a Cohort object only exists so that nesting (`parent`) is reported, not silently
// ignored. See docs/admission.md.
struct Cohort {
  std::string name;
  std::string parent;
};

struct LocalQueue {
  std::string namespace_name;
  std::string name;
  std::string cluster_queue;
  // Kueue's LocalQueue stopPolicy: Hold admits and grows none of this queue's workloads;
  // HoldAndDrain also evicts its admitted ones. The ClusterQueue's other LocalQueues go on.
  StopPolicy stop_policy = StopPolicy::kNone;
};

struct Namespace {
  std::string name;
  std::map<std::string, std::string> labels;
};

// Kueue's global fair-sharing configuration (Configuration.fairSharing).
enum class FairSharingStrategy { kLessThanOrEqualToFinalShare, kLessThanInitialShare };
struct FairSharingConfig {
  bool enable = false;
  std::vector<FairSharingStrategy> preemption_strategies = {
      FairSharingStrategy::kLessThanOrEqualToFinalShare, FairSharingStrategy::kLessThanInitialShare};
};

// ---- Workloads -------------------------------------------------------------------------------

// Where a running workload was admitted: its quota is charged to `cluster_queue` in `flavors`.
struct AdmittedState {
  std::string cluster_queue;
  std::map<std::string, std::string> flavors;  // resource -> flavor
  int32_t count = 0;                           // pods admitted
  int64_t admission_time = 0;
};

// A TrainingJob's demand: `count` identical pods (or an elastic range), with its topology
// request. Pending when `admitted` is empty.
struct Workload {
  std::string key;             // "namespace/name", unique
  std::string namespace_name;
  std::string queue_name;      // LocalQueue in namespace_name
  int32_t count = 0;           // pods wanted when not elastic
  std::optional<placement::ElasticRange> elastic;
  ResourceList per_pod;
  std::string priority_class;  // resolved through Snapshot::priority_classes when set
  int32_t priority = 0;        // used when priority_class is empty
  int64_t creation_time = 0;
  std::string required_level;
  std::string preferred_level;
  int32_t group_size = 0;
  std::string group_level;
  std::map<std::string, std::string> node_selector;
  // The pods' required node affinity terms (placement::GangRequest::node_affinity); empty = none.
  std::vector<placement::NodeSelectorTerm> node_affinity;
  // At most this many pods on one node (placement::GangRequest::max_pods_per_node); 0 = any.
  int32_t max_pods_per_node = 0;
  std::vector<placement::Toleration> tolerations;
  std::optional<AdmittedState> admitted;
  // How long it is expected to run once started, at its smallest size (an elastic one at its
  // minimum), like a Slurm job's time limit; unset = unknown. A running workload is expected to
  // end at admitted->admission_time + this. Only backfill reads it (docs/admission.md
  // "Backfill"): without estimates no reservation is made and nothing counts as short.
  std::optional<int64_t> expected_runtime_seconds;
  // Not admitted before this Snapshot::now (Kueue's requeueState.requeueAt: a backoff after an
  // eviction); 0 = no backoff. Pending with reason kRequeueBackoff until then.
  int64_t requeue_at = 0;
  // Why the object cannot become a workload (its decoder refused it: a template problem, a
  // priority not honoured), "" if it can. Such a workload is only counted: its queue is
  // resolved, so it counts as its ClusterQueue's pending (inadmissible) one, and it stays
  // pending with PendingReason::kInvalid and this message; nothing else of it is read.
  std::string invalid;
  // Why its caller holds it back for now, for a reason outside the core's model, "" if it does
  // not: the operator holds a job whose namespace's ResourceQuotas have no room left for its
  // smallest gang (operator/server/namespace_quota.h). Such a workload counts as its queue's
  // pending one, as every other does, and stays pending with PendingReason::kNamespaceQuota and
  // this message; it is neither admitted nor preempted for, and blocks neither its queue
  // (StrictFIFO or not) nor elastic growth. Read only while it is not admitted, so CycleCache,
  // which keeps admitted ones, need not see it in the revision. The simulator never sets it.
  std::string held;
  // What each of its pods takes from the caller's budgets (Snapshot::budgets), by budget name.
  // A workload is admitted, or grows, only by as many pods as every one of its budgets has
  // left; what it takes is gone for the workloads after it in the same cycle. The operator
  // gives each ResourceQuota of the namespace and resource one (the quota's room, less the
  // pods admitted jobs are still owed), so that two gangs of one namespace are not admitted
  // into the same room in one cycle. Empty: no budget limits it. The simulator sets none.
  // Read fresh every cycle (admitted or not): CycleCache keeps nothing of it, so the revision
  // need not follow it.
  std::map<std::string, int64_t> budget_per_pod;
  // Changes whenever anything above changes (the object's resourceVersion, or a counter the
  // caller bumps), 0 = unknown. Only CycleCache reads it: an equal non-zero revision lets a
  // cycle reuse last cycle's resolution without comparing the fields.
  uint64_t revision = 0;
};

// A limit outside the core's model that the workloads admitted (or grown) in a cycle take
// from, in the order the cycle admits them (Workload::budget_per_pod). It lives for one cycle:
// the caller gives what is left at the start of each. A workload whose smallest gang does not
// fit what is left stays pending with PendingReason::kNamespaceQuota, blocking nobody, as a
// workload the caller holds (Workload::held) does.
struct Budget {
  std::string name;      // for messages: "ResourceQuota team-a/gpus (scope ...)"
  std::string resource;  // what it counts, for messages: "pods", "requests.nvidia.com/gpu", ...
  std::string unit;      // the resource whose units `left` is in (FormatQuantity): "cpu"
  int64_t left = 0;
};

// Everything one admission cycle looks at. `now` stamps admissions; nothing reads a clock.
struct Snapshot {
  std::vector<ResourceFlavor> flavors;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<Cohort> cohorts;
  std::vector<LocalQueue> local_queues;
  std::vector<Namespace> namespaces;
  std::map<std::string, int32_t> priority_classes;
  std::vector<Workload> workloads;
  std::map<std::string, Budget> budgets;  // by name, as Workload::budget_per_pod names them
  FairSharingConfig fair_sharing;
  int64_t now = 0;
};

// ---- Decisions -------------------------------------------------------------------------------

struct AdmissionDecision {
  std::string workload;
  std::string cluster_queue;
  std::map<std::string, std::string> flavors;  // resource -> flavor
  int32_t count = 0;
  bool borrowing = false;                      // usage now exceeds nominal quota somewhere
  int64_t admission_time = 0;                  // Snapshot::now
  placement::Placement placement;              // reserved in the PlacementService
  std::vector<std::string> preempted;          // victims this admission waits for
};

enum class PreemptionReason {
  kInClusterQueue,            // lower priority in the same ClusterQueue
  kReclaimWithinCohort,       // its ClusterQueue borrowed quota the preemptor's queue reclaims
  kBorrowWithinCohort,        // the preemptor borrows and policy lets it preempt borrowers
  kFairSharing,               // its ClusterQueue holds more than its fair share
  kClusterQueueStopped,       // stopPolicy HoldAndDrain
  kLocalQueueStopped,         // the LocalQueue's stopPolicy HoldAndDrain
};

struct PreemptionDecision {
  std::string victim;
  std::string cluster_queue;  // the victim's
  int32_t new_count = 0;      // 0 = evict; > 0 = shrink the elastic gang to this many pods
  std::string preemptor;      // empty for kClusterQueueStopped and kLocalQueueStopped
  PreemptionReason reason = PreemptionReason::kInClusterQueue;
  std::string message;
  std::string preemptor_cluster_queue;  // the preemptor's; empty when preemptor is
  // A shrunk victim's ClusterQueue still uses more than its nominal quota somewhere in the
  // victim's flavors at the end of the cycle (AdmissionDecision::borrowing's rule).
  bool borrowing = false;
};

// Why a workload is still pending, in words a user can act on.
enum class PendingReason {
  kInvalid,  // the workload itself is malformed
  kNoLocalQueue,
  kClusterQueueInactive,  // missing, invalid or stopped
  kLocalQueueStopped,     // its LocalQueue's stopPolicy
  kNamespaceNotAllowed,
  kUnknownPriorityClass,
  kUnknownLevel,       // a topology level the placement service's topology lacks
  kNoFlavor,           // no flavor covers the request / matches its selector
  kQuota,              // no flavor has enough quota
  kTopology,           // quota fits, but the gang cannot be placed
  kStrictFifoBlocked,  // behind a StrictFIFO head that cannot be admitted
  kPlacementError,     // the PlacementService returned an error
  kRequeueBackoff,     // evicted, and its Workload::requeue_at has not come yet
  kNamespaceQuota,     // held by its caller (Workload::held): no room in a namespace quota
};

struct PendingDecision {
  std::string workload;
  std::string cluster_queue;  // empty when it could not be resolved
  PendingReason reason = PendingReason::kQuota;
  std::string message;
  // 1-based place in its ClusterQueue's order (priority, then creation time: Kueue's
  // positionInClusterQueue) among the workloads still pending after the cycle; 0 for one in no
  // queue's order (its queue unresolved or inactive, or the workload refused before ordering).
  int32_t position = 0;
};

// A configuration object that is wrong; the objects that depend on it stop admitting, the rest
// of the system does not.
struct ObjectError {
  std::string kind;  // ResourceFlavor | ClusterQueue | Cohort | LocalQueue
  std::string name;
  std::string message;
};

// A running elastic workload grown toward its maxReplicas with capacity nobody was waiting for
// (docs/admission.md "Elastic growth"). Its quota is charged like an admission's: growth that
// borrows is reclaimable by preemption exactly like borrowed admissions.
struct GrowthDecision {
  std::string workload;
  std::string cluster_queue;
  int32_t old_count = 0;
  int32_t new_count = 0;
  bool borrowing = false;          // usage now exceeds nominal quota somewhere
  placement::Placement placement;  // every rank after the growth, as Resize returned it
};

// A running elastic workload that quota would let grow, held back because a workload that
// could use the capacity waits (docs/admission.md "Elastic growth"): the operator tells the
// job why it stays at its size.
struct GrowthHold {
  std::string workload;
  int32_t count = 0;    // its size now
  std::string message;  // "not grown beyond 4 pods while ns/j (ClusterTrainingQueue q) waits ..."
};

// How often the cycle talked to the PlacementService: each call is a round trip when the
// service is remote.
struct PlacementCalls {
  int reserve_batch = 0;
  int reserve = 0;
  int plan_preemption = 0;
  int estimate_start = 0;  // backfill's start-time estimates
  int release = 0;
  int resize = 0;  // shrinking victims and growing elastic workloads
  int topology_levels = 0;  // once a cycle, when a pending workload names a level
  int Total() const {
    return reserve_batch + reserve + plan_preemption + estimate_start + release + resize +
           topology_levels;
  }
};

struct CycleResult {
  std::vector<AdmissionDecision> admissions;
  std::vector<PreemptionDecision> preemptions;
  std::vector<GrowthDecision> growths;
  std::vector<GrowthHold> growth_holds;
  std::vector<PendingDecision> pending;
  std::vector<ObjectError> errors;
  PlacementCalls calls;
  // The Snapshot::now at which the earliest locality wait or requeue backoff among the pending
  // workloads ends: a cycle then may admit what this one held back, even if nothing else
  // changes, so the caller should run one (the operator requeues; the simulator wakes up).
  std::optional<int64_t> requeue_at;
};

std::string_view ToString(PendingReason reason);
std::string_view ToString(PreemptionReason reason);

}  // namespace phalanx::admission
