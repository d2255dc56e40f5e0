// Kubernetes matching rules the admission core needs: label selectors (ClusterQueue
// namespaceSelector), taints against tolerations (ResourceFlavor nodeTaints), and whether a
// flavor's node labels agree with a workload's node selector.
//
//   LabelSelector team_a{.match_labels = {{"team", "a"}}};
//   Matches(team_a, {{"team", "a"}, {"env", "prod"}});   // true
//   Tolerates({{.key = "gpu", .op = "Exists"}}, {.key = "gpu", .effect = "NoSchedule"});  // true
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "operator/admission/types.h"

namespace phalanx::admission {

// InvalidArgument naming `field` if an operator is unknown or its values are inconsistent
// (In/NotIn need values, Exists/DoesNotExist take none).
absl::Status ValidateSelector(const LabelSelector& selector, std::string_view field);

// True if `labels` satisfy every matchLabels entry and every matchExpressions requirement.
bool Matches(const LabelSelector& selector, const std::map<std::string, std::string>& labels);

// True if some toleration tolerates `taint` (Kubernetes core/v1 semantics).
bool Tolerates(const std::vector<placement::Toleration>& tolerations,
               const placement::Taint& taint);

// Empty if `flavor` can serve a workload with this node selector, required node affinity and
// these tolerations; otherwise why not ("node selector wants gpu=a100, flavor h100 has
// gpu=h100"). Kueue's rule (kubernetes-sigs/kueue pkg/scheduler/flavorassigner/flavorassigner.go,
// flavorSelector): only the label keys the flavor's nodeLabels define are looked at; an
// affinity term left with no matchExpressions by that (matchFields are never looked at) lets
// every flavor through, as its terms are ORed.
std::string FlavorMismatch(const ResourceFlavor& flavor,
                           const std::map<std::string, std::string>& node_selector,
                           const std::vector<placement::NodeSelectorTerm>& node_affinity,
                           const std::vector<placement::Toleration>& tolerations);

}  // namespace phalanx::admission
