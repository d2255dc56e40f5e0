// Typed view of a phalanx.dev/v1alpha1 TrainingJob (crds/phalanx.dev_trainingjobs.yaml), decoded
// from the JSON an informer keeps (kube::RawObject). Both binaries read jobs through it:
// phalanx-scheduler rebuilds reservations from `status.placement`; phalanx-operator builds gangs
// and pods from `spec`.
//
//   ASSIGN_OR_RETURN(kube::TrainingJob job, kube::DecodeTrainingJob(raw.json));
//   if (job.status.placement) Restore(job.meta.Key(), job.status.placement->nodes);
//   int64_t gpus = job.pod.requests["nvidia.com/gpu"];   // per pod, as kube-scheduler counts it
//
// The API server has already validated the object against the CRD schema and CEL rules, so
// decoding is lenient about what it does not need; a type mismatch in a field it reads is
// InvalidArgument naming the field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kube/objects.h"
#include "kube/resource.h"
#include "scheduler/placement_types.h"

namespace kube {

inline constexpr std::string_view kTrainingJobKind = "TrainingJob";

// The kube::Resource of TrainingJobs.
const Resource& TrainingJobs();

struct TrainingJobElastic {
  int32_t min_replicas = 0;
  int32_t max_replicas = 0;
  int32_t step = 1;
};

struct TrainingJobTopology {
  std::string required;   // node label key, "" if unset
  std::string preferred;  // node label key, "" if unset
  int32_t group_size = 0;
  std::string group_level;
};

struct TrainingJobAdmission {
  std::string cluster_queue;
  std::string flavor;
  int32_t replicas = 0;
  // The admitted flavors' node labels and tolerations as they were at admission: the pods get
  // these while the job stays admitted, whatever later edits of the NodeFlavor. nullopt in a
  // status written before they were recorded (the NodeFlavor as it is now applies).
  std::optional<std::map<std::string, std::string>> node_selector;
  std::optional<std::vector<Toleration>> tolerations;
};

struct TrainingJobPlacement {
  std::string domain;              // label value of the domain holding the gang
  std::string level;               // its label key
  std::vector<std::string> nodes;  // nodes[rank]
};

// An entry of spec.failurePolicy.rules: what a failed rank's container exit code does, as a
// rule of a Job's podFailurePolicy with onExitCodes.
struct TrainingJobFailureRule {
  std::string action;          // FailJob | Ignore | Count
  std::string container_name;  // onExitCodes.containerName; "" = any container
  bool not_in = false;         // onExitCodes.operator NotIn (else In)
  std::vector<int32_t> values;
};

// status.requeueState, Kueue's Workload requeueState: how often the job was evicted because its
// gang did not get every rank running in time (phalanx-operator --pods-ready-timeout-seconds),
// and when it may be admitted again.
struct TrainingJobRequeueState {
  int32_t count = 0;
  std::string requeue_at;  // RFC 3339; "" = not requeued (the backoff limit was reached)
  bool operator==(const TrainingJobRequeueState&) const = default;
};

struct TrainingJobStatus {
  std::string phase;
  std::optional<TrainingJobAdmission> admission;
  std::optional<TrainingJobPlacement> placement;
  int32_t restarts = 0;
  // Of those, the restarts after a rank failed because of its node (not counted against
  // maxRestarts).
  int32_t node_fault_restarts = 0;
  // Of those, the restarts a failure rule with action Ignore left uncounted.
  int32_t ignored_restarts = 0;
  std::optional<TrainingJobRequeueState> requeue_state;

  // The restarts counted against spec.failurePolicy.maxRestarts.
  int32_t CountedRestarts() const { return restarts - node_fault_restarts - ignored_restarts; }
};

struct TrainingJob {
  ObjectMeta meta;
  std::string queue_name;
  std::string priority_class_name;
  std::optional<int32_t> priority;
  int32_t replicas = 0;
  std::optional<TrainingJobElastic> elastic;
  TrainingJobTopology topology;
  int32_t max_restarts = 3;
  std::vector<TrainingJobFailureRule> failure_rules;  // spec.failurePolicy.rules, in order
  std::string success_policy = "All";
  bool suspend = false;
  std::optional<int32_t> ttl_seconds_after_finished;
  // spec.activeDeadlineSeconds: how long the gang may run from its admission; also its expected
  // run time for backfill. Unset: no limit, no estimate.
  std::optional<int64_t> active_deadline_seconds;
  // spec.template decoded as a pod: its labels, node selector, tolerations, schedulerName and
  // effective per-pod requests (containers, sidecars, init containers, overhead), with requests
  // defaulted to limits as the API server does for pods (a template is not defaulted).
  Pod pod;
  // The pods' limits as a ResourceQuota's limits.* charges them (resourcehelper.PodLimits, the
  // API server's pod quota evaluator): containers plus sidecars, at least the largest init
  // step, plus overhead on the resources that have a limit. A resource no container limits is
  // absent (charged nothing).
  phalanx::ResourceList pod_limits;
  // Of cpu and memory, those that some container or init container of the template sets no
  // limit for (unset_limits) or, after requests are defaulted to limits, no request for
  // (unset_requests): the API server refuses such a pod in a namespace with a ResourceQuota
  // that tracks them ("must specify limits.cpu"), sorted.
  std::vector<std::string> unset_limits;
  std::vector<std::string> unset_requests;
  // Each container, sidecar and init container of the template, in order, with its requests
  // (defaulted to its limits) and limits, and the template's overhead: what a LimitRange's
  // defaults are applied to (ApplyContainerDefaults).
  struct Container {
    enum class Kind { kContainer, kSidecar, kInit };
    Kind kind = Kind::kContainer;
    phalanx::ResourceList requests;
    phalanx::ResourceList limits;
  };
  std::vector<Container> containers;
  phalanx::ResourceList overhead;
  // The pods' QoS class is BestEffort: no container or init container requests or limits cpu
  // or memory (extended resources such as nvidia.com/gpu do not count, as in the API server's
  // GetPodQOS), which a ResourceQuota's BestEffort / NotBestEffort scope matches.
  bool pod_best_effort = false;
  // The template sets spec.activeDeadlineSeconds, which its pods keep: a ResourceQuota's
  // Terminating scope matches them, NotTerminating does not.
  bool pod_terminating = false;
  // A pod (anti-)affinity term of the template, required or preferred, names namespaces or a
  // namespaceSelector: a ResourceQuota's CrossNamespacePodAffinity scope matches its pods (the
  // API server's pod quota evaluator, usesCrossNamespacePodAffinity).
  bool pod_cross_namespace_affinity = false;
  // spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
  // .nodeSelectorTerms, validated (a bad one is the template_problem); empty = none.
  std::vector<phalanx::placement::NodeSelectorTerm> node_affinity;
  // 1 when the template's required pod anti-affinity keeps its own pods one per node
  // (phalanx::OneRankPerNode), else 0: GangRequest::max_pods_per_node.
  int32_t max_pods_per_node = 0;
  // spec.template as JSON text, for building the pods.
  std::string template_json;
  // Why no pod built from the template would be accepted, "" if nothing is known: a fraction of
  // an extended resource ("spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]:
  // must be a whole number, got \"1.5\" ..."). The CRD cannot say it; the operator reports it
  // as the job's Invalid reason instead of admitting a gang whose pods would all be refused.
  std::string template_problem;
  TrainingJobStatus status;
};

absl::StatusOr<TrainingJob> DecodeTrainingJob(std::string_view json);
// Only metadata and status, for a job whose spec DecodeTrainingJob cannot read (an edit with a
// template quantity that is not one): enough to let it go when it is deleted.
absl::StatusOr<TrainingJob> DecodeTrainingJobWithoutSpec(std::string_view json);

// A pod's toleration as placement matches it (an empty operator is Equal), and back (a
// ResourceFlavor's tolerations as its pods carry them).
// What the API server's LimitRanger does to each pod of the job before a ResourceQuota sees it:
// every container (init containers and sidecars too) that leaves a resource of `limits` unset
// gets that limit, and one that leaves a resource of `requests` unset gets that request (a
// LimitRange's `default` and `defaultRequest`; its stored `defaultRequest` already holds
// `default` where it set none). The pod's requests, limits, unset cpu/memory and QoS are
// recomputed; nothing changes when no container lacks a defaulted resource.
void ApplyContainerDefaults(const phalanx::ResourceList& limits,
                            const phalanx::ResourceList& requests, TrainingJob& job);

phalanx::placement::Toleration ToPlacementToleration(const Toleration& t);
Toleration FromPlacementToleration(const phalanx::placement::Toleration& t);

// When spec.activeDeadlineSeconds runs out for `job`, admitted at `admitted_since` (the
// lastTransitionTime of its Admitted=True condition, which an eviction or a suspension turns
// False, so a new admission starts the clock again): that time plus the deadline. nullopt
// without a deadline, status.admission or `admitted_since`, and for a finished job. The one
// rule phalanx-operator enforces and `phalanx explain` prints (docs/operator.md).
std::optional<absl::Time> ActiveDeadline(const TrainingJob& job,
                                         std::optional<absl::Time> admitted_since);

}  // namespace kube
