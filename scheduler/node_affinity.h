// Required node affinity
// (spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) with the semantics of kube-scheduler's NodeAffinity filter
// (k8s.io/component-helpers/scheduling/corev1/nodeaffinity): terms are ORed, a term's entries
// ANDed, a term with no entries matches no node; matchExpressions look at node labels,
// matchFields at the node's name only.
//
//   std::vector<NodeSelectorTerm> terms = {{.match_expressions = {
//       {.key = "topology.k8s.aws/network-node-layer-3", .op = "NotIn", .values = {"nn-1"}}}}};
//   RETURN_IF_ERROR(ValidateNodeAffinity(terms, "spec.affinity"));
//   MatchesNodeAffinity(terms, node.labels, node.name);  // false on nodes of nn-1
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/placement_types.h"

namespace phalanx::placement {

// The only field a matchFields entry may name.
inline constexpr std::string_view kNodeNameField = "metadata.name";

// OK, or InvalidArgument naming the first bad entry below `field` as the API server would
// ("<field>[0].matchExpressions[1].values: for Gt and Lt, exactly one integer value"): an
// unknown operator, In/NotIn without values, Exists/DoesNotExist with values, Gt/Lt without
// exactly one integer value, an empty key, a matchFields entry other than metadata.name In/NotIn
// with one value. The matchers below assume valid terms.
absl::Status ValidateNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                                  std::string_view field);

// Whether a node whose label `requirement.key` has `value` (null: the node lacks the label)
// satisfies this matchExpressions entry. NotIn and DoesNotExist hold on a missing label; Gt and
// Lt need a label that parses as an integer.
bool MatchesRequirement(const NodeSelectorRequirement& requirement, const std::string* value);

// Whether a node with these labels and name satisfies the terms. An empty list (no affinity)
// matches every node.
bool MatchesNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                         const std::map<std::string, std::string>& labels,
                         std::string_view node_name);

// Appends an unambiguous encoding of `terms` to `key`, for caches keyed by what a gang asks.
void AppendAffinityKey(const std::vector<NodeSelectorTerm>& terms, std::string* key);

}  // namespace phalanx::placement
