#include "operator/server/node_faults.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "operator/server/job_status.h"
#include "scheduler/cluster_snapshot.h"
#include "scheduler/gang_search.h"
#include "spdlog/spdlog.h"

namespace phalanx::operator_server {
namespace {

// Taints the node lifecycle controller sets from node conditions. not-ready and unreachable
// mirror the Ready condition, which has its own grace period; the pressure taints are
// transient and the kubelet evicts by itself if it must. Every other untolerated NoSchedule /
// NoExecute taint is a fault, the cordon's node.kubernetes.io/unschedulable included: someone
// decided the node goes.
bool LifecycleConditionTaint(std::string_view key) {
  for (std::string_view k :
       {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
        "node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/pid-pressure", "node.kubernetes.io/network-unavailable"}) {
    if (key == k) return true;
  }
  return false;
}

std::string RankMoves(const std::vector<std::string>& before,
                      const std::vector<std::string>& after) {
  std::vector<std::string> moves;
  for (size_t r = 0; r < std::min(before.size(), after.size()); ++r) {
    if (before[r] != after[r]) {
      moves.push_back(absl::StrCat("rank ", r, " ", before[r], " -> ", after[r]));
    }
  }
  return absl::StrJoin(moves, ", ");
}

std::string Where(const placement::Placement& p) {
  return p.domain.path.empty() ? "the cluster" : p.domain.ToString();
}

}  // namespace

std::string_view FaultReason(NodeFaultKind kind) {
  switch (kind) {
    case NodeFaultKind::kNotReady:
      return "NodeNotReady";
    case NodeFaultKind::kTainted:
      return "NodeTainted";
    case NodeFaultKind::kUnhealthy:
      return "NodeUnhealthy";
    case NodeFaultKind::kDeleted:
      return "NodeDeleted";
  }
  return "NodeFailure";
}

std::string_view ActionName(FaultAction action) {
  switch (action) {
    case FaultAction::kReplaced:
      return "replaced";
    case FaultAction::kShrunk:
      return "shrunk";
    case FaultAction::kEvicted:
      return "evicted";
  }
  return "";
}

std::optional<NodeFault> DetectNodeFault(std::string_view name, const kube::Node* node,
                                         const std::vector<placement::Toleration>& tolerations) {
  NodeFault fault{.node = std::string(name)};
  if (node == nullptr) {
    fault.kind = NodeFaultKind::kDeleted;
    fault.detail = absl::StrCat(fault.node, " was deleted");
    return fault;
  }
  if (!node->ready) {
    fault.kind = NodeFaultKind::kNotReady;
    fault.detail = absl::StrCat(fault.node, " is NotReady");
    return fault;
  }
  const std::string* health = node->meta.labels.Find(placement::kNodeHealthLabel);
  if (health != nullptr && *health != placement::kNodeHealthSchedulable) {
    fault.kind = NodeFaultKind::kUnhealthy;
    const std::string_view label = placement::kNodeHealthLabel;
    fault.detail = absl::StrCat(fault.node, " has ", absl::string_view(label.data(), label.size()),
                                "=", *health);
    return fault;
  }
  for (const kube::Taint& t : node->taints) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    if (LifecycleConditionTaint(t.key.view())) continue;
    if (placement::Tolerates(tolerations, {t.key.str(), t.value.str(), t.effect.str()})) continue;
    fault.kind = NodeFaultKind::kTainted;
    fault.detail =
        t.key.view() == "node.kubernetes.io/unschedulable"
            ? absl::StrCat(fault.node, " is cordoned (spec.unschedulable: kubectl cordon or "
                           "drain)")
            : absl::StrCat(fault.node, " has taint ", t.key.str(), t.value.empty() ? "" : "=",
                           t.value.str(), ":", t.effect.str(), " that the pods do not tolerate");
    return fault;
  }
  return std::nullopt;
}

std::optional<int32_t> ShrinkTarget(int32_t current, int32_t lost,
                                    const kube::TrainingJobElastic& elastic, int32_t group_size) {
  const int32_t step = std::max<int32_t>(1, elastic.step);
  for (int32_t count = current - lost; count >= std::max<int32_t>(1, elastic.min_replicas);
       --count) {
    if ((count - elastic.min_replicas) % step != 0) continue;
    if (group_size > 0 && count % group_size != 0) continue;
    return count;
  }
  return std::nullopt;
}

NodeFaultResponder::NodeFaultResponder(NodeLookup nodes, FlavorTolerations flavors,
                                       placement::PlacementService& placement,
                                       NodeFaultOptions options)
    : nodes_(std::move(nodes)),
      flavors_(std::move(flavors)),
      placement_(placement),
      options_(options) {}

void NodeFaultResponder::BeginCycle() {
  next_check_.reset();
  calls_.clear();
  for (auto it = not_ready_since_.begin(); it != not_ready_since_.end();) {
    std::shared_ptr<const kube::Node> node = nodes_(it->first);
    it = node == nullptr || node->ready ? not_ready_since_.erase(it) : std::next(it);
  }
}

void NodeFaultResponder::WakeAt(absl::Time t) {
  if (!next_check_ || t < *next_check_) next_check_ = t;
}

std::vector<placement::Toleration> NodeFaultResponder::GangTolerations(
    const kube::TrainingJob& job) const {
  std::vector<placement::Toleration> out;
  for (const kube::Toleration& t : job.pod.tolerations) {
    out.push_back({t.key, t.operator_.empty() ? "Equal" : t.operator_.str(), t.value, t.effect});
  }
  if (job.status.admission) {
    std::vector<placement::Toleration> flavor = flavors_(job.status.admission->flavor);
    out.insert(out.end(), flavor.begin(), flavor.end());
  }
  return out;
}

std::optional<FaultDecision> NodeFaultResponder::Respond(const kube::TrainingJob& job,
                                                         absl::Time now) {
  if (!job.status.admission || !job.status.placement || job.status.placement->nodes.empty()) {
    return std::nullopt;
  }
  const std::vector<placement::Toleration> tolerations = GangTolerations(job);
  std::vector<NodeFault> faults;
  std::set<std::string> seen;
  for (const std::string& name : job.status.placement->nodes) {
    if (!seen.insert(name).second) continue;
    std::shared_ptr<const kube::Node> node = nodes_(name);
    std::optional<NodeFault> fault = DetectNodeFault(name, node.get(), tolerations);
    if (!fault) continue;
    if (fault->kind == NodeFaultKind::kNotReady) {
      const absl::Time since = not_ready_since_.try_emplace(name, now).first->second;
      if (now - since < options_.not_ready_grace) {
        WakeAt(since + options_.not_ready_grace);
        continue;
      }
      absl::StrAppend(&fault->detail, " for ", absl::ToInt64Seconds(now - since), "s");
    }
    faults.push_back(*std::move(fault));
  }
  if (faults.empty()) return std::nullopt;
  return Act(job, faults, now);
}

std::optional<FaultDecision> NodeFaultResponder::Act(const kube::TrainingJob& job,
                                                     const std::vector<NodeFault>& faults,
                                                     absl::Time now) {
  const std::string key = job.meta.Key();
  const std::vector<std::string>& before = job.status.placement->nodes;
  std::vector<std::string> failed;
  std::vector<std::string> details;
  for (const NodeFault& f : faults) {
    failed.push_back(f.node);
    details.push_back(f.detail);
  }
  const std::string what = absl::StrJoin(details, "; ");
  auto is_failed = [&](const std::string& node) {
    return std::find(failed.begin(), failed.end(), node) != failed.end();
  };
  const int32_t lost = static_cast<int32_t>(std::count_if(before.begin(), before.end(), is_failed));
  auto unreachable = [&](std::string_view call, const absl::Status& status) {
    spdlog::warn("TrainingJob {}: {} after node failures ({}): {}; retrying", key, call, what,
                 status);
    WakeAt(now + options_.retry);
    return std::nullopt;
  };

  FaultDecision d;
  d.reason = std::string(FaultReason(faults.front().kind));
  d.admission = job.status.admission;
  // Placed: the decision that writes it (replaced, or shrunk when it has fewer ranks).
  auto placed = [&](const placement::Placement& p, FaultAction action, std::string message) {
    d.action = action;
    d.admission->replicas = static_cast<int32_t>(p.nodes.size());
    d.placement = PlacementStatus(p);
    d.message = std::move(message);
    return d;
  };

  // 1. Replace.
  ++calls_["ReplaceNodes"];
  absl::StatusOr<placement::PlacementResult> replaced = placement_.ReplaceNodes(key, failed);
  if (!replaced.ok() && !absl::IsNotFound(replaced.status())) {
    return unreachable("ReplaceNodes", replaced.status());
  }
  if (replaced.ok() && replaced->placed) {
    const std::vector<std::string>& after = replaced->placement.nodes;
    if (after.size() < before.size()) {  // a shrink whose status write was lost, now persisted
      return placed(replaced->placement, FaultAction::kShrunk,
                    absl::StrCat("shrunk from ", before.size(), " to ", after.size(),
                                 " pods after node failures: ", what));
    }
    for (const NodeFault& f : faults) {
      if (std::find(before.begin(), before.end(), f.node) != before.end()) {
        ++d.nodes_replaced[std::string(FaultReason(f.kind))];
      }
    }
    const std::string moves = RankMoves(before, after);
    return placed(replaced->placement, FaultAction::kReplaced,
                  absl::StrCat("replaced ", faults.size(), faults.size() == 1 ? " node" : " nodes",
                               " (", what, "): ", moves.empty() ? "no rank moved" : moves,
                               "; the gang is in ", Where(replaced->placement)));
  }
  std::string why = replaced.ok() ? replaced->explanation.summary
                                  : "phalanx-scheduler holds no reservation for it";

  // 2. Shrink (elastic only).
  if (replaced.ok() && job.elastic) {
    const int32_t current = static_cast<int32_t>(before.size());
    std::optional<int32_t> target =
        ShrinkTarget(current, lost, *job.elastic, job.topology.group_size);
    if (!target) {
      absl::StrAppend(&why, "; cannot shrink: ", current, " pods less ", lost, " lost is below ",
                      "elastic.minReplicas ", job.elastic->min_replicas);
    } else {
      ++calls_["Resize"];
      absl::StatusOr<placement::PlacementResult> shrunk = placement_.Resize(key, *target);
      if (!shrunk.ok()) return unreachable("Resize", shrunk.status());
      placement::Placement result = shrunk->placement;
      bool ok = shrunk->placed;
      // A lost rank below the new count takes a node freed by the dropped ranks.
      if (ok && std::any_of(result.nodes.begin(), result.nodes.end(), is_failed)) {
        ++calls_["ReplaceNodes"];
        absl::StatusOr<placement::PlacementResult> refill = placement_.ReplaceNodes(key, failed);
        if (!refill.ok()) return unreachable("ReplaceNodes after Resize", refill.status());
        ok = refill->placed;
        if (ok) {
          result = refill->placement;
        } else {
          absl::StrAppend(&why, "; shrunk to ", *target,
                          " but a lost rank found no freed node: ", refill->explanation.summary);
        }
      }
      if (ok) {
        const std::string moves = RankMoves(before, result.nodes);
        return placed(
            result, FaultAction::kShrunk,
            absl::StrCat("shrunk from ", current, " to ", result.nodes.size(), " pods: ", what,
                         "; no replacement: ", why, moves.empty() ? "" : "; moved: ", moves));
      }
    }
  }

  // 3. Evict: back to the queue, to be admitted elsewhere.
  ++calls_["Release"];
  absl::Status released = placement_.Release(key);
  if (!released.ok() && !absl::IsNotFound(released)) return unreachable("Release", released);
  d.action = FaultAction::kEvicted;
  d.reason = std::string(kReasonNodeFailure);
  d.admission.reset();
  d.placement.reset();
  d.message =
      absl::StrCat("evicted and re-queued after node failures: ", what, "; no replacement: ", why);
  return d;
}

}  // namespace phalanx::operator_server
