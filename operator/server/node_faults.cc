#include "operator/server/node_faults.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_labels.h"
#include "common/counted_noun.h"
#include "common/resources.h"
#include "common/status.h"
#include "operator/controller/pod_builder.h"
#include "operator/server/job_status.h"
#include "scheduler/cluster_snapshot.h"
#include "scheduler/gang_search.h"
#include "spdlog/spdlog.h"

namespace phalanx::operator_server {
namespace {

// Taints the node lifecycle controller sets from node conditions. not-ready and unreachable
// mirror the Ready condition, which has its own grace period; the pressure taints are
// transient and the kubelet evicts by itself if it must. Every other untolerated NoSchedule /
// NoExecute taint is a fault (a health agent's, typically: someone decided the node goes),
// except the cordon's, which DetectNodeFault reports as its own kind.
constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";

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

// "p5-0001 (rank 1) is NotReady: its ranks move to a spare node at 12:00:31Z (NotReady grace
// 30 s) unless it is Ready again by then"
std::string NotReadyNotice(const std::string& node, const std::vector<std::string>& placed,
                           absl::Time moves_at, absl::Duration grace) {
  std::vector<size_t> ranks;
  for (size_t r = 0; r < placed.size(); ++r) {
    if (placed[r] == node) ranks.push_back(r);
  }
  return absl::StrCat(node, " (rank", ranks.size() == 1 ? " " : "s ", absl::StrJoin(ranks, ", "),
                      ") is NotReady: its ranks move to a spare node at ",
                      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", moves_at, absl::UTCTimeZone()),
                      " (NotReady grace ", absl::ToInt64Seconds(grace),
                      " s) unless it is Ready again by then");
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
    case NodeFaultKind::kCordoned:
      return "NodeCordoned";
    case NodeFaultKind::kCapacityLost:
      return "NodeCapacityLost";
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

std::optional<NodeFault> DetectCapacityLoss(std::string_view name, const kube::Node& node,
                                            const phalanx::ResourceList& per_pod, int ranks) {
  const phalanx::ResourceList& allocatable = node.allocatable.get();
  for (const auto& [resource, amount] : per_pod) {
    if (amount <= 0 || resource == "pods") continue;
    auto it = allocatable.find(resource);
    const int64_t has = it == allocatable.end() ? 0 : it->second;
    if (has >= amount * ranks) continue;
    NodeFault fault{.node = std::string(name), .kind = NodeFaultKind::kCapacityLost};
    fault.detail = absl::StrCat(
        fault.node, " has ", phalanx::FormatResources({{resource, has}}), " allocatable, below ",
        ranks == 1 ? "its rank's " : absl::StrCat("its ", ranks, " ranks' "),
        phalanx::FormatResources({{resource, amount * ranks}}));
    return fault;
  }
  return std::nullopt;
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
  bool cordoned = node->unschedulable;
  for (const kube::Taint& t : node->taints) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    if (LifecycleConditionTaint(t.key.view())) continue;
    if (t.key.view() == kUnschedulableTaint) {
      cordoned = true;  // the API server's taint for spec.unschedulable, maybe not yet mirrored
      continue;
    }
    if (placement::Tolerates(tolerations, {t.key.str(), t.value.str(), t.effect.str()})) continue;
    fault.kind = NodeFaultKind::kTainted;
    fault.detail =
        absl::StrCat(fault.node, " has taint ", t.key.str(), t.value.empty() ? "" : "=",
                     t.value.str(), ":", t.effect.str(), " that the pods do not tolerate");
    return fault;
  }
  if (cordoned &&
      !placement::Tolerates(tolerations, {std::string(kUnschedulableTaint), "", "NoSchedule"})) {
    fault.kind = NodeFaultKind::kCordoned;
    fault.detail = absl::StrCat(fault.node, " is cordoned (spec.unschedulable)");
    return fault;
  }
  return std::nullopt;
}

std::optional<NodeFault> DetectGangNodeFault(
    const kube::TrainingJob& job, std::string_view name, const kube::Node* node,
    const std::vector<placement::Toleration>& tolerations) {
  std::optional<NodeFault> fault = DetectNodeFault(name, node, tolerations);
  if (fault || node == nullptr || !job.status.placement) return fault;
  const std::vector<std::string>& nodes = job.status.placement->nodes;
  const int ranks = static_cast<int>(std::count(nodes.begin(), nodes.end(), name));
  return DetectCapacityLoss(name, *node, job.pod.requests.get(), ranks);
}

std::string TopologyDrift(
    const kube::TrainingJob& job,
    const std::function<std::shared_ptr<const kube::Node>(const std::string&)>& nodes) {
  if (!job.status.placement) return "";
  const kube::TrainingJobPlacement& placed = *job.status.placement;
  auto label = [](const kube::Node& node, const std::string& key) -> std::string {
    const std::string* value = node.meta.labels.Find(key);
    return value == nullptr ? std::string() : *value;
  };
  auto has = [](const std::string& key, const std::string& value) {
    return value.empty() ? absl::StrCat("no ", key, " label") : absl::StrCat(key, "=", value);
  };
  std::vector<std::string> found;
  // The gang's domain: every rank's node inside it.
  if (!placed.level.empty()) {
    for (size_t rank = 0; rank < placed.nodes.size(); ++rank) {
      std::shared_ptr<const kube::Node> node = nodes(placed.nodes[rank]);
      if (node == nullptr) continue;
      const std::string value = label(*node, placed.level);
      if (value == placed.domain) continue;
      found.push_back(absl::StrCat("rank ", rank, "'s node ", placed.nodes[rank], " now has ",
                                   has(placed.level, value), ", outside the gang's domain ",
                                   placed.domain));
    }
  }
  // Each group of groupSize ranks inside one groupLevel domain.
  const int32_t size = job.topology.group_size;
  const std::string& level = job.topology.group_level;
  if (size > 1 && !level.empty()) {
    for (size_t first = 0; first + size <= placed.nodes.size(); first += size) {
      std::map<std::string, std::vector<size_t>> domains;  // value -> ranks
      for (size_t rank = first; rank < first + size; ++rank) {
        std::shared_ptr<const kube::Node> node = nodes(placed.nodes[rank]);
        if (node != nullptr) domains[label(*node, level)].push_back(rank);
      }
      if (domains.size() < 2) continue;
      // The odd one out: the rank in the smallest part.
      auto odd = std::min_element(domains.begin(), domains.end(), [](const auto& a, const auto& b) {
        return a.second.size() < b.second.size();
      });
      const size_t rank = odd->second.front();
      found.push_back(absl::StrCat("rank ", rank, "'s node ", placed.nodes[rank], " now has ",
                                   has(level, odd->first), ": group ", first / size, " (ranks ",
                                   first, "-", first + size - 1, ") spans ", domains.size(), " ",
                                   level, " domains"));
    }
  }
  if (found.empty()) return "";
  std::string out = found.front();
  if (found.size() > 1) {
    absl::StrAppend(&out, " (and ", found.size() - 1, " more such rank",
                    found.size() == 2 ? "" : "s", ")");
  }
  return out;
}

int PodIntLabel(const kube::Pod& pod, std::string_view key) {
  const std::string* value = pod.meta.labels.Find(std::string(key));
  int out = -1;
  if (value == nullptr || !absl::SimpleAtoi(*value, &out)) return -1;
  return out;
}

std::string_view PinnedNode(const kube::Pod& pod) {
  if (!pod.node_name.empty()) return pod.node_name.view();
  const std::string* node = pod.meta.annotations.Find(std::string(kNodeAnnotation));
  return node == nullptr ? std::string_view() : std::string_view(*node);
}

int GangRank(const kube::Pod& pod, std::string_view job_uid, int32_t restarts) {
  const kube::OwnerReference* owner = pod.meta.ControllerRef();
  if (owner == nullptr || owner->uid.view() != job_uid ||
      PodIntLabel(pod, kRestartLabel) != restarts) {
    return -1;
  }
  return PodIntLabel(pod, kRankLabel);
}

std::set<int32_t> RanksInPlace(const kube::TrainingJob& job,
                               const std::vector<std::shared_ptr<const kube::Pod>>& pods) {
  std::set<int32_t> out;
  if (!job.status.placement) return out;
  const std::vector<std::string>& reserved = job.status.placement->nodes;
  for (const auto& pod : pods) {
    const int rank = GangRank(*pod, job.meta.uid, job.status.restarts);
    if (rank < 0 || rank >= static_cast<int>(reserved.size())) continue;
    if (pod->meta.deletion_timestamp.empty() && pod->phase != "Failed" &&
        pod->node_name.view() == reserved[rank]) {
      out.insert(rank);
    }
  }
  return out;
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

NodeFaultResponder::NodeFaultResponder(NodeLookup nodes, FlavorTolerations flavors, JobPods pods,
                                       placement::PlacementService& placement,
                                       NodeFaultOptions options)
    : nodes_(std::move(nodes)),
      flavors_(std::move(flavors)),
      pods_(std::move(pods)),
      placement_(placement),
      options_(options) {}

void NodeFaultResponder::BeginCycle() {
  next_check_.reset();
  calls_.clear();
  notices_.clear();
  for (auto it = not_ready_since_.begin(); it != not_ready_since_.end();) {
    std::shared_ptr<const kube::Node> node = nodes_(it->first);
    it = node == nullptr || node->ready ? not_ready_since_.erase(it) : std::next(it);
  }
  for (auto it = told_.begin(); it != told_.end();) {
    it = not_ready_since_.count(it->first) == 0 ? told_.erase(it) : std::next(it);
  }
}

void NodeFaultResponder::WakeAt(absl::Time t) {
  if (!next_check_ || t < *next_check_) next_check_ = t;
}

std::vector<placement::Toleration> GangPodTolerations(const kube::TrainingJob& job,
                                                      const std::vector<kube::Toleration>& flavor) {
  std::vector<placement::Toleration> out;
  out.reserve(job.pod.tolerations.size() + flavor.size());
  for (const kube::Toleration& t : job.pod.tolerations) {
    out.push_back(kube::ToPlacementToleration(t));
  }
  for (const kube::Toleration& t : flavor) out.push_back(kube::ToPlacementToleration(t));
  return out;
}

std::vector<placement::Toleration> NodeFaultResponder::GangTolerations(
    const kube::TrainingJob& job) const {
  if (!job.status.admission) return GangPodTolerations(job, {});
  // The flavor's as recorded at admission: what the gang's pods carry.
  if (job.status.admission->tolerations) {
    return GangPodTolerations(job, *job.status.admission->tolerations);
  }
  std::vector<placement::Toleration> out = GangPodTolerations(job, {});
  std::vector<placement::Toleration> flavor = flavors_(job.status.admission->flavor);
  out.insert(out.end(), flavor.begin(), flavor.end());
  return out;
}

std::optional<FaultDecision> NodeFaultResponder::Respond(const kube::TrainingJob& job,
                                                         absl::Time now) {
  if (!job.status.admission || !job.status.placement || job.status.placement->nodes.empty()) {
    return std::nullopt;
  }
  const std::vector<placement::Toleration> tolerations = GangTolerations(job);
  const std::vector<std::string>& nodes = job.status.placement->nodes;
  std::optional<std::set<int32_t>> in_place;  // read once, for the first cordoned node
  std::vector<NodeFault> faults;
  std::set<std::string> seen;
  for (const std::string& name : nodes) {
    if (!seen.insert(name).second) continue;
    std::shared_ptr<const kube::Node> node = nodes_(name);
    std::optional<NodeFault> fault = DetectGangNodeFault(job, name, node.get(), tolerations);
    if (!fault) continue;
    if (fault->kind == NodeFaultKind::kNotReady) {
      const absl::Time since = not_ready_since_.try_emplace(name, now).first->second;
      if (now - since < options_.not_ready_grace) {
        WakeAt(since + options_.not_ready_grace);
        if (told_.emplace(name, job.meta.Key()).second) {
          notices_.push_back({job.meta.Key(),
                              NotReadyNotice(name, nodes, since + options_.not_ready_grace,
                                             options_.not_ready_grace)});
        }
        continue;
      }
      absl::StrAppend(&fault->detail, " for ", absl::ToInt64Seconds(now - since), "s");
    }
    if (fault->kind == NodeFaultKind::kCordoned || fault->kind == NodeFaultKind::kCapacityLost) {
      if (!in_place) in_place = RanksInPlace(job, pods_(job.meta.Key()));
      std::vector<int32_t> homeless;  // the node's ranks that need a new pod
      for (int32_t r = 0; r < static_cast<int32_t>(nodes.size()); ++r) {
        if (nodes[r] == name && in_place->count(r) == 0) homeless.push_back(r);
      }
      if (homeless.empty()) continue;  // every rank there still runs: the cordon moves none
      absl::StrAppend(&fault->detail, " and rank", homeless.size() == 1 ? " " : "s ",
                      absl::StrJoin(homeless, ", "), " there need",
                      homeless.size() == 1 ? "s" : "", " a new pod");
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
                    absl::StrCat("shrunk from ", before.size(), " to ",
                                 CountedNoun(static_cast<int64_t>(after.size()), "pod"),
                                 " after node failures: ", what));
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
    std::optional<CallError> error;
    std::optional<placement::Placement> shrunk = Shrink(job, failed, lost, why, error);
    if (error) return unreachable(error->call, error->status);
    if (shrunk) {
      const std::string moves = RankMoves(before, shrunk->nodes);
      return placed(*shrunk, FaultAction::kShrunk,
                    absl::StrCat("shrunk from ", before.size(), " to ",
                                 CountedNoun(static_cast<int64_t>(shrunk->nodes.size()), "pod"),
                                 ": ", what, "; no replacement: ", why,
                                 moves.empty() ? "" : "; moved: ", moves));
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

std::optional<placement::Placement> NodeFaultResponder::Shrink(
    const kube::TrainingJob& job, const std::vector<std::string>& failed, int32_t lost,
    std::string& why, std::optional<CallError>& error) {
  const std::string key = job.meta.Key();
  const int32_t current = static_cast<int32_t>(job.status.placement->nodes.size());
  std::optional<int32_t> target =
      ShrinkTarget(current, lost, *job.elastic, job.topology.group_size);
  if (!target) {
    absl::StrAppend(&why, "; cannot shrink: ", current, " pods less ", lost, " lost is below ",
                    "elastic.minReplicas ", job.elastic->min_replicas);
    return std::nullopt;
  }
  ++calls_["Resize"];
  absl::StatusOr<placement::PlacementResult> shrunk = placement_.Resize(key, *target);
  if (!shrunk.ok()) {
    error = CallError{"Resize", shrunk.status()};
    return std::nullopt;
  }
  if (!shrunk->placed) {
    absl::StrAppend(&why, "; cannot shrink to ", *target, ": ", shrunk->explanation.summary);
    return std::nullopt;
  }
  placement::Placement result = shrunk->placement;
  auto is_failed = [&](const std::string& node) {
    return std::find(failed.begin(), failed.end(), node) != failed.end();
  };
  // A lost rank below the new count takes a node freed by the dropped ranks.
  if (std::any_of(result.nodes.begin(), result.nodes.end(), is_failed)) {
    ++calls_["ReplaceNodes"];
    absl::StatusOr<placement::PlacementResult> refill = placement_.ReplaceNodes(key, failed);
    if (!refill.ok()) {
      error = CallError{"ReplaceNodes after Resize", refill.status()};
      return std::nullopt;
    }
    if (!refill->placed) {
      absl::StrAppend(&why, "; shrunk to ", *target,
                      " but a lost rank found no freed node: ", refill->explanation.summary);
      return std::nullopt;
    }
    result = refill->placement;
  }
  return result;
}

std::optional<FaultDecision> NodeFaultResponder::ShrinkToRunning(const kube::TrainingJob& job,
                                                                 const std::set<int32_t>& running,
                                                                 const std::string& what,
                                                                 std::string& why) {
  if (!job.elastic || !job.status.admission || !job.status.placement ||
      job.status.placement->nodes.empty()) {
    return std::nullopt;
  }
  const std::vector<std::string>& before = job.status.placement->nodes;
  const int32_t current = static_cast<int32_t>(before.size());
  const int32_t lost = current - static_cast<int32_t>(running.size());
  if (lost <= 0) return std::nullopt;
  // The nodes of ranks not running where no running rank of the gang sits: the rank leaves for
  // a node a dropped rank freed (its own may be why it never ran). A node shared with a running
  // rank keeps its ranks, and the one not running gets a new pod there.
  std::set<std::string> keep;
  for (int32_t r : running) {
    if (r >= 0 && r < current) keep.insert(before[r]);
  }
  std::vector<std::string> failed;
  for (int32_t r = 0; r < current; ++r) {
    if (running.count(r) == 0 && keep.count(before[r]) == 0 &&
        std::find(failed.begin(), failed.end(), before[r]) == failed.end()) {
      failed.push_back(before[r]);
    }
  }
  std::optional<CallError> error;
  std::optional<placement::Placement> shrunk = Shrink(job, failed, lost, why, error);
  if (error) {
    absl::StrAppend(&why, "; cannot shrink: ", error->call, ": ", error->status.ToString());
    return std::nullopt;
  }
  if (!shrunk) return std::nullopt;
  FaultDecision d;
  d.action = FaultAction::kShrunk;
  d.reason = std::string(kReasonPodsReadyTimeout);
  d.admission = job.status.admission;
  d.admission->replicas = static_cast<int32_t>(shrunk->nodes.size());
  d.placement = PlacementStatus(*shrunk);
  const std::string moves = RankMoves(before, shrunk->nodes);
  d.message = absl::StrCat("shrunk from ", current, " to ",
                           CountedNoun(static_cast<int64_t>(shrunk->nodes.size()), "pod"), ": ",
                           what,
                           moves.empty() ? "" : "; moved: ", moves);
  return d;
}

}  // namespace phalanx::operator_server
