#include "operator/controller/rank_failure.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace phalanx::controller {

std::optional<FailureRuleMatch> MatchFailureRules(
    const std::vector<kube::TrainingJobFailureRule>& rules, const kube::Pod& pod) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const kube::TrainingJobFailureRule& rule = rules[i];
    for (const kube::ContainerExit& exit : pod.exits) {
      if (!rule.container_name.empty() && exit.name.str() != rule.container_name) continue;
      const bool listed =
          std::find(rule.values.begin(), rule.values.end(), exit.exit_code) != rule.values.end();
      if (listed != rule.not_in) return FailureRuleMatch{i, rule.action, &exit};
    }
  }
  return std::nullopt;
}

std::string DescribeExit(const kube::ContainerExit& exit) {
  std::string text = absl::StrCat(exit.init ? "init container " : "container ", exit.name.str(),
                                  " exited with code ", exit.exit_code);
  if (!exit.reason.empty()) absl::StrAppend(&text, " (", exit.reason.str(), ")");
  return text;
}

std::string DescribePodFailure(const kube::Pod& pod) {
  if (!pod.exits.empty()) return DescribeExit(pod.exits.front());
  if (pod.status_reason.empty()) return pod.status_message;
  if (pod.status_message.empty()) return pod.status_reason.str();
  return absl::StrCat(pod.status_reason.str(), ": ", pod.status_message);
}

}  // namespace phalanx::controller
