// The ResourceQuotas of a job's namespace, checked before admission: a gang whose pods a quota
// can never let the API server create is not admitted (nor allowed to preempt anyone) only to
// have its pod creates refused afterwards.
//
// ResourceQuota acts when pods are created, after admission. A quota scoped to a PriorityClass
// is how Kubernetes limits who may use that class (`scopeSelector: PriorityClass In [high]`,
// `hard: {pods: "0"}`); without this check a job of a namespace forbidden the class was still
// admitted at its priority and preempted other tenants' gangs (security audit 2026-11-30 d, S2).
//
//   ASSIGN_OR_RETURN(NamespaceQuota q, DecodeResourceQuota(json));
//   std::string why = QuotaRefusal(job, /*pods=*/2, {q});  // "" if the quotas allow 2 pods
//
// Only the hard limits are compared, not the quota's current use: what other pods of the
// namespace use changes, and a gang that waits for them is left to the pod creates (and the
// pods-ready timeout). Pure: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/resources.h"
#include "kube/api/training_job.h"

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
  bool operator==(const NamespaceQuota&) const = default;
};

// A ResourceQuota object (core/v1). InvalidArgument naming the quota and field for an
// unparseable quantity.
absl::StatusOr<NamespaceQuota> DecodeResourceQuota(std::string_view json);

// Why the namespace's quotas can never let `pods` pods of `job` be created at once (the first
// quota that cannot, with its scope and the limit), "" if they can. A quota applies to the
// job's pods when every scope and scope requirement matches them: the pods request resources
// (NotBestEffort), have no activeDeadlineSeconds (NotTerminating), have the job's
// priorityClassName, else the template's (PriorityClass), and no cross-namespace pod affinity.
std::string QuotaRefusal(const kube::TrainingJob& job, int32_t pods,
                         const std::vector<NamespaceQuota>& quotas);

}  // namespace phalanx::operator_server
