// The ResourceQuotas of a job's namespace, checked before admission: a gang whose pods a quota
// can never let the API server create is not admitted (nor allowed to preempt anyone) only to
// have its pod creates refused afterwards, and a gang the quotas could hold but whose room the
// namespace's pods use now waits, pending, until they use less (Volcano's `resourcequota`
// enqueue check).
//
// ResourceQuota acts when pods are created, after admission. A quota scoped to a PriorityClass
// is how Kubernetes limits who may use that class (`scopeSelector: PriorityClass In [high]`,
// `hard: {pods: "0"}`); without this check a job of a namespace forbidden the class was still
// admitted at its priority and preempted other tenants' gangs (security audit 2026-11-30 d, S2).
//
//   ASSIGN_OR_RETURN(NamespaceQuota q, DecodeResourceQuota(json));
//   std::vector<NamespaceQuota> quotas = {q};
//   ChargeJobPods({{.job = &admitted, .existing = 1, .owed = 3}}, quotas);
//   std::string why = QuotaRefusal(job, /*pods=*/2, quotas);  // "" if the limits allow 2 pods
//   std::string wait = QuotaShortfall(job, 2, quotas);       // "" if there is room for 2 now
//   AddQuotaBudgets(quotas, snapshot.budgets);               // the same room, for the cycle
//   workload.budget_per_pod = BudgetPerPod(job, quotas);
//
// Both compare what a pod's creation is charged: pods (count/pods), requests and limits
// (limits.cpu, limits.memory, limits.ephemeral-storage: the API server quotas extended
// resources by their requests only), as the API server's pod quota evaluator does. The use is
// status.used with the pods of admitted jobs that are not created yet laid over it
// (ChargeJobPods); within one admission cycle, the gangs admitted before a job take from the
// same room through the admission core's budgets (AddQuotaBudgets, BudgetPerPod).
// Pure: no I/O.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/resources.h"
#include "kube/api/training_job.h"
#include "operator/admission/types.h"
#include "scheduler/placement_types.h"

namespace phalanx::operator_server {

// One requirement of spec.scopeSelector.matchExpressions (scopeName, operator, values).
struct ScopeRequirement {
  std::string scope;  // PriorityClass, BestEffort, NotBestEffort, Terminating, ...
  std::string op;     // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
  bool operator==(const ScopeRequirement&) const = default;
};

struct NamespaceQuota {
  std::string namespace_name;
  std::string name;
  std::vector<std::string> scopes;         // spec.scopes
  std::vector<ScopeRequirement> selector;  // spec.scopeSelector.matchExpressions
  // spec.hard on what a pod's creation is charged: "pods" (also "count/pods"), requests
  // ("requests.<name>", or "<name>" for cpu, memory, ephemeral-storage) and limits of cpu,
  // memory and ephemeral-storage, in canonical units (of the resource, for a limit).
  ResourceList hard_per_pods;  // key: "pods", the requested resource's name, or "limits.<name>"
  // status.hard and status.used on the same keys: the limits the API server enforces now (the
  // quota controller copies spec.hard there) and what the namespace's pods are charged, at
  // least what the pods of jobs the operator sees exist are charged (ChargeJobPods).
  ResourceList status_hard;
  ResourceList used;
  // What the pods admitted jobs are still owed will be charged when they are created
  // (ChargeJobPods): not in `used` yet, but no longer room for another gang.
  ResourceList owed;
  bool operator==(const NamespaceQuota&) const = default;
};

// What a LimitRange (core/v1) fills in for containers that leave a resource unset: its
// `type: Container` items' `default` (limits) and `defaultRequest` (requests; where it names
// none, `default`'s, as the API server defaults the object), in canonical units. Of two items
// naming one resource the first holds.
//
// And the bounds its LimitRanger enforces on every pod created, which no pod of a job outside
// them would pass: `type: Container` and `type: Pod` items' `max` and `min` (of two items the
// lower max and the higher min).
struct LimitRangeDefaults {
  std::string namespace_name;
  std::string name;
  ResourceList limits;
  ResourceList requests;
  ResourceList container_max, container_min, pod_max, pod_min;
  bool operator==(const LimitRangeDefaults&) const = default;
};
// InvalidArgument naming the object and field for a body or quantity that does not decode.
absl::StatusOr<LimitRangeDefaults> DecodeLimitRange(std::string_view json);
// The job's pods as the API server's LimitRanger leaves them before any quota sees them: the
// defaults of every LimitRange of its namespace (`ranges` in name order: of two naming one
// resource the first holds) applied (kube::ApplyContainerDefaults). Its requests change with
// them, for placement too: the pods will request what the defaults add.
void ApplyLimitRanges(const std::vector<LimitRangeDefaults>& ranges, kube::TrainingJob& job);
// Why every pod of `job` (its defaults applied) would be refused by a LimitRange of its
// namespace, naming the container, resource, bound and LimitRange; "" if none would. Kueue's
// rule (pkg/util/limitrange: ValidatePodSpec): per container the larger of request and limit
// at most `max`, the smaller at least `min` (a `min` resource left unset is below it); per pod
// the effective requests (job.pod.requests) within the Pod item's bounds.
std::string LimitRangeRefusal(const std::vector<LimitRangeDefaults>& ranges,
                              const kube::TrainingJob& job);

// A ResourceQuota object (core/v1). InvalidArgument naming the quota and field (spec.hard[pods],
// status.used[requests.nvidia.com/gpu], ...) for an unparseable quantity.
absl::StatusOr<NamespaceQuota> DecodeResourceQuota(std::string_view json);

// Why the namespace's quotas can never let `pods` pods of `job` be created at once (the first
// quota that cannot, with its scope and the limit), "" if they can. A quota applies to the
// job's pods when every scope and scope requirement matches them: the pods request resources
// (NotBestEffort), have no activeDeadlineSeconds (NotTerminating), have the job's
// priorityClassName, else the template's, else the cluster's globalDefault class
// `global_default` (PriorityClass; PodPriorityClass in queue_objects.h), and no cross-namespace
// pod affinity.
std::string QuotaRefusal(const kube::TrainingJob& job, int32_t pods,
                         const std::vector<NamespaceQuota>& quotas,
                         std::string_view global_default = "");

// Why the namespace's quotas have no room now for `pods` pods of `job` (the first quota that
// applies, as for QuotaRefusal, whose status.hard less status.used is short, with what it has
// left, its use and what the gang needs), "" if they have. A job not admitted yet waits
// while this says why: the API server would refuse its pods until the namespace uses less, and
// evicting other tenants' gangs would free none of it. The use counts the pods that admitted
// gangs are still owed (ChargeJobPods); those admitted in the same cycle are the admission
// core's budgets' to count.
std::string QuotaShortfall(const kube::TrainingJob& job, int32_t pods,
                           const std::vector<NamespaceQuota>& quotas,
                           std::string_view global_default = "");

// The largest size of an elastic gang (`range.min` plus whole steps, at most `range.max`)
// whose pods beyond the `running` ones it has now the namespace's quotas have room for
// (QuotaShortfall); with no room for more, `running` within the range (the minimum for a job
// not admitted, which QuotaShortfall is asked about first): a job is admitted, or grows, only to a
// size whose pods the API server will create, instead of at its maximum with the rest refused until
// the pods-ready timeout shrinks it. `running` is 0 for a job not admitted.
int32_t ElasticSizeWithRoom(const kube::TrainingJob& job, const placement::ElasticRange& range,
                            int32_t running, const std::vector<NamespaceQuota>& quotas,
                            std::string_view global_default = "");

// The pods of one job as its namespace's quotas charge them, beyond what status.used shows.
struct JobPods {
  const kube::TrainingJob* job = nullptr;
  int32_t existing = 0;  // its pods that exist and are neither terminating nor finished
  int32_t owed = 0;      // admitted, not created yet: its size less `existing` and succeeded ranks
};

// How many of a job's pods exist and are neither terminating (deletionTimestamp) nor
// finished (Succeeded, Failed): the ones that keep a rank's place in the quota's use.
int32_t LivePods(const std::vector<std::shared_ptr<const kube::Pod>>& pods);
// How many of them succeeded and are not being deleted: ranks that are done, whose pods are not
// created again, so not owed either (a finished pod is charged nothing).
int32_t SucceededPods(const std::vector<std::shared_ptr<const kube::Pod>>& pods);

// Lays the pods of the operator's jobs over each quota's use, on every resource it limits:
// `used` becomes at least what the existing pods of the jobs it charges are charged, and
// `owed` what their owed pods will be. The API server's quota admission charges a pod in
// status.used synchronously at its create, before the pod is stored, so a pod that exists is
// in it; but the operator's ResourceQuota informer may show that write after its pod informer
// shows the pod, and taking the larger of the two closes that window for the namespace's
// jobs' pods (not for other pods of the namespace). A pod not created yet is in neither.
// A quota scoped to a PriorityClass charges the pods of a job that names none if
// `global_default` is that class (PodPriorityClass), as for QuotaRefusal.
void ChargeJobPods(const std::vector<JobPods>& jobs, std::vector<NamespaceQuota>& quotas,
                   std::string_view global_default = "");

// The room each of the quotas leaves (status.hard less the use and the owed pods), one budget
// per quota and resource, for the admission core (admission::Snapshot::budgets); a quota not
// yet seen by the quota controller (no status.hard) gives none.
void AddQuotaBudgets(const std::vector<NamespaceQuota>& quotas,
                     std::map<std::string, admission::Budget>& budgets);

// What each pod of the job takes from those budgets: the quotas that apply to its pods, on the
// resources its pods are charged (admission::Workload::budget_per_pod); `global_default` as for
// QuotaRefusal.
std::map<std::string, int64_t> BudgetPerPod(const kube::TrainingJob& job,
                                            const std::vector<NamespaceQuota>& quotas,
                                            std::string_view global_default = "");

// Whether a change of a quota can change what QuotaRefusal or QuotaShortfall say: anything but
// status.used going up, which every pod create in the namespace does.
bool QuotaChangeMatters(const NamespaceQuota& before, const NamespaceQuota& after);

}  // namespace phalanx::operator_server
