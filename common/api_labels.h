// The label and annotation keys that tie Kubernetes objects to Phalanx gangs. The operator sets
// them on every pod it creates; phalanx-scheduler reads them to find a pod's reservation.
//
//   pod.metadata.labels["phalanx.dev/job"]  = "llama-70b"   (TrainingJob name, pod's namespace)
//   pod.metadata.labels["phalanx.dev/rank"] = "3"
#pragma once

#include <string_view>

namespace phalanx {

// TrainingJob name (in the pod's own namespace) of a gang pod.
inline constexpr std::string_view kJobLabel = "phalanx.dev/job";
// The pod's rank in its gang, a decimal integer >= 0.
inline constexpr std::string_view kRankLabel = "phalanx.dev/rank";
// The gang's restart generation (TrainingJob status.restarts when the pods were created), so
// the pods of a restarted gang are told apart from the ones being deleted.
inline constexpr std::string_view kRestartLabel = "phalanx.dev/restart";
// Annotation on a gang pod: the node reserved for its rank when it was created (the node its
// required node affinity names). The job controller compares it with status.placement to find
// pods whose rank moved to another node (a failed node replaced) before they are bound.
inline constexpr std::string_view kNodeAnnotation = "phalanx.dev/node";
// The schedulerName (and kube-scheduler profile) that routes gang pods through the extender.
inline constexpr std::string_view kSchedulerName = "phalanx";
// API group/version of the custom resources.
inline constexpr std::string_view kApiVersion = "phalanx.dev/v1alpha1";

}  // namespace phalanx
