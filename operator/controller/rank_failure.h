// What a failed rank's pod says about its failure, and what spec.failurePolicy.rules make of the
// failed ranks of a gang. Pure: the job controller hands it the pods its informer holds.
//
//   std::vector<RankFailure> failures = ...;  // each with MatchFailureRules(rules, *pod)
//   const RankFailure* root = FirstToFail(failures);
//   if (const RankFailure* d = DecidingFailure(failures); d && d->rule->action == kActionFailJob)
//     ... "pod x (rank 2) failed: " + DescribeRuleMatch(*d->pod, *d->rule)
//
// The rules follow a Job's podFailurePolicy with onExitCodes: rules are tried in order, the first
// that matches decides; a rule matches when some container of the pod (containers first, then
// init containers; only the one named by containerName, if set) ended with a non-zero exit code
// that is In (or NotIn) its values. Unlike a Job's, a sidecar (an init container with
// restartPolicy Always) is looked at only by a rule that names it: the kubelet SIGKILLs it at
// the pod's end once the grace period is over, and Kubernetes' sidecar documentation says its
// non-zero exit codes then "should be generally ignored by the external tooling".
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

// When a Failed pod's failure ended: the earliest state.terminated.finishedAt (RFC 3339) of its
// containers that exited non-zero, sidecars aside (they are stopped after the others); "" when
// none says.
std::string_view FailureEnded(const kube::Pod& pod);

// A failed rank of the gang being judged.
struct RankFailure {
  int rank = 0;
  const kube::Pod* pod = nullptr;
  std::string node_cause;                // how its own node stopped it; "" if it did not
  std::optional<FailureRuleMatch> rule;  // the first rule its pod matches (none if node_cause)
};

// The failure that ended first (FailureEnded): the root cause of a cascade, as torchrun's error
// summary names it. The first of `failures` when no end is known. `failures` is not empty.
const RankFailure* FirstToFail(const std::vector<RankFailure>& failures);

// The failure whose rule decides what the gang's failure does: the failures that ended first
// (the same second) are judged, the later ones being their consequences (peers exit 1 on NCCL
// errors after one rank is OOM-killed); when no end is known, every failure is. Of those judged,
// one that matched a FailJob rule, else an Ignore rule, else a Count rule (the restart counts
// against maxRestarts, as with no rule, and the message names the rule). nullptr when none did.
const RankFailure* DecidingFailure(const std::vector<RankFailure>& failures);

// How a Failed pod failed, for a message: its first container that exited non-zero ("container
// trainer exited with code 137 (OOMKilled)", "init container setup exited with code 1"), or
// else the pod's own reason and message ("Evicted: The node was low on resource: memory"); ""
// when the pod says neither.
std::string DescribePodFailure(const kube::Pod& pod);

// DescribePodFailure and the rule `match` of `pod`, naming the exit that matched: "container
// trainer exited with code 42 (Error), which spec.failurePolicy.rules[0] (FailJob) matches", or
// when another container's exit matched, "container trainer exited with code 1 (Error); sidecar
// log-shipper exited with code 137, which spec.failurePolicy.rules[1] (Ignore) matches".
std::string DescribeRuleMatch(const kube::Pod& pod, const FailureRuleMatch& match);

// "container trainer exited with code 42" (with its reason in brackets if the kubelet gave one).
std::string DescribeExit(const kube::ContainerExit& exit);

}  // namespace phalanx::controller
