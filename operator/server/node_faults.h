// Node faults under admitted gangs (issue #11, docs/operator.md "Faults"): which nodes of a
// TrainingJob's status.placement failed, and what to do about it, in three steps:
//   1. replace: ReplaceNodes moves the ranks on the failed nodes to healthy free nodes inside
//      the gang's domain (Kueue replaces one node and evicts on a second; this replaces any
//      number);
//   2. shrink: an elastic job with no replacement drops to the largest count it allows without
//      the lost ranks (Resize from the top; a lost low rank takes a freed node of a dropped
//      high rank, so ranks stay dense 0..n-1);
//   3. evict: Release, and the job goes back to its queue to be admitted elsewhere.
// The admission controller calls Respond for each admitted job in its cycle (it owns
// status.admission and status.placement) and writes what comes back; the job controller then
// moves the pods (it deletes a pod pinned to another node than status.placement names).
//
//   NodeFaultResponder faults(node_lookup, flavor_tolerations, placement, {});
//   faults.BeginCycle(now);
//   if (std::optional<FaultDecision> d = faults.Respond(job, now)) Write(*d);
//   if (std::optional<absl::Time> at = faults.next_check()) WakeAt(*at);
//
// A node has failed for a gang when it is NotReady for longer than a grace period, has a
// NoSchedule / NoExecute taint the gang does not tolerate (except the node lifecycle's own
// not-ready / unreachable and pressure taints), carries sagemaker.amazonaws.com/node-health-status
// other than Schedulable, or is gone. A cordon (spec.unschedulable) is the exception: it keeps
// new pods off the node, as kube-scheduler reads it, and moves no running rank; it fails a
// rank that needs a new pod there (drained, lost, or a new gang generation) — the rank goes to
// a spare instead of waiting on a node that takes no pod. So does a node whose allocatable fell
// below its ranks' requests (kCapacityLost). Not thread-safe: one admission cycle
// at a time uses it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "kube/api/training_job.h"
#include "kube/objects.h"
#include "scheduler/placement_service.h"
#include "scheduler/placement_types.h"

namespace phalanx::operator_server {

// Conditions of the admission controller for the first two steps (the third is Evicted).
inline constexpr std::string_view kConditionNodesReplaced = "NodesReplaced";
inline constexpr std::string_view kConditionShrunk = "Shrunk";
// The reason of an eviction after node failures (conditions, event, evicted-workloads metric).
inline constexpr std::string_view kReasonNodeFailure = "NodeFailure";

enum class NodeFaultKind { kNotReady, kTainted, kUnhealthy, kDeleted, kCordoned, kCapacityLost };

// "NodeNotReady", "NodeTainted", "NodeUnhealthy", "NodeDeleted", "NodeCordoned",
// "NodeCapacityLost": condition reasons and the `reason` label of the metrics.
std::string_view FaultReason(NodeFaultKind kind);

struct NodeFault {
  std::string node;
  NodeFaultKind kind = NodeFaultKind::kNotReady;
  std::string detail;  // "ip-a is NotReady", "ip-a has taint k=v:NoExecute", ...
};

// The fault of node `name` for a gang with `tolerations`, or nullopt if the gang may stay on
// it; `node` null means it was deleted. NotReady is reported at once (the grace is the
// responder's), and so is a cordon (kCordoned: the responder spares the ranks running there).
std::optional<NodeFault> DetectNodeFault(std::string_view name, const kube::Node* node,
                                         const std::vector<placement::Toleration>& tolerations);

// kCapacityLost when node `name` can no longer hold the `ranks` ranks placed on it even with
// nothing else there: its allocatable fell below their requests (`per_pod` each), as when a GPU
// falls off the bus and the device plugin re-registers with fewer devices. Like a cordon it
// stops no running pod; a rank there that needs a new pod could never bind.
std::optional<NodeFault> DetectCapacityLoss(std::string_view name, const kube::Node& node,
                                            const phalanx::ResourceList& per_pod, int ranks);

// The tolerations a gang's pods carry, as DetectGangNodeFault takes them: the template's
// (`job.pod.tolerations`), then the admitted flavor's (`flavor`).
std::vector<placement::Toleration> GangPodTolerations(const kube::TrainingJob& job,
                                                      const std::vector<kube::Toleration>& flavor);

// The fault of node `name` (`node` null: deleted) for a rank of admitted `job` that needs a new
// pod there, as Respond judges it: DetectNodeFault for the gang's `tolerations` (the template's
// and the admitted flavor's), else DetectCapacityLoss for the ranks status.placement puts on
// it. Such a rank is moved by the admission controller (NotReady: once its grace has passed),
// so the job controller creates no pod for it there. nullopt: the node takes the rank's pod.
std::optional<NodeFault> DetectGangNodeFault(const kube::TrainingJob& job, std::string_view name,
                                             const kube::Node* node,
                                             const std::vector<placement::Toleration>& tolerations);

// A pod's integer label (phalanx.dev/rank, phalanx.dev/restart), or -1 if absent or not a
// number.
int PodIntLabel(const kube::Pod& pod, std::string_view key);
// The node a pod runs on, or before it is bound the node it was created for; "" if neither.
std::string_view PinnedNode(const kube::Pod& pod);
// The rank of `pod` in gang generation `restarts` (status.restarts) of the TrainingJob with uid
// `job_uid`, its controller; -1 for a pod of another job or another generation.
int GangRank(const kube::Pod& pod, std::string_view job_uid, int32_t restarts);
// The ranks of `job`'s current gang (its restart generation, status.restarts) whose pod runs
// on the node status.placement names for the rank and needs no new pod: bound there, not being
// deleted, not Failed. `pods` are the job's pods, of any generation.
std::set<int32_t> RanksInPlace(const kube::TrainingJob& job,
                               const std::vector<std::shared_ptr<const kube::Pod>>& pods);

// The largest count an elastic gang of `current` pods can shrink to without `lost` of them:
// at most current - lost, of the form min + k * step, a multiple of group_size (when > 0);
// nullopt if that is below elastic.minReplicas.
std::optional<int32_t> ShrinkTarget(int32_t current, int32_t lost,
                                    const kube::TrainingJobElastic& elastic, int32_t group_size);

struct NodeFaultOptions {
  // How long a node must stay NotReady before its ranks move: a kubelet restart or a short
  // network blip should not cost a gang its nodes (Kueue waits 30 s too).
  absl::Duration not_ready_grace = absl::Seconds(30);
  // When to try again after the Placement service could not be reached.
  absl::Duration retry = absl::Seconds(5);
};

// Where the labels of an admitted gang's nodes no longer match its placement (node labels
// changed under it; placement is decided from the labels at admission, as Kueue's): a rank's
// node now outside `status.placement`'s domain at its level, or a `groupSize` group whose nodes
// now carry different `groupLevel` values (GFD relabels a node's nvidia.com/gpu.clique when its
// NVLink partition changes). Names the first such rank ("rank 0's node n now has
// nvidia.com/gpu.clique=c9: group 0 (ranks 0-3) spans 2 nvidia.com/gpu.clique domains") and
// counts the others; "" when everything matches. Nodes `nodes` does not know are skipped (a
// deleted node is a fault, not a label change).
std::string TopologyDrift(
    const kube::TrainingJob& job,
    const std::function<std::shared_ptr<const kube::Node>(const std::string&)>& nodes);

enum class FaultAction { kReplaced, kShrunk, kEvicted };
std::string_view ActionName(FaultAction action);  // "replaced", "shrunk", "evicted"

// What the admission controller writes for a job hit by node faults. The placement calls were
// made already: the scheduler holds `placement` (or, evicted, nothing).
struct FaultDecision {
  FaultAction action = FaultAction::kReplaced;
  std::string reason;   // FaultReason of the first failed node; kReasonNodeFailure when evicted
  std::string message;  // for the condition and the event
  std::optional<kube::TrainingJobAdmission> admission;  // after; nullopt when evicted
  std::optional<kube::TrainingJobPlacement> placement;  // after; nullopt when evicted
  std::map<std::string, int> nodes_replaced;            // FaultReason -> failed nodes replaced
};

class NodeFaultResponder {
 public:
  // The node informer's view of a node (null: no such node).
  using NodeLookup = std::function<std::shared_ptr<const kube::Node>(const std::string& name)>;
  // The tolerations a ResourceFlavor adds to its pods (empty for an unknown flavor).
  using FlavorTolerations =
      std::function<std::vector<placement::Toleration>(const std::string& flavor)>;
  // The pod informer's pods of a job ("namespace/name"), of any generation.
  using JobPods =
      std::function<std::vector<std::shared_ptr<const kube::Pod>>(const std::string& job)>;

  NodeFaultResponder(NodeLookup nodes, FlavorTolerations flavors, JobPods pods,
                     placement::PlacementService& placement, NodeFaultOptions options = {});

  // Forgets NotReady nodes that recovered or went, and the wake-up of the last cycle.
  void BeginCycle();

  // For an admitted job with a placement: nothing (nullopt) if none of its nodes failed, a
  // NotReady node is still within its grace, a cordoned node's ranks all still run there
  // (RanksInPlace), or the Placement service could not be reached
  // (next_check() then says when to look again); otherwise the step taken, already carried
  // out on the scheduler. Calling it again for a job whose status still shows the old
  // placement is harmless: ReplaceNodes finds no rank left on the failed nodes and answers the
  // reservation as it is now.
  std::optional<FaultDecision> Respond(const kube::TrainingJob& job, absl::Time now);

  // Kueue's waitForPodsReady meets elasticity: an admitted elastic gang whose pods-ready
  // timeout ran out with only `running` of its ranks running shrinks to the largest count its
  // range allows without the others, as step 2 does for lost nodes (ranks stay dense: a rank
  // not running below the new count takes a node a dropped rank freed, unless a running rank
  // shares its node). `what` says why, for the message. nullopt when it cannot (not elastic,
  // below minReplicas, nowhere to go, phalanx-scheduler unreachable), with the reason appended
  // to `why`; the caller then evicts. Reason kReasonPodsReadyTimeout.
  std::optional<FaultDecision> ShrinkToRunning(const kube::TrainingJob& job,
                                               const std::set<int32_t>& running,
                                               const std::string& what, std::string& why);

  // The earliest time a cycle must look again since BeginCycle, or nullopt.
  std::optional<absl::Time> next_check() const { return next_check_; }
  // What to tell jobs since BeginCycle, once per job and NotReady episode of a node: the node
  // under it is NotReady and its ranks move when the grace ends unless it recovers.
  struct Notice {
    std::string job;  // "namespace/name"
    std::string message;
  };
  const std::vector<Notice>& notices() const { return notices_; }
  // Placement calls made since BeginCycle, by method.
  const std::map<std::string, int>& calls() const { return calls_; }

 private:
  std::vector<placement::Toleration> GangTolerations(const kube::TrainingJob& job) const;
  void WakeAt(absl::Time t);
  // A Placement call that failed, by name.
  struct CallError {
    std::string call;
    absl::Status status;
  };
  // Step 2: shrinks elastic `job` to the largest count its range allows without `lost` ranks;
  // a rank below the new count on one of `failed` (nodes no rank may keep) then takes a node
  // the dropped ranks freed. The new placement, or nullopt with why not appended to `why`, or
  // with `error` set when a Placement call failed.
  std::optional<placement::Placement> Shrink(const kube::TrainingJob& job,
                                             const std::vector<std::string>& failed,
                                             int32_t lost, std::string& why,
                                             std::optional<CallError>& error);
  // Steps 1-3 for the failed nodes; nullopt when the scheduler could not be reached.
  std::optional<FaultDecision> Act(const kube::TrainingJob& job,
                                   const std::vector<NodeFault>& faults, absl::Time now);

  NodeLookup nodes_;
  FlavorTolerations flavors_;
  JobPods pods_;
  placement::PlacementService& placement_;
  const NodeFaultOptions options_;
  std::map<std::string, absl::Time> not_ready_since_;  // as first seen by the operator
  std::set<std::pair<std::string, std::string>> told_;  // (node, job) told of its NotReady
  std::vector<Notice> notices_;
  std::optional<absl::Time> next_check_;
  std::map<std::string, int> calls_;
};

}  // namespace phalanx::operator_server
