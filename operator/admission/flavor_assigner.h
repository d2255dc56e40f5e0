// Flavor assignment: for each resource group a workload uses, the first flavor (in the
// ClusterQueue's preference order) that matches the workload's node selector and tolerations
// and has quota for the whole gang. Assignments whose placement already failed this cycle can
// be excluded, so the next pass falls back to the next flavor.
//
//   ASSIGN_OR_RETURN(Shape shape, MakeShape(model, cq, workload));   // once per workload
//   AssignOutcome outcome = Assign(model, quota, shape, /*count=*/8, /*excluded=*/{});
//   if (outcome.assignment) quota.Add(cq, outcome.assignment->demand, +1);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "operator/admission/model.h"
#include "operator/admission/quota.h"

namespace phalanx::admission {

// What a workload needs from one ClusterQueue, independent of count and flavor choice.
struct Shape {
  int cq = -1;
  std::vector<int> groups;  // resource groups used, ascending
  // Per used group: (resource position in the group, per-pod amount).
  std::vector<std::vector<std::pair<int, int64_t>>> amounts;
  // Per used group: positions of the flavors that match the workload, in preference order.
  std::vector<std::vector<int>> compatible;
};

// One flavor position per used group (parallel to Shape::groups).
using FlavorChoice = std::vector<int>;

struct Assignment {
  FlavorChoice choice;
  Demand demand;                               // for the assigned count
  std::map<std::string, std::string> flavors;  // resource -> flavor name
};

struct AssignOutcome {
  std::optional<Assignment> assignment;
  // When there is none: true if some choice had quota but was excluded (placement failed).
  bool only_excluded_fit = false;
  std::string quota_message;  // why no flavor has quota, when none does
};

// The shape of `workload` in ClusterQueue `cq`, or why it can never be admitted there
// (a resource the queue does not cover; no flavor matches the selector, the required node
// affinity or the tolerations).
// `per_pod` already includes the synthesized "pods" entry when the queue covers it.
struct ShapeError {
  PendingReason reason;
  std::string message;
};
std::variant<Shape, ShapeError> MakeShape(const Model& model, int cq, const ResourceList& per_pod,
                                          const std::map<std::string, std::string>& node_selector,
                                          const std::vector<placement::NodeSelectorTerm>& affinity,
                                          const std::vector<placement::Toleration>& tolerations);

// The demand of `choice` for `count` pods.
Demand DemandFor(const Model& model, const Shape& shape, const FlavorChoice& choice,
                 int64_t count);

// `choice` for `count` pods, with its demand and the resource -> flavor map.
Assignment MakeAssignment(const Model& model, const Shape& shape, FlavorChoice choice,
                          int64_t count);

// Every choice of matching flavors whose node labels agree, in preference order, quota or not.
std::vector<FlavorChoice> AllChoices(const Model& model, const Shape& shape);

// The first choice in preference order, not in `excluded`, whose demand for `count` pods
// fits the queue's available quota. `explain` fills AssignOutcome::quota_message when there is
// none (formatting it costs more than the search, so passes leave it to the end of the cycle).
AssignOutcome Assign(const Model& model, const QuotaTree& quota, const Shape& shape,
                     int64_t count, const std::set<FlavorChoice>& excluded, bool explain = false);

// The largest count min + k*step <= max for which Assign succeeds, or nullopt.
std::optional<int32_t> LargestFittingCount(const Model& model, const QuotaTree& quota,
                                           const Shape& shape, const placement::ElasticRange& range,
                                           const std::set<FlavorChoice>& excluded);

}  // namespace phalanx::admission
