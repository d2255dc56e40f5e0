#include "operator/admission/matching.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/node_affinity.h"

namespace phalanx::admission {

absl::Status ValidateSelector(const LabelSelector& selector, std::string_view field) {
  for (size_t i = 0; i < selector.match_expressions.size(); ++i) {
    const LabelSelectorRequirement& req = selector.match_expressions[i];
    std::string where = absl::StrCat(std::string(field), ".matchExpressions[", i, "]");
    if (req.key.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ".key: empty"));
    if (req.op == "In" || req.op == "NotIn") {
      if (req.values.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ".values: operator ", req.op, " needs at least one value"));
      }
    } else if (req.op == "Exists" || req.op == "DoesNotExist") {
      if (!req.values.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ".values: operator ", req.op, " takes no values"));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ".operator: \"", req.op, "\" is not In, NotIn, Exists or DoesNotExist"));
    }
  }
  return absl::OkStatus();
}

bool Matches(const LabelSelector& selector, const std::map<std::string, std::string>& labels) {
  for (const auto& [key, value] : selector.match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const LabelSelectorRequirement& req : selector.match_expressions) {
    auto it = labels.find(req.key);
    bool has = it != labels.end();
    bool in = has && std::find(req.values.begin(), req.values.end(), it->second) !=
                         req.values.end();
    if (req.op == "In" && !in) return false;
    if (req.op == "NotIn" && in) return false;
    if (req.op == "Exists" && !has) return false;
    if (req.op == "DoesNotExist" && has) return false;
  }
  return true;
}

namespace {

bool ToleratesOne(const placement::Toleration& t, const placement::Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.op == "Exists") return t.key.empty() || t.key == taint.key;
  return t.key == taint.key && t.value == taint.value;
}

// Whether a node carrying only `labels` would satisfy `terms` once every matchExpressions entry
// on another key, and every matchFields entry, is dropped (Kueue's flavorSelector).
bool AffinityAdmitsFlavor(const std::vector<placement::NodeSelectorTerm>& terms,
                          const std::map<std::string, std::string>& labels) {
  if (terms.empty()) return true;
  bool some_term_holds = false;
  for (const placement::NodeSelectorTerm& term : terms) {
    bool looked = false;
    bool holds = true;
    for (const placement::NodeSelectorRequirement& r : term.match_expressions) {
      auto it = labels.find(r.key);
      if (it == labels.end()) continue;
      looked = true;
      holds = holds && placement::MatchesRequirement(r, &it->second);
    }
    // A term left empty would admit everything: the whole affinity is then dropped.
    if (!looked) return true;
    some_term_holds = some_term_holds || holds;
  }
  return some_term_holds;
}

}  // namespace

bool Tolerates(const std::vector<placement::Toleration>& tolerations,
               const placement::Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const placement::Toleration& t) { return ToleratesOne(t, taint); });
}

std::string FlavorMismatch(const ResourceFlavor& flavor,
                           const std::map<std::string, std::string>& node_selector,
                           const std::vector<placement::NodeSelectorTerm>& node_affinity,
                           const std::vector<placement::Toleration>& tolerations) {
  for (const auto& [key, value] : flavor.node_labels) {
    auto it = node_selector.find(key);
    if (it != node_selector.end() && it->second != value) {
      return absl::StrCat("node selector wants ", key, "=", it->second, ", flavor ", flavor.name,
                          " has ", key, "=", value);
    }
  }
  if (!AffinityAdmitsFlavor(node_affinity, flavor.node_labels)) {
    return absl::StrCat("flavor ", flavor.name, "'s node labels (",
                        absl::StrJoin(flavor.node_labels, ", ", absl::PairFormatter("=")),
                        ") do not match the required node affinity");
  }
  for (const placement::Taint& taint : flavor.node_taints) {
    // PreferNoSchedule never keeps a pod off a node, so it never keeps a flavor from a workload.
    if (taint.effect == "PreferNoSchedule") continue;
    if (!Tolerates(tolerations, taint)) {
      return absl::StrCat("flavor ", flavor.name, " nodes are tainted ", taint.key,
                          taint.value.empty() ? "" : "=", taint.value, ":", taint.effect,
                          " and the workload does not tolerate it");
    }
  }
  return "";
}

}  // namespace phalanx::admission
