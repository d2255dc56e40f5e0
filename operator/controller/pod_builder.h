// The pods, the headless Service and its EndpointSlices of an admitted TrainingJob, as the JSON
// the operator sends to the API server. Pure: no I/O, no clock; the job controller decides when
// to create what, these functions only say what it is.
//
//   PodContext ctx{.world_size = job.status.admission->replicas,
//                  .node_labels = flavor.node_labels, .tolerations = flavor.tolerations,
//                  .restart = job.status.restarts};
//   ASSIGN_OR_RETURN(std::string service, BuildHeadlessService(job, ctx.master_port));
//   for (int rank = 0; rank < ctx.world_size; ++rank) {
//     ASSIGN_OR_RETURN(std::string pod, BuildPod(job, ctx, rank));   // POST .../pods
//   }
//
//   ASSIGN_OR_RETURN(auto slices, BuildEndpointSlices(job, addresses));  // once pods have IPs
//
// Pod `<job>-<rank>` is spec.template with: labels phalanx.dev/job, phalanx.dev/rank and
// phalanx.dev/restart; an owner reference to the job; schedulerName "phalanx"; hostname
// `<job>-<rank>` and subdomain `<job>`, so `<job>-0.<job>.<namespace>.svc` resolves through the
// Service; the flavor's node labels and tolerations; restartPolicy Never unless the template
// says OnFailure; and the torchrun / Kubeflow env in every container and init container
// (docs/operator.md lists each variable and where its value comes from).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kube/api/training_job.h"
#include "kube/objects.h"

namespace phalanx::controller {

// torchrun's default --master-port.
inline constexpr int32_t kDefaultMasterPort = 29500;

// What a pod needs beyond the TrainingJob: the gang as admitted, identical for every rank.
struct PodContext {
  // Pods in the gang as admitted (status.admission.replicas): WORLD_SIZE, PET_NNODES.
  int32_t world_size = 0;
  // The elastic range the gang was admitted with (normally job.elastic). Held here, not read
  // from the job, so that every pod of one gang gets the same PET_NNODES even if spec.elastic
  // is edited while it runs. PET_NNODES is "min:max", widened to include world_size.
  std::optional<kube::TrainingJobElastic> elastic;
  // The admitted ResourceFlavor's nodeLabels (merged into nodeSelector; a template selector
  // that wants another value for one of them is an error) and tolerations (appended).
  std::map<std::string, std::string> node_labels;
  std::vector<kube::Toleration> tolerations;
  int32_t master_port = kDefaultMasterPort;
  // status.restarts: the phalanx.dev/restart label.
  int32_t restart = 0;
  // PET_NPROC_PER_NODE; empty = the pod's nvidia.com/gpu count (requests, else limits, summed
  // over its containers), or "1" without GPUs. Anything torchrun takes: "4", "auto", "gpu".
  std::string nproc_per_node;
  // Optional: nodes[rank] is the node reserved for the rank (status.placement.nodes). When set,
  // the pod requires that node through node affinity on metadata.name, so kube-scheduler's
  // NodeAffinity PreFilter narrows every later plugin to that one node (docs/operator.md), and is
  // annotated phalanx.dev/node with it (common/api_labels.h). Empty: no pinning; the extender
  // alone steers the pod to its node.
  std::vector<std::string> nodes;
};

// The name of rank `rank`'s pod of job `job`: "<job>-<rank>" (also its DNS hostname).
std::string RankPodName(std::string_view job, int rank);

// The Pod of `rank` as JSON. InvalidArgument when the job has no name, namespace or uid, when
// ctx is inconsistent (world_size < 1, rank outside [0, world_size), nodes shorter than the
// gang, a bad port), or when spec.template cannot become a pod; the message names the field
// (e.g. "spec.template.spec.containers: at least one container is required").
absl::StatusOr<std::string> BuildPod(const kube::TrainingJob& job, const PodContext& ctx,
                                     int rank);

// The API server's refusal of a pod built from spec.template under fieldValidation=Strict
// ("Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field
// \"spec.restartPolicyy\"") with the fields named as the TrainingJob's:
// "spec.template: unknown field \"spec.template.spec.restartPolicyy\"".
std::string TemplateDecodingError(std::string_view api_message);

// What the API server's answer to a dry run of a rank's pod (create with dryRun=All and
// fieldValidation=Strict, before the job is admitted) says of the template.
struct TemplateVerdict {
  enum class Kind {
    // Created (or AlreadyExists: the name is taken, which the API server checks last), or the
    // dry run could not say (no answer, a 5xx, a webhook without dry-run support, ...): the
    // pods' own creates will tell.
    kPassed,
    // Refused for the body itself: a field the pod schema does not know (400 strict decoding)
    // or an invalid value (422). Only an edit of the job changes that.
    kRefused,
    // Refused by an admission plugin (403: PodSecurity, a webhook, a PriorityClass missing):
    // something outside the job may change, so it is asked again later.
    kRefusedForNow,
    // Refused for something the operator reports itself, in its own words, where it belongs:
    // a ResourceQuota or a LimitRange (the admission controller holds the job back, naming
    // it), or the operator's own RBAC (an install problem, not the job's: its pods' creates
    // record a Forbidden event). Admitted as if passed; `message` names what refused.
    kDeferred,
  };
  Kind kind = Kind::kPassed;
  // For a refusal: the API server's words, fields named as the TrainingJob's
  // ("spec.template.spec.containers[0].image: Required value").
  std::string message;
};
TemplateVerdict JudgePodDryRun(const absl::Status& status);

// The headless Service `<job>` that gives every rank a DNS name: clusterIP None, no selector,
// publishNotReadyAddresses, port `master_port`, owned by the job. Without a selector
// kube-controller-manager's endpoint controllers leave it alone; the operator publishes its
// addresses itself (BuildEndpointSlices). InvalidArgument for a job without name, namespace or
// uid, or a port outside 1..65535.
absl::StatusOr<std::string> BuildHeadlessService(const kube::TrainingJob& job,
                                                 int32_t master_port = kDefaultMasterPort);

// A rank's pod as the job's EndpointSlices list it.
struct RankAddress {
  int32_t rank = 0;
  std::string pod;   // metadata.name
  std::string uid;   // metadata.uid, for the endpoint's targetRef
  std::string ip;    // status.podIP
  std::string node;  // spec.nodeName; may be empty
};

// One EndpointSlice of a job, ready for a server-side apply.
struct EndpointSliceBody {
  std::string name;
  std::string json;
  // A hash of everything the slice says, also its annotation kEndpointsHashAnnotation: equal
  // hashes, equal slices, so a slice already written is not written again.
  std::string hash;
};

// The API allows 1,000 endpoints in one EndpointSlice; ranks [1000k, 1000k + 999] go in slice k.
inline constexpr int32_t kRanksPerEndpointSlice = 1000;
// Label endpointslice.kubernetes.io/managed-by of the operator's slices (kube-controller-manager
// writes "endpointslice-controller.k8s.io" on its own).
inline constexpr std::string_view kEndpointSliceManagedBy = "phalanx-operator.phalanx.dev";
inline constexpr std::string_view kEndpointsHashAnnotation = "phalanx.dev/endpoints-hash";

// The EndpointSlices of the job's headless Service `<job>`, what kube-controller-manager would
// write for a Service selecting the ranks' pods with publishNotReadyAddresses: every address
// ready and serving, hostname `<job>-<rank>` (so `<job>-<rank>.<job>.<namespace>.svc` resolves),
// the pod's node and a targetRef to it; port `master` = master_port. Labelled
// kubernetes.io/service-name=<job>, endpointslice.kubernetes.io/managed-by=kEndpointSliceManagedBy
// and phalanx.dev/job, owned by the job. Named `<job>-<uid prefix>-<ipv4|ipv6>-<k>`: a job
// deleted and applied again under the same name never shares a slice with its predecessor.
// Ranks without an IP are left out; no ranks, no slices. InvalidArgument for a job without
// name, namespace or uid, a bad port, or a rank given twice.
absl::StatusOr<std::vector<EndpointSliceBody>> BuildEndpointSlices(
    const kube::TrainingJob& job, std::vector<RankAddress> ranks,
    int32_t master_port = kDefaultMasterPort);

}  // namespace phalanx::controller
