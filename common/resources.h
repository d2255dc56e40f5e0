// Resource lists in canonical integer units, shared by the admission and placement cores.
//
//   ASSIGN_OR_RETURN(ResourceList per_pod,
//                    ParseResourceList({{"cpu", "500m"}, {"nvidia.com/gpu", "8"}}, "spec.resources"));
//   per_pod.at("cpu");             // 500 (millicores)
//   per_pod.at("nvidia.com/gpu");  // 8
//
// Units follow kube-scheduler: `cpu` in millicores, every other resource (memory, ephemeral
// storage, pods, GPUs, EFA devices, any extended resource) in whole units rounded up.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/quantity.h"

namespace phalanx {

inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourcePods = "pods";
inline constexpr std::string_view kResourceGpu = "nvidia.com/gpu";
inline constexpr std::string_view kResourceEfa = "vpc.amazonaws.com/efa";

// Resource name -> amount in canonical units. Ordered so that printing and hashing are stable.
using ResourceList = std::map<std::string, int64_t, std::less<>>;

// The canonical integer amount of `quantity` for resource `name`: millicores for cpu, whole
// units (bytes, devices) for the rest. OutOfRange for a cpu amount whose millicores do not fit
// in 64 bits (over 9.2e15 cores).
absl::StatusOr<int64_t> CanonicalAmount(std::string_view name, const Quantity& quantity);
// The quantity text for a canonical amount (the inverse of CanonicalAmount): "1536Mi", "500m",
// "8". Every int64 amount has one: INT64_MAX bytes is "9223372036854775807".
std::string FormatQuantity(std::string_view name, int64_t amount);

// Kubernetes' extended resources (nvidia.com/gpu, vpc.amazonaws.com/efa, ...): a name with a
// domain outside kubernetes.io. The API server takes only whole numbers of them.
bool IsExtendedResourceName(std::string_view name);
// hugepages-2Mi, hugepages-1Gi, ...: bytes, and, like extended resources, never overcommitted.
bool IsHugePagesResourceName(std::string_view name);

// Parses name -> quantity text. `field` names the source in errors, e.g.
// "spec.template.spec.containers[0].resources.requests[memory]: invalid quantity \"12Qi\"...".
// Negative amounts are rejected, and fractions of an extended resource ("1.5", "500m" GPUs),
// which the API server refuses in a pod.
absl::StatusOr<ResourceList> ParseResourceList(const std::map<std::string, std::string>& text,
                                               std::string_view field);

// The API server refuses a pod whose container requests an extended resource or hugepages
// without a limit equal to the request (they cannot be overcommitted). Returns that problem for
// one container's requests and limits (quantity texts), named by field ("<limits_field>[name]:
// must be set, equal to the request ..."), or "" when there is none.
std::string NonOvercommitLimitProblem(const std::map<std::string, std::string>& requests,
                                      const std::map<std::string, std::string>& limits,
                                      std::string_view limits_field);

// Why a pod-template field that constrains where pods may run, and that gang placement does not
// model, is refused: `field` is a required podAffinity or podAntiAffinity term, or a
// topologySpreadConstraint with whenUnsatisfiable DoNotSchedule. The gang's nodes are chosen
// before its pods exist, so such a rule could leave ranks unschedulable on their reserved nodes.
std::string UnmodelledSchedulingProblem(std::string_view field);

// A required pod anti-affinity term of a pod template, as decoded from JSON (kube/) or YAML
// (sim/), for OneRankPerNode.
struct AntiAffinityTermView {
  std::string topology_key;
  bool has_selector = false;       // labelSelector present (an absent one selects no pod)
  std::map<std::string, std::string> match_labels;
  struct Expression {
    std::string key;
    std::string op;                // In | NotIn | Exists | DoesNotExist
    std::vector<std::string> values;
  };
  std::vector<Expression> match_expressions;
  // namespaces other than the pod's own, a namespaceSelector, or matchLabelKeys /
  // mismatchLabelKeys: a term placement does not model.
  bool beyond_own_namespace = false;
  bool label_keys = false;
};

// True when `term` keeps the template's own pods one per node, the one pod anti-affinity gang
// placement models (GangRequest::max_pods_per_node = 1): topologyKey kubernetes.io/hostname,
// the pod's own namespace, and a labelSelector that `pod_labels` (the template's) satisfy. The
// operator narrows such a term to the job's own current pods when it builds them, so other pods
// that carry the same labels do not count.
bool OneRankPerNode(const AntiAffinityTermView& term,
                    const std::map<std::string, std::string>& pod_labels);

// a += b, a -= b (entries that reach zero are kept), and scaling by a count.
void AddTo(ResourceList& a, const ResourceList& b);
void SubtractFrom(ResourceList& a, const ResourceList& b);
ResourceList Scaled(const ResourceList& a, int64_t factor);

// A pod's resources combined as the API server's resourcehelper (PodRequests, PodLimits)
// combines its containers': the containers plus the sidecars, and at least the largest init
// step, an init container running beside the sidecars started before it. Overhead is left to
// the caller (requests add all of it, limits only on what some container limits).
//
//   PodResourceSum sum;
//   sum.AddSidecar(proxy);  sum.AddInit(setup);  sum.AddContainer(trainer);
//   ResourceList pod = std::move(sum).Total();
class PodResourceSum {
 public:
  void AddContainer(const ResourceList& r);
  void AddSidecar(const ResourceList& r);  // an init container with restartPolicy Always
  void AddInit(ResourceList r);            // in the order the init containers run
  ResourceList Total() &&;                 // consumes the sum

 private:
  ResourceList containers_, sidecars_, init_max_;
};

// True if every entry of `request` is <= the same entry of `available` (missing = 0).
bool FitsIn(const ResourceList& request, const ResourceList& available);

// "cpu=4, memory=64Gi, nvidia.com/gpu=8", for messages.
std::string FormatResources(const ResourceList& list);

}  // namespace phalanx
