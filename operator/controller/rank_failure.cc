#include "operator/controller/rank_failure.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace phalanx::controller {

std::optional<FailureRuleMatch> MatchFailureRules(
    const std::vector<kube::TrainingJobFailureRule>& rules, const kube::Pod& pod) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const kube::TrainingJobFailureRule& rule = rules[i];
    for (const kube::ContainerExit& exit : pod.exits) {
      // containerName narrows to one container; without it, every container but the sidecars.
      const bool looked_at = rule.container_name.empty() ? !exit.sidecar
                                                         : exit.name.str() == rule.container_name;
      if (!looked_at) continue;
      const bool listed =
          std::find(rule.values.begin(), rule.values.end(), exit.exit_code) != rule.values.end();
      if (listed != rule.not_in) return FailureRuleMatch{i, rule.action, &exit};
    }
  }
  return std::nullopt;
}

std::string_view FailureEnded(const kube::Pod& pod) {
  std::string_view first;
  for (const kube::ContainerExit& e : pod.exits) {
    // RFC 3339 times in the API server's one format: their text sorts as they do.
    if (e.sidecar || e.finished_at.empty()) continue;
    if (first.empty() || e.finished_at < first) first = e.finished_at;
  }
  return first;
}

const RankFailure* FirstToFail(const std::vector<RankFailure>& failures) {
  const RankFailure* first = &failures.front();
  for (const RankFailure& f : failures) {
    const std::string_view when = FailureEnded(*f.pod), best = FailureEnded(*first->pod);
    if (!when.empty() && (best.empty() || when < best)) first = &f;
  }
  return first;
}

const RankFailure* DecidingFailure(const std::vector<RankFailure>& failures) {
  if (failures.empty()) return nullptr;
  const std::string_view first = FailureEnded(*FirstToFail(failures)->pod);
  auto find = [&](std::string_view action) -> const RankFailure* {
    for (const RankFailure& f : failures) {
      if (!first.empty() && FailureEnded(*f.pod) != first) continue;
      if (f.rule && f.rule->action == action) return &f;
    }
    return nullptr;
  };
  for (std::string_view action : {kActionFailJob, kActionIgnore, kActionCount}) {
    if (const RankFailure* decides = find(action)) return decides;
  }
  return nullptr;
}

std::string DescribeExit(const kube::ContainerExit& exit) {
  std::string text = absl::StrCat(exit.sidecar ? "sidecar " : exit.init ? "init container "
                                                                        : "container ",
                                  exit.name.str(), " exited with code ", exit.exit_code);
  if (!exit.reason.empty()) absl::StrAppend(&text, " (", exit.reason.str(), ")");
  return text;
}

std::string DescribePodFailure(const kube::Pod& pod) {
  if (!pod.exits.empty()) return DescribeExit(pod.exits.front());
  if (pod.status_reason.empty()) return pod.status_message;
  if (pod.status_message.empty()) return pod.status_reason.str();
  return absl::StrCat(pod.status_reason.str(), ": ", pod.status_message);
}

std::string DescribeRuleMatch(const kube::Pod& pod, const FailureRuleMatch& match) {
  std::string text = DescribePodFailure(pod);
  if (match.exit != nullptr && match.exit != &pod.exits.front()) {
    absl::StrAppend(&text, "; ", DescribeExit(*match.exit));
  }
  absl::StrAppend(&text, ", which spec.failurePolicy.rules[", match.index, "] (",
                  std::string(match.action), ") matches");
  return text;
}

}  // namespace phalanx::controller
