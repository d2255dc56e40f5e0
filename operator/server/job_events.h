// What phalanx-operator tells a user about a TrainingJob through core/v1 Events (`kubectl
// describe trainingjob`): the messages of the decisions that name where, why and by whom, and
// when a waiting job's event is due. Pure: the controllers record what these return.
// docs/operator.md "Events" lists every reason.
//
//   events.Record(JobReference(job.meta), kube::EventType::kNormal, kReasonAdmitted,
//                 AdmittedMessage({.cluster_queue = "team-llm", .flavor = "p5", .pods = 4,
//                                  .where = "topology.k8s.aws/network-node-layer-3=nn-3"}));
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "operator/server/job_status.h"

namespace phalanx::operator_server {

inline constexpr std::string_view kReasonAdmitted = "Admitted";
inline constexpr std::string_view kReasonGrown = "Grown";
// A node's labels changed under an admitted gang: it no longer matches its placement.
inline constexpr std::string_view kReasonTopologyChanged = "TopologyChanged";
// An elastic job quota would let grow, held at its size because another job waits.
inline constexpr std::string_view kReasonGrowthHeld = "GrowthHeld";
inline constexpr std::string_view kReasonResumed = "Resumed";
inline constexpr std::string_view kReasonFailedCreate = "FailedCreate";
inline constexpr std::string_view kReasonReleased = "Released";

struct Admitted {
  std::string cluster_queue;
  std::string flavor;
  int32_t pods = 0;
  std::string where;  // the tightest domain ("<level>=<value>"), or "" for the whole cluster
  bool borrowing = false;
  std::vector<std::string> preempted;  // "namespace/name" of the jobs it displaced
};
// "admitted to ClusterTrainingQueue team-llm in flavor p5 with 4 pods; placed in
// topology.k8s.aws/network-node-layer-3=nn-3 (borrowing cohort quota); preempted team-llm/low"
std::string AdmittedMessage(const Admitted& a);

// "grown from 2 to 4 pods in topology.k8s.aws/network-node-layer-3=nn-3 with capacity nobody
// was waiting for"
std::string GrownMessage(int32_t from, int32_t to, std::string_view where);

// The Admitted condition of an admitted gang that grew or shrank from `from` pods to `now.pods`:
// True as before, so it keeps the lastTransitionTime of its admission (MergeConditions), reason
// Admitted, and a message that describes the admission as it is now, not as it was first
// written: "admitted to ClusterTrainingQueue llm in flavor p5 with 12 pods; placed in
// topology.k8s.aws/network-node-layer-3=nn-3; grown from 10 pods". Queued=False (reason
// Admitted) and Admitted=True, both with that message: the Queued condition's was the first
// admission's, with the size before.
std::vector<Condition> ResizedAdmission(const Admitted& now, int32_t from);

// The condition updates of an admitted gang shrunk from `from` pods to `now.pods`, by a node
// failure or for a preemptor alike: Shrunk=True with `reason` and `message` (the job's news, as
// NodesReplaced or Evicted are), and the conditions ResizedAdmission gives.
std::vector<Condition> ShrunkUpdates(const Admitted& now, int32_t from, std::string_view reason,
                                     const std::string& message);

// The condition updates of an evicted gang (preempted, hit by node failures, pods not ready in
// time): Queued=True, Evicted=True and Admitted=False, each with `reason` and `message`.
std::vector<Condition> EvictedUpdates(std::string_view reason, const std::string& message);

// Admitted::where of a gang placed at `placement`: "<level>=<domain>", or "" for the whole
// cluster or no placement.
std::string PlacedIn(const std::optional<kube::TrainingJobPlacement>& placement);

// Whether a waiting job's decision is news: its Queued condition gets another status or reason.
// The message alone changing (quota left, seconds of locality wait left, the best domain's free
// GPUs) updates the condition but records no Event, so a job that waits for hours leaves one
// Event per reason, not one per admission cycle.
bool QueuedEventDue(const Condition* current_queued, std::string_view status,
                    std::string_view reason);

// "create pod team-llm/llama-0: pods "llama-0" is forbidden: User ... cannot create ..."
std::string FailedRequestMessage(std::string_view verb, std::string_view kind,
                                 std::string_view namespace_name, std::string_view name,
                                 const absl::Status& status);

}  // namespace phalanx::operator_server
