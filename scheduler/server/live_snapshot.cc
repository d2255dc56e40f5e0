#include "scheduler/server/live_snapshot.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_labels.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace phalanx::scheduler {
namespace {

using placement::ClusterSnapshot;

std::map<std::string, std::string> ToMap(const kube::StringMap& labels) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : labels) out.emplace_hint(out.end(), key, value);
  return out;
}


}  // namespace

placement::NodeInfo NodeInfoFrom(const kube::Node& node) {
  placement::NodeInfo info;
  info.name = node.meta.name;
  info.labels = ToMap(node.meta.labels);
  info.taints.reserve(node.taints.size());
  for (const kube::Taint& taint : node.taints) {
    info.taints.push_back({taint.key, taint.value, taint.effect});
  }
  info.unschedulable = node.unschedulable;
  info.ready = node.ready;
  info.allocatable = node.allocatable;
  return info;
}

std::optional<placement::PodInfo> PodInfoFrom(const kube::Pod& pod) {
  if (pod.node_name.empty() || kube::FinishedPhase(pod.phase)) return std::nullopt;
  placement::PodInfo info;
  info.key = pod.meta.Key();
  info.node = pod.node_name;
  info.requests = pod.requests;
  const std::string* job = pod.meta.labels.Find(kJobLabel);
  if (job != nullptr && !job->empty()) {
    info.job = absl::StrCat(pod.meta.namespace_, "/", *job);
    if (const std::string* rank = pod.meta.labels.Find(kRankLabel); rank != nullptr) {
      int32_t value = -1;
      auto [end, error] = std::from_chars(rank->data(), rank->data() + rank->size(), value);
      if (error == std::errc() && end == rank->data() + rank->size() && value >= 0) {
        info.rank = value;
      }
    }
  }
  return info;
}

placement::GangRequest GangRequestFrom(const kube::TrainingJob& job) {
  placement::GangRequest request;
  request.job = job.meta.Key();
  request.count = job.status.admission && job.status.admission->replicas > 0
                      ? job.status.admission->replicas
                      : job.replicas;
  if (job.elastic) {
    request.elastic = placement::ElasticRange{.min = job.elastic->min_replicas,
                                              .max = job.elastic->max_replicas,
                                              .step = std::max(1, job.elastic->step)};
  }
  request.per_pod = job.pod.requests;
  request.node_selector = ToMap(job.pod.node_selector);
  request.node_affinity = job.node_affinity;
  request.max_pods_per_node = job.max_pods_per_node;
  for (const kube::Toleration& t : job.pod.tolerations) {
    request.tolerations.push_back(kube::ToPlacementToleration(t));
  }
  request.required_level = job.topology.required;
  request.preferred_level = job.topology.preferred;
  request.group_size = job.topology.group_size;
  request.group_level = job.topology.group_level;
  request.priority = job.priority.value_or(0);
  // The admitted flavors' labels and tolerations as recorded at admission, as the operator's
  // request carried them: a restored reservation's later moves (ReplaceNodes, Resize) stay on
  // the flavor's nodes.
  if (job.status.admission && job.status.admission->node_selector) {
    request.node_selector.insert(job.status.admission->node_selector->begin(),
                                 job.status.admission->node_selector->end());
  }
  if (job.status.admission && job.status.admission->tolerations) {
    for (const kube::Toleration& t : *job.status.admission->tolerations) {
      request.tolerations.push_back(kube::ToPlacementToleration(t));
    }
  }
  return request;
}

std::optional<Restorable> RestorableFrom(const kube::TrainingJob& job) {
  // A job being deleted keeps its status, but the operator has released (or is releasing) its
  // reservation: restoring it from that status would hold the nodes for a job that is going.
  if (!job.status.admission || !job.status.placement || job.status.placement->nodes.empty() ||
      kube::FinishedPhase(job.status.phase) || !job.meta.deletion_timestamp.empty()) {
    return std::nullopt;
  }
  Restorable r;
  r.request = GangRequestFrom(job);
  const auto& nodes = job.status.placement->nodes;
  const int32_t count = static_cast<int32_t>(nodes.size());
  r.request.count = count;
  if (r.request.elastic) {
    // The gang may have grown past elastic.max (growth) or been admitted below the preferred
    // size: the range only has to admit the size it really has.
    r.request.elastic->min = std::min(r.request.elastic->min, count);
    r.request.elastic->max = std::max(r.request.elastic->max, count);
    if (count % r.request.elastic->step != 0 || r.request.elastic->min % r.request.elastic->step) {
      r.request.elastic->step = 1;
    }
  }
  r.placement.job = r.request.job;
  r.placement.nodes = nodes;
  return r;
}

void LiveSnapshot::Build(const std::vector<std::shared_ptr<const kube::Node>>& nodes,
                         const std::vector<std::shared_ptr<const kube::RawObject>>& jobs,
                         const std::vector<std::shared_ptr<const kube::Pod>>& pods) {
  absl::MutexLock lock(&mu_);
  for (const auto& node : nodes) ApplyNodeLocked(node->meta.name, node.get());
  for (const auto& job : jobs) ApplyJobLocked(job->meta.Key(), job.get());
  for (const auto& pod : pods) ApplyPodLocked(pod->meta.Key(), pod.get());
  built_ = true;
  spdlog::info(
      "snapshot built: {} nodes, {} pods in use, {} reservations restored, {} not restorable yet",
      nodes.size(), bound_.size(), counters_.restored, unrestored_.size());
}

void LiveSnapshot::NodeChanged(const std::string& name, const kube::Node* node) {
  absl::MutexLock lock(&mu_);
  if (!built_) return;
  ++counters_.node_events;
  ApplyNodeLocked(name, node);
}

void LiveSnapshot::PodChanged(const std::string& key, const kube::Pod* pod) {
  absl::MutexLock lock(&mu_);
  if (!built_) return;
  ++counters_.pod_events;
  ApplyPodLocked(key, pod);
}

void LiveSnapshot::JobChanged(const std::string& key, const kube::RawObject* job) {
  absl::MutexLock lock(&mu_);
  if (!built_) return;
  ++counters_.job_events;
  ApplyJobLocked(key, job);
}

bool LiveSnapshot::built() const {
  absl::MutexLock lock(&mu_);
  return built_;
}

LiveSnapshotCounters LiveSnapshot::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

std::vector<std::pair<std::string, placement::Topology::LabelGap>> LiveSnapshot::LabelGapNodes()
    const {
  absl::MutexLock lock(&mu_);
  return {label_gaps_.begin(), label_gaps_.end()};
}

std::vector<std::string> LiveSnapshot::UnrestoredJobs() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [job, unused] : unrestored_) out.push_back(job);
  std::sort(out.begin(), out.end());
  return out;
}

void LiveSnapshot::ApplyNodeLocked(const std::string& name, const kube::Node* node) {
  if (node == nullptr) {
    TrackLabelGapLocked(name, std::nullopt);
    absl::Status status = service_.Update([&](ClusterSnapshot& s) {
      return s.FindNode(name) < 0 ? absl::OkStatus() : s.RemoveNode(name);
    });
    if (!status.ok()) {
      ++counters_.errors;
      spdlog::error("removing node {} from the snapshot: {}", name, status);
    }
    return;
  }
  placement::NodeInfo info = NodeInfoFrom(*node);
  std::optional<placement::Topology::LabelGap> gap;
  absl::Status status = service_.Update([&](ClusterSnapshot& s) {
    gap = s.topology().FindLabelGap(info.labels);
    return s.FindNode(name) < 0 ? s.AddNode(info) : s.UpdateNode(info);
  });
  if (!status.ok()) {
    ++counters_.errors;
    spdlog::error("node {} not taken into the snapshot: {}", name, status);
    return;
  }
  TrackLabelGapLocked(name, std::move(gap));
  // Pods that were bound to this node before it was known.
  if (auto waiting = waiting_.find(name); waiting != waiting_.end()) {
    auto pods = std::move(waiting->second);
    waiting_.erase(waiting);
    for (auto& [key, pod] : pods) {
      waiting_node_.erase(key);
      absl::Status added = service_.Update([&](ClusterSnapshot& s) { return s.AddPod(pod); });
      if (added.ok()) {
        bound_.emplace(key, name);
      } else {
        ++counters_.errors;
        spdlog::error("pod {} on node {} not taken into the snapshot: {}", key, name, added);
      }
    }
  }
  if (!unrestored_.empty()) RetryUnrestoredLocked();
}

void LiveSnapshot::ApplyPodLocked(const std::string& key, const kube::Pod* pod) {
  std::optional<placement::PodInfo> want;
  if (pod != nullptr) want = PodInfoFrom(*pod);
  if (auto it = bound_.find(key); it != bound_.end()) {
    // A pod's node never changes once bound; its requests change only by in-place resize.
    if (want && want->node == it->second) {
      return;
    }
    absl::Status status = service_.Update([&](ClusterSnapshot& s) { return s.RemovePod(key); });
    if (!status.ok()) {
      ++counters_.errors;
      spdlog::error("removing pod {} from the snapshot: {}", key, status);
    }
    bound_.erase(it);
  }
  if (auto it = waiting_node_.find(key); it != waiting_node_.end()) {
    waiting_[it->second].erase(key);
    if (waiting_[it->second].empty()) waiting_.erase(it->second);
    waiting_node_.erase(it);
  }
  if (!want) return;
  absl::Status status = service_.Update([&](ClusterSnapshot& s) {
    if (s.FindNode(want->node) < 0) return absl::NotFoundError("node not known yet");
    return s.AddPod(*want);
  });
  if (status.ok()) {
    bound_.emplace(key, want->node);
  } else if (absl::IsNotFound(status)) {
    spdlog::debug("pod {} is bound to node {} that the snapshot does not know yet", key,
                  want->node);
    waiting_node_[key] = want->node;
    waiting_[want->node].emplace(key, *std::move(want));
  } else {
    ++counters_.errors;
    spdlog::error("pod {} not taken into the snapshot: {}", key, status);
  }
}

void LiveSnapshot::ApplyJobLocked(const std::string& key, const kube::RawObject* raw) {
  if (raw == nullptr) {
    unrestored_.erase(key);
    restored_nodes_.erase(key);
    absl::Status status = service_.Update([&](ClusterSnapshot& s) {
      if (s.FindReservation(key) == nullptr) return absl::NotFoundError("");
      return s.Release(key);
    });
    if (status.ok()) {
      ++counters_.released_on_delete;
      spdlog::info("released the reservation of deleted TrainingJob {}", key);
    }
    return;
  }
  absl::StatusOr<kube::TrainingJob> job = kube::DecodeTrainingJob(raw->json);
  if (!job.ok()) {
    ++counters_.errors;
    spdlog::warn("TrainingJob {} cannot be read: {}", key, job.status());
    return;
  }
  std::optional<Restorable> restorable = RestorableFrom(*job);
  if (!restorable) {
    unrestored_.erase(key);
    ReleaseLeftoverLocked(key, kube::FinishedPhase(job->status.phase));
    return;
  }
  if (!RestoreLocked(*restorable, /*retry=*/false)) unrestored_.insert_or_assign(key, *std::move(restorable));
}

void LiveSnapshot::ReleaseLeftoverLocked(const std::string& key, bool finished) {
  auto restored = restored_nodes_.find(key);
  std::vector<std::string> restored_on;
  if (restored != restored_nodes_.end()) {
    restored_on = std::move(restored->second);
    restored_nodes_.erase(restored);
  }
  if (!finished && restored_on.empty()) return;  // maybe the operator's fresh reservation
  absl::Status status = service_.Update([&](ClusterSnapshot& s) -> absl::Status {
    const ClusterSnapshot::Reservation* held = s.FindReservation(key);
    if (held == nullptr) return absl::NotFoundError("");
    if (!finished) {
      // Only the reservation re-created from the old status, not one the operator made since.
      if (held->ranks.size() != restored_on.size()) return absl::NotFoundError("");
      for (size_t r = 0; r < held->ranks.size(); ++r) {
        if (s.nodes()[held->ranks[r].node].info.name != restored_on[r]) {
          return absl::NotFoundError("");
        }
      }
    }
    return s.Release(key);
  });
  if (!status.ok()) return;
  if (finished) {
    ++counters_.released_on_finish;
    spdlog::info("released the reservation of finished TrainingJob {}", key);
  } else {
    ++counters_.released_stale;
    spdlog::info("released the reservation of TrainingJob {} restored from a status it has left",
                 key);
  }
}

bool LiveSnapshot::RestoreLocked(const Restorable& restorable, bool retry) {
  const std::string& job = restorable.request.job;
  bool restored = false;
  absl::Status status = service_.Update([&](ClusterSnapshot& s) -> absl::Status {
    if (s.FindReservation(job) != nullptr) return absl::OkStatus();  // held already
    absl::StatusOr<placement::PlacementResult> result =
        s.Restore(restorable.request, restorable.placement);
    if (result.ok()) restored = true;
    return result.status();
  });
  if (!status.ok()) {
    ++counters_.restore_failures;
    // Retries run on every node change: say it once, not once per node heartbeat.
    if (retry) {
      spdlog::debug("reservation of TrainingJob {} still not restorable: {}", job, status);
    } else {
      spdlog::warn("reservation of TrainingJob {} not restored from status.placement yet: {}",
                   job, status);
    }
    return false;
  }
  if (restored) {
    restored_nodes_[job] = restorable.placement.nodes;
    ++counters_.restored;
    spdlog::info("restored the reservation of TrainingJob {} ({} ranks) from status.placement",
                 job, restorable.placement.nodes.size());
  }
  return true;
}

void LiveSnapshot::TrackLabelGapLocked(const std::string& name,
                                       std::optional<placement::Topology::LabelGap> gap) {
  auto known = label_gaps_.find(name);
  if (!gap) {
    if (known == label_gaps_.end()) return;
    label_gaps_.erase(known);
    if (options_.log_label_gaps) {
      spdlog::info("node {}: topology labels no longer skip a level", name);
    }
    return;
  }
  if (known != label_gaps_.end() && known->second == *gap) {
    return;  // seen in this state already: one line per node, not one per update
  }
  if (options_.log_label_gaps) {
    spdlog::warn(
        "node {} carries {} but not {}: its deeper topology labels are ignored (a node counts "
        "at a level only with every coarser level's label too)",
        name, absl::StrJoin(gap->ignored, ", "), gap->missing);
  }
  label_gaps_.insert_or_assign(name, *std::move(gap));
}

void LiveSnapshot::RetryUnrestoredLocked() {
  for (auto it = unrestored_.begin(); it != unrestored_.end();) {
    if (RestoreLocked(it->second, /*retry=*/true)) {
      it = unrestored_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace phalanx::scheduler
