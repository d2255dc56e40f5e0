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
//   std::string why = QuotaRefusal(job, /*pods=*/2, {q});  // "" if the limits allow 2 pods
//   std::string wait = QuotaShortfall(job, 2, {q});       // "" if there is room for 2 now
//
// Both compare what a pod's creation is charged: pods (count/pods) and requests, not limits.
// Pure: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/resources.h"
#include "kube/api/training_job.h"
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
  // spec.hard on what a pod's creation is charged: "pods" (also "count/pods") and requests
  // ("requests.<name>", or "<name>" for cpu, memory, ephemeral-storage), canonical units.
  ResourceList hard_per_pods;  // key: "pods" or the resource name
  // status.hard and status.used on the same keys: the limits the API server enforces now (the
  // quota controller copies spec.hard there) and what the namespace's pods are charged.
  ResourceList status_hard;
  ResourceList used;
  bool operator==(const NamespaceQuota&) const = default;
};

// A ResourceQuota object (core/v1). InvalidArgument naming the quota and field (spec.hard[pods],
// status.used[requests.nvidia.com/gpu], ...) for an unparseable quantity.
absl::StatusOr<NamespaceQuota> DecodeResourceQuota(std::string_view json);

// Why the namespace's quotas can never let `pods` pods of `job` be created at once (the first
// quota that cannot, with its scope and the limit), "" if they can. A quota applies to the
// job's pods when every scope and scope requirement matches them: the pods request resources
// (NotBestEffort), have no activeDeadlineSeconds (NotTerminating), have the job's
// priorityClassName, else the template's (PriorityClass), and no cross-namespace pod affinity.
std::string QuotaRefusal(const kube::TrainingJob& job, int32_t pods,
                         const std::vector<NamespaceQuota>& quotas);

// Why the namespace's quotas have no room now for `pods` pods of `job` (the first quota that
// applies, as for QuotaRefusal, whose status.hard less status.used is short, with what it has
// left, its use and what the gang needs), "" if they have. A job not admitted yet waits
// while this says why: the API server would refuse its pods until the namespace uses less, and
// evicting other tenants' gangs would free none of it. status.used counts pods that exist: the
// pods of a gang admitted but not created yet, or admitted in the same cycle, are not in it.
std::string QuotaShortfall(const kube::TrainingJob& job, int32_t pods,
                           const std::vector<NamespaceQuota>& quotas);

// The largest size of an elastic gang (`range.min` plus whole steps, at most `range.max`)
// whose pods beyond the `running` ones it has now the namespace's quotas have room for
// (QuotaShortfall); with no room for more, `running` within the range (the minimum for a job
// not admitted, which QuotaShortfall is asked about first): a job is admitted, or grows, only to a
// size whose pods the API server will create, instead of at its maximum with the rest refused until
// the pods-ready timeout shrinks it. `running` is 0 for a job not admitted.
int32_t ElasticSizeWithRoom(const kube::TrainingJob& job, const placement::ElasticRange& range,
                            int32_t running, const std::vector<NamespaceQuota>& quotas);

// Whether a change of a quota can change what QuotaRefusal or QuotaShortfall say: anything but
// status.used going up, which every pod create in the namespace does.
bool QuotaChangeMatters(const NamespaceQuota& before, const NamespaceQuota& after);

}  // namespace phalanx::operator_server
