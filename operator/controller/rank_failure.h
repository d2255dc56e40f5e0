// What a failed rank's pod says about its failure, and what spec.failurePolicy.rules make of it.
// Pure: the job controller hands it the pods its informer holds.
//
//   // "container trainer exited with code 137 (OOMKilled)"
//   std::string why = DescribePodFailure(pod);
//   if (std::optional<FailureRuleMatch> m = MatchFailureRules(job.failure_rules, pod)) {
//     if (m->action == "FailJob") ...
//   }
//
// The rules follow a Job's podFailurePolicy with onExitCodes: rules are tried in order, the first
// that matches decides; a rule matches when some container of the pod (containers first, then
// init containers; only the one named by containerName, if set) ended with a non-zero exit code
// that is In (or NotIn) its values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/api/training_job.h"
#include "kube/objects.h"

namespace phalanx::controller {

inline constexpr std::string_view kActionFailJob = "FailJob";
inline constexpr std::string_view kActionIgnore = "Ignore";
inline constexpr std::string_view kActionCount = "Count";

struct FailureRuleMatch {
  size_t index = 0;                           // in spec.failurePolicy.rules
  std::string_view action;                    // the rule's action
  const kube::ContainerExit* exit = nullptr;  // the container whose exit code matched
};

// The first rule of `rules` that `pod` (a Failed pod) matches, if any. The match points into
// `rules` and `pod`.
std::optional<FailureRuleMatch> MatchFailureRules(
    const std::vector<kube::TrainingJobFailureRule>& rules, const kube::Pod& pod);

// How a Failed pod failed, for a message: its first container that exited non-zero ("container
// trainer exited with code 137 (OOMKilled)", "init container setup exited with code 1"), or
// else the pod's own reason and message ("Evicted: The node was low on resource: memory"); ""
// when the pod says neither.
std::string DescribePodFailure(const kube::Pod& pod);

// "container trainer exited with code 42" (with its reason in brackets if the kubelet gave one).
std::string DescribeExit(const kube::ContainerExit& exit);

}  // namespace phalanx::controller
