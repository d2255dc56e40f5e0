#include "operator/admission/flavor_assigner.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/counted_noun.h"
#include "operator/admission/matching.h"

namespace phalanx::admission {

std::variant<Shape, ShapeError> MakeShape(const Model& model, int cq, const ResourceList& per_pod,
                                          const std::map<std::string, std::string>& node_selector,
                                          const std::vector<placement::NodeSelectorTerm>& affinity,
                                          const std::vector<placement::Toleration>& tolerations) {
  const CompiledClusterQueue& queue = model.cqs[cq];
  const std::string& name = queue.spec->name;
  Shape shape;
  shape.cq = cq;
  std::map<int, std::vector<std::pair<int, int64_t>>> by_group;
  for (const auto& [resource, amount] : per_pod) {
    if (amount <= 0) continue;
    auto it = queue.resource_index.find(resource);
    if (it == queue.resource_index.end()) {
      std::vector<std::string> covered;
      for (const auto& [r, unused] : queue.resource_index) covered.push_back(r);
      return ShapeError{PendingReason::kNoFlavor,
                        absl::StrCat("ClusterTrainingQueue ", name, " has no quota for ", resource,
                                     " (it covers ",
                                     covered.empty() ? "nothing" : absl::StrJoin(covered, ", "),
                                     ")")};
    }
    by_group[it->second.first].emplace_back(it->second.second, amount);
  }
  for (auto& [group, amounts] : by_group) {
    const CompiledGroup& compiled = queue.groups[group];
    std::vector<int> compatible;
    std::vector<std::string> mismatches;
    for (size_t p = 0; p < compiled.flavors.size(); ++p) {
      std::string why = FlavorMismatch(*model.flavors[compiled.flavors[p]], node_selector,
                                       affinity, tolerations);
      if (why.empty()) {
        compatible.push_back(static_cast<int>(p));
      } else {
        mismatches.push_back(std::move(why));
      }
    }
    if (compatible.empty()) {
      return ShapeError{
          PendingReason::kNoFlavor,
          absl::StrCat("no flavor of ClusterTrainingQueue ", name, " for ",
                       absl::StrJoin(compiled.resources, ", "), " fits the workload: ",
                       mismatches.empty() ? "the group lists no flavors"
                                          : absl::StrJoin(mismatches, "; "))};
    }
    shape.groups.push_back(group);
    shape.amounts.push_back(std::move(amounts));
    shape.compatible.push_back(std::move(compatible));
  }
  return shape;
}

namespace {

Demand GroupDemand(const Model& model, const Shape& shape, size_t used_group, int position,
                   int64_t count) {
  const CompiledGroup& group = model.cqs[shape.cq].groups[shape.groups[used_group]];
  Demand demand;
  for (const auto& [resource_pos, amount] : shape.amounts[used_group]) {
    demand.emplace_back(group.fr[position][resource_pos], amount * count);
  }
  return demand;
}

// True if the flavors chosen for different groups disagree on a node label: no node can then
// satisfy the gang's combined node selector.
bool LabelsConflict(const Model& model, const Shape& shape, const FlavorChoice& choice) {
  std::map<std::string_view, std::string_view> merged;
  for (size_t g = 0; g < choice.size(); ++g) {
    const CompiledGroup& group = model.cqs[shape.cq].groups[shape.groups[g]];
    for (const auto& [key, value] : model.flavors[group.flavors[choice[g]]]->node_labels) {
      auto [it, inserted] = merged.emplace(key, value);
      if (!inserted && it->second != value) return true;
    }
  }
  return false;
}

}  // namespace

Demand DemandFor(const Model& model, const Shape& shape, const FlavorChoice& choice,
                 int64_t count) {
  Demand demand;
  for (size_t g = 0; g < choice.size(); ++g) {
    Demand part = GroupDemand(model, shape, g, choice[g], count);
    demand.insert(demand.end(), part.begin(), part.end());
  }
  return demand;
}

Assignment MakeAssignment(const Model& model, const Shape& shape, FlavorChoice choice,
                          int64_t count) {
  Assignment assignment;
  assignment.demand = DemandFor(model, shape, choice, count);
  const CompiledClusterQueue& queue = model.cqs[shape.cq];
  for (size_t g = 0; g < choice.size(); ++g) {
    const CompiledGroup& group = queue.groups[shape.groups[g]];
    for (const auto& [resource_pos, unused] : shape.amounts[g]) {
      assignment.flavors[group.resources[resource_pos]] =
          model.flavors[group.flavors[choice[g]]]->name;
    }
  }
  assignment.choice = std::move(choice);
  return assignment;
}

namespace {

// Calls `visit` with each choice from `options` (one list per used group) in preference order,
// first group most significant, until it returns true.
template <typename Visit>
void ForEachChoice(const std::vector<std::vector<int>>& options, Visit visit) {
  for (const std::vector<int>& list : options) {
    if (list.empty()) return;
  }
  std::vector<size_t> index(options.size(), 0);
  while (true) {
    FlavorChoice choice(options.size());
    for (size_t g = 0; g < choice.size(); ++g) choice[g] = options[g][index[g]];
    if (visit(std::move(choice))) return;
    size_t g = index.size();
    while (g > 0 && ++index[g - 1] == options[g - 1].size()) index[--g] = 0;
    if (g == 0) return;
  }
}

}  // namespace

std::vector<FlavorChoice> AllChoices(const Model& model, const Shape& shape) {
  std::vector<FlavorChoice> choices;
  ForEachChoice(shape.compatible, [&](FlavorChoice choice) {
    if (!LabelsConflict(model, shape, choice)) choices.push_back(std::move(choice));
    return false;
  });
  return choices;
}

AssignOutcome Assign(const Model& model, const QuotaTree& quota, const Shape& shape,
                     int64_t count, const std::set<FlavorChoice>& excluded, bool explain) {
  AssignOutcome outcome;
  // Groups never share a (flavor, resource), so each group's fitting flavors are independent.
  std::vector<std::vector<int>> fitting(shape.groups.size());
  for (size_t g = 0; g < shape.groups.size(); ++g) {
    for (int position : shape.compatible[g]) {
      if (quota.Fits(shape.cq, GroupDemand(model, shape, g, position, count))) {
        fitting[g].push_back(position);
      }
    }
    if (fitting[g].empty()) {
      if (!explain) return outcome;
      std::vector<std::string> reasons;
      for (int position : shape.compatible[g]) {
        for (const auto& [fr, amount] : GroupDemand(model, shape, g, position, count)) {
          if (amount > quota.Available(shape.cq, fr)) {
            reasons.push_back(quota.Describe(shape.cq, fr, amount));
            break;
          }
        }
      }
      outcome.quota_message = absl::StrCat("ClusterTrainingQueue ", model.cqs[shape.cq].spec->name,
                                           " lacks quota for ", CountedNoun(count, "pod"), ": ",
                                           absl::StrJoin(reasons, "; "));
      return outcome;
    }
  }
  ForEachChoice(fitting, [&](FlavorChoice choice) {
    if (excluded.contains(choice)) {
      outcome.only_excluded_fit = true;
      return false;
    }
    if (LabelsConflict(model, shape, choice)) return false;
    outcome.assignment = MakeAssignment(model, shape, std::move(choice), count);
    return true;
  });
  if (explain && !outcome.assignment && !outcome.only_excluded_fit) {
    outcome.quota_message = absl::StrCat("the flavors with quota in ClusterTrainingQueue ",
                                         model.cqs[shape.cq].spec->name,
                                         " disagree on node labels");
  }
  return outcome;
}

std::optional<int32_t> LargestFittingCount(const Model& model, const QuotaTree& quota,
                                           const Shape& shape, const placement::ElasticRange& range,
                                           const std::set<FlavorChoice>& excluded) {
  auto fits = [&](int32_t k) {
    return Assign(model, quota, shape, range.min + int64_t{k} * range.step, excluded)
        .assignment.has_value();
  };
  if (!fits(0)) return std::nullopt;
  int32_t lo = 0;  // fits
  int32_t hi = (range.max - range.min) / range.step;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return range.min + lo * range.step;
}

}  // namespace phalanx::admission
