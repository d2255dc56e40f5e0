// phalanx-operator's translation between the API objects and the admission core: the phalanx.dev
// queue CRDs (crds/*.yaml), PriorityClasses, Namespaces and TrainingJobs decoded into the core's
// Snapshot types (operator/admission/types.h), and the queues' statuses computed from a Snapshot
// and written back as server-side-apply bodies. Pure: no I/O, no clock; times come in as
// arguments.
//
//   ASSIGN_OR_RETURN(admission::ClusterQueue cq, DecodeClusterQueue(raw.json));
//   ASSIGN_OR_RETURN(kube::TrainingJob job, kube::DecodeTrainingJob(raw.json));
//   ASSIGN_OR_RETURN(admission::Workload w, WorkloadFromJob(job, admitted_at));
//   ...
//   admission::ApplyDecisions(result, snapshot);
//   for (const ClusterQueueStatus& s : ComputeQueueStatuses(snapshot).cluster_queues) {
//     Apply(ClusterQueueStatusApply(s, last_transition));
//   }
//
// Amounts are the core's canonical units (common/resources.h: cpu in millicores, everything else
// in whole units, memory in bytes), parsed from Kubernetes quantities exactly as the simulator
// parses its quotas (ParseResourceList), so both agree on every amount.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kube/api/training_job.h"
#include "operator/admission/types.h"

namespace phalanx::operator_server {

// ---- Objects in ------------------------------------------------------------------------------

// Decode objects as the API server returns them (JSON text). The API server has validated them
// against the CRD schema, so decoding is lenient about fields it does not need; a type mismatch
// or a bad quantity in one it reads is InvalidArgument naming the object and the field:
// "ClusterTrainingQueue llm: spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: ...".
absl::StatusOr<admission::ResourceFlavor> DecodeResourceFlavor(std::string_view json);
// spec.namespaceSelector absent -> nullopt (admits no namespace, as Kueue); {} -> every
// namespace. spec.localityWaitSeconds absent -> admission::kDefaultLocalityWaitSeconds.
absl::StatusOr<admission::ClusterQueue> DecodeClusterQueue(std::string_view json);
absl::StatusOr<admission::LocalQueue> DecodeLocalQueue(std::string_view json);
// A scheduling.k8s.io/v1 PriorityClass: its name, value and globalDefault.
struct PriorityClass {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  bool operator==(const PriorityClass&) const = default;
};
absl::StatusOr<PriorityClass> DecodePriorityClass(std::string_view json);
// The class the Priority admission plugin gives a pod that names none: of the classes with
// globalDefault, the one of lowest value (the API server allows only one, but a race can make
// two; plugin/pkg/admission/priority/admission.go getDefaultPriorityClass, as Kueue's
// pkg/util/priority getDefaultPriorityClass, picks the lowest; of equal values, where Kubernetes
// takes the first its lister returns, the lowest name); "" when there is none (priority 0).
std::string GlobalDefaultPriorityClass(const std::vector<PriorityClass>& classes);
// The PriorityClass the API server gives the job's pods, which is also the job's own for
// admission and preemption: spec.priorityClassName, else the template's, else
// `global_default` (GlobalDefaultPriorityClass), else "".
std::string PodPriorityClass(const kube::TrainingJob& job, std::string_view global_default);
// Whether the job's priority is its own: a spec.priority that is honoured (`explicit_priority`)
// or a class it names (spec or template). Otherwise it follows the globalDefault class, and
// once admitted its pods' priority (KeepPodsPriority).
bool HasOwnPriority(const kube::TrainingJob& job, bool explicit_priority);
// The Kubernetes pod rule for an admitted job without a priority of its own (HasOwnPriority): a pod
// keeps the priority the API server gave it at creation, whatever the default is later, so the job
// keeps its pods' (the lowest, should a default change between two of them): `w` gets that priority
// and no class. Nothing changes for a job not admitted, one that names a class, or one without a
// live pod (none created yet, or all being deleted): the default of now is what its pods would get.
void KeepPodsPriority(const kube::TrainingJob& job,
                      const std::vector<std::shared_ptr<const kube::Pod>>& pods,
                      bool explicit_priority, admission::Workload& w);
// core/v1 Namespace -> name and labels.
absl::StatusOr<admission::Namespace> DecodeNamespace(std::string_view json);

// The admission core's view of a TrainingJob: per_pod = the template's effective requests
// (already canonical); count = spec.replicas; elastic = spec.elastic; priority_class =
// PodPriorityClass(job, global_default_class), the class its pods get; an explicit spec.priority
// wins over it (priority_class is then empty); creation_time =
// metadata.creationTimestamp in Unix seconds; levels and groups from spec.topology; node
// selector and tolerations from the template; admitted from status.admission when present
// (every resource of per_pod, and `pods`, in admission.flavor; count = admission.replicas; at
// `admission_time`); expected_runtime_seconds = spec.activeDeadlineSeconds; requeue_at from
// status.requeueState.requeueAt while not admitted; revision from
// metadata.resourceVersion (0 when it has none, or when the job names no class and honours no
// spec.priority: its priority then depends on the globalDefault class or its pods, which the
// resourceVersion does not cover).
// InvalidArgument "TrainingJob ns/name: metadata.creationTimestamp: ..." on a bad timestamp.
// Without `allow_job_priority` (phalanx-operator --allow-job-priority) spec.priority is not
// honoured: InvalidArgument naming it for a job waiting for admission; an admitted one (admitted
// when the flag was on) keeps running with its PriorityClass's priority instead, so that its
// quota stays charged.
absl::StatusOr<admission::Workload> WorkloadFromJob(const kube::TrainingJob& job,
                                                    int64_t admission_time = 0,
                                                    bool allow_job_priority = true,
                                                    std::string_view global_default_class = "");

// ---- Deletion while in use ------------------------------------------------------------------

// Kueue's kueue.x-k8s.io/resource-in-use: held by every ClusterTrainingQueue and NodeFlavor, so
// that deleting one still in use waits (Terminating) until nothing needs it any more, instead of
// leaving running jobs charged to no quota.
inline constexpr std::string_view kResourceInUseFinalizer = "phalanx.dev/resource-in-use";

// What is in use, by name: a ClusterTrainingQueue while a job admitted to it has not finished; a
// NodeFlavor while a ClusterTrainingQueue names it (as Kueue's ResourceFlavor) or an admitted
// job runs in it. Pass the snapshot after the cycle's decisions were applied.
struct ResourcesInUse {
  std::set<std::string> cluster_queues;
  std::set<std::string> flavors;
};
ResourcesInUse FindResourcesInUse(const admission::Snapshot& snapshot);

// What the operator does with an object's resource-in-use finalizer: add it to a live object
// without it; remove it from one being deleted that is no longer in use; else nothing.
enum class FinalizerChange { kNone, kAdd, kRemove };
FinalizerChange ResourceInUseFinalizerChange(const kube::ObjectMeta& meta, bool in_use);

// ---- Statuses out ----------------------------------------------------------------------------

struct ResourceUsage {
  std::string resource;
  int64_t total = 0;     // canonical units in use, borrowed included
  int64_t borrowed = 0;  // the part of total above nominal quota
};
struct FlavorUsage {
  std::string flavor;
  std::vector<ResourceUsage> resources;
};
struct ClusterQueueStatus {
  std::string name;
  int32_t pending = 0;
  int32_t admitted = 0;
  std::vector<FlavorUsage> flavors_usage;  // every flavor and resource of the spec, in its order
  // Kueue's weighted dominant resource share x1000, truncated; kInfiniteWeightedShare for a
  // queue of weight 0 that borrows.
  int64_t weighted_share = 0;
  std::string inactive_reason;  // empty = Active
  // The Active condition's reason when inactive, as Kueue's: "Terminating" (being deleted),
  // "Stopped" (stopPolicy), else "Inactive" (a configuration error; inactive_reason says which).
  std::string inactive_condition_reason = "Inactive";
  // The queue object's metadata.generation, written as the Active condition's
  // observedGeneration when > 0. Not computed here: the caller sets it from the object.
  int64_t observed_generation = 0;
};
struct LocalQueueStatus {
  std::string namespace_name;
  std::string name;
  int32_t pending = 0;
  int32_t admitted = 0;
  // Usage of the queue's admitted workloads (borrowed is always 0: borrowing is a ClusterQueue
  // matter). Not written back: the LocalQueue CRD's status has no flavorsUsage.
  std::vector<FlavorUsage> flavors_usage;
  // empty = Active; else its ClusterQueue is missing or inactive, or it is stopped itself.
  std::string inactive_reason;
  // Kueue's LocalQueue reasons: "Stopped" (its own stopPolicy), "ClusterTrainingQueueDoesNotExist",
  // "ClusterTrainingQueueIsInactive" (inactive_reason then says why).
  std::string inactive_condition_reason = "Inactive";
  int64_t observed_generation = 0;  // as ClusterQueueStatus's
  // Its first pending jobs in their ClusterQueue's order (AddPendingJobs), written as
  // status.pendingJobs: what a tenant, who may not list other namespaces' jobs, can see of
  // where its jobs stand.
  struct PendingJob {
    std::string name;
    int32_t position_in_cluster_queue = 0;  // admission::PendingDecision::position
    bool operator==(const PendingJob&) const = default;
  };
  std::vector<PendingJob> pending_jobs;
};
struct QueueStatuses {
  std::vector<ClusterQueueStatus> cluster_queues;  // in Snapshot order
  std::vector<LocalQueueStatus> local_queues;      // in Snapshot order
};

// Kueue's value of weightedShare for an infinite share (weight 0 while borrowing).
inline constexpr int64_t kInfiniteWeightedShare = std::numeric_limits<int64_t>::max();

// The status of every ClusterQueue and LocalQueue of `snapshot`, usually after the cycle's
// decisions were applied to it (admission::ApplyDecisions). Usage is what the admission core
// charges (admission::AdmittedDemand); pending counts workloads not admitted whose LocalQueue
// feeds the queue; admitted counts those admitted under it. An invalid ClusterQueue reports no
// usage (the core charges nothing to it); a stopped (stopPolicy) or terminating one is inactive
// but keeps it.
QueueStatuses ComputeQueueStatuses(const admission::Snapshot& snapshot);

// Lists in each LocalQueue's status its first `max_jobs` pending workloads, by their position in
// their ClusterQueue (`pending` is the cycle's admission::CycleResult::pending; a workload with
// position 0 is in no queue's order and not listed).
void AddPendingJobs(const admission::Snapshot& snapshot,
                    const std::vector<admission::PendingDecision>& pending, int max_jobs,
                    QueueStatuses& statuses);

// Server-side-apply bodies (JSON) for the status subresource of a ClusterQueue and a LocalQueue,
// following the status schemas of crds/phalanx.dev_clustertrainingqueues.yaml and
// phalanx.dev_trainingqueues.yaml. Amounts are written as Kubernetes quantity strings ("1800Gi",
// "180", "500m"). The Active condition (reason Ready, or inactive_condition_reason with
// inactive_reason as its message) carries `now_rfc3339` as its lastTransitionTime: pass the
// previous time while the condition's status is unchanged, as metav1.Condition expects; and
// the status's observed_generation as its observedGeneration.
std::string ClusterQueueStatusApply(const ClusterQueueStatus& status, std::string_view now_rfc3339);
std::string LocalQueueStatusApply(const LocalQueueStatus& status, std::string_view now_rfc3339);

}  // namespace phalanx::operator_server
