#include "sim/phalanx_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "operator/admission/admission_cycle.h"
#include "operator/admission/model.h"
#include "scheduler/cluster_snapshot.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/topology.h"

namespace phalanx::sim {

absl::StatusOr<std::vector<std::string>> ClusterTopologyLevels(const ClusterModel& cluster) {
  std::vector<std::string> deepest;
  for (const NodeGroup& group : cluster.groups) {
    if (group.levels.size() > deepest.size()) deepest = group.levels;
  }
  for (const NodeGroup& group : cluster.groups) {
    if (!std::equal(group.levels.begin(), group.levels.end(), deepest.begin())) {
      return absl::InvalidArgumentError(absl::StrCat(
          cluster.spec.source, ": node group ", group.spec.name, " (", group.spec.preset,
          ") cannot share one Topology with levels ", absl::StrJoin(deepest, ", ")));
    }
  }
  return deepest;
}

placement::GangRequest GangRequestFor(const TraceJob& job, const std::string& key) {
  placement::GangRequest request;
  request.job = key;
  request.count = job.pods;
  if (job.elastic()) {
    request.elastic = placement::ElasticRange{job.elastic_min, job.elastic_max, job.elastic_step};
  }
  request.per_pod = {{std::string(kResourceGpu), job.gpus_per_pod}};
  request.required_level = job.required_level;
  request.preferred_level = job.preferred_level;
  request.group_size = job.group_size;
  request.group_level = job.group_level;
  request.priority = job.priority;
  if (!job.node_group.empty()) request.node_selector[std::string(kNodeGroupLabel)] = job.node_group;
  return request;
}

placement::NodeInfo SnapshotNode(const SimNode& node, bool ready) {
  placement::NodeInfo info;
  info.name = node.name;
  info.labels = node.labels;
  info.allocatable = node.allocatable;
  info.ready = ready;
  return info;
}

absl::StatusOr<placement::ClusterSnapshot> BuildSnapshot(const ClusterModel& cluster) {
  ASSIGN_OR_RETURN(std::vector<std::string> levels, ClusterTopologyLevels(cluster));
  ASSIGN_OR_RETURN(placement::Topology topology, placement::Topology::Create(levels));
  placement::ClusterSnapshot snapshot(std::move(topology));
  for (const SimNode& node : cluster.nodes) {
    RETURN_IF_ERROR(snapshot.AddNode(SnapshotNode(node, true)));
  }
  return snapshot;
}

namespace {

using admission::AdmittedState;
using admission::Workload;

admission::WithinClusterQueuePolicy WithinPolicy(const std::string& name) {
  if (name == "LowerPriority") return admission::WithinClusterQueuePolicy::kLowerPriority;
  if (name == "LowerOrNewerEqualPriority") {
    return admission::WithinClusterQueuePolicy::kLowerOrNewerEqualPriority;
  }
  return admission::WithinClusterQueuePolicy::kNever;
}

admission::ReclaimWithinCohortPolicy ReclaimPolicy(const std::string& name) {
  if (name == "LowerPriority") return admission::ReclaimWithinCohortPolicy::kLowerPriority;
  if (name == "Any") return admission::ReclaimWithinCohortPolicy::kAny;
  return admission::ReclaimWithinCohortPolicy::kNever;
}

std::optional<int64_t> Gpus(const std::optional<ResourceList>& list) {
  if (!list) return std::nullopt;
  auto it = list->find(kResourceGpu);
  return it == list->end() ? int64_t{0} : it->second;
}

// The admission core's queues for the cluster spec: a flavor per node group, a ClusterQueue with a
// LocalQueue and namespace of the same name per queue, the cohorts they name.
admission::Snapshot QueueSnapshot(const ClusterModel& cluster,
                                  const PhalanxPolicyOptions& options) {
  admission::Snapshot out;
  for (const NodeGroup& group : cluster.groups) {
    admission::ResourceFlavor flavor;
    flavor.name = group.spec.name;
    // One node group needs no selector; a selector would only make every placement check
    // every node's labels.
    if (cluster.groups.size() > 1) {
      flavor.node_labels[std::string(kNodeGroupLabel)] = group.spec.name;
    }
    out.flavors.push_back(std::move(flavor));
  }
  std::set<std::string> cohorts;
  for (const QueueSpec& q : cluster.spec.queues) {
    admission::ClusterQueue cq;
    cq.name = q.name;
    cq.cohort = q.cohort;
    if (!q.cohort.empty()) cohorts.insert(q.cohort);
    admission::ResourceGroup group;
    group.covered_resources = {std::string(kResourceGpu)};
    for (const FlavorQuota& f : q.flavors) {
      admission::FlavorQuotas fq;
      fq.flavor = f.flavor;
      fq.resources.push_back(admission::ResourceQuota{std::string(kResourceGpu),
                                                      *Gpus(f.nominal), Gpus(f.borrowing_limit),
                                                      Gpus(f.lending_limit)});
      group.flavors.push_back(std::move(fq));
    }
    cq.resource_groups.push_back(std::move(group));
    cq.queueing_strategy = q.queueing_strategy == "StrictFIFO"
                               ? admission::QueueingStrategy::kStrictFifo
                               : admission::QueueingStrategy::kBestEffortFifo;
    cq.preemption.within_cluster_queue = WithinPolicy(q.within_cluster_queue);
    cq.preemption.reclaim_within_cohort = ReclaimPolicy(q.reclaim_within_cohort);
    cq.preemption.borrow_within_cohort.policy =
        q.borrow_within_cohort == "LowerPriority"
            ? admission::BorrowWithinCohortPolicy::kLowerPriority
            : admission::BorrowWithinCohortPolicy::kNever;
    cq.preemption.borrow_within_cohort.max_priority_threshold = q.borrow_max_priority_threshold;
    cq.fair_sharing_weight = q.fair_sharing_weight;
    if (q.locality_wait_s) cq.locality_wait_seconds = *q.locality_wait_s;
    if (options.locality_wait_s) cq.locality_wait_seconds = *options.locality_wait_s;
    cq.backfill_quota = q.backfill_quota == "HoldForHead" ? admission::BackfillQuota::kHoldForHead
                                                          : admission::BackfillQuota::kNever;
    out.cluster_queues.push_back(std::move(cq));
    out.local_queues.push_back(admission::LocalQueue{q.name, q.name, q.name});
    out.namespaces.push_back(admission::Namespace{q.name, {}});
  }
  for (const std::string& cohort : cohorts) out.cohorts.push_back(admission::Cohort{cohort, ""});
  out.fair_sharing.enable = options.fair_sharing;
  return out;
}

class PhalanxPolicy : public Policy {
 public:
  explicit PhalanxPolicy(const PhalanxPolicyOptions& options) : options_(options) {}

  std::string name() const override { return "phalanx"; }

  absl::Status Init(const ClusterModel& cluster, const std::vector<JobStatus>& jobs) override {
    cluster_ = &cluster;
    ASSIGN_OR_RETURN(placement::ClusterSnapshot snapshot, BuildSnapshot(cluster));
    service_ = std::make_unique<placement::InProcessPlacementService>(std::move(snapshot));
    cycle_cache_ = std::make_unique<admission::CycleCache>();
    BuildQueues(cluster);
    workloads_.clear();
    by_key_.clear();
    admitted_.assign(jobs.size(), std::nullopt);
    slot_.assign(jobs.size(), -1);
    job_at_.clear();
    for (const JobStatus& job : jobs) {
      const TraceJob& spec = *job.spec;
      Workload w;
      w.key = absl::StrCat(spec.queue, "/", spec.name);
      w.namespace_name = spec.queue;
      w.queue_name = spec.queue;
      w.count = spec.pods;
      if (spec.elastic()) {
        w.elastic = placement::ElasticRange{spec.elastic_min, spec.elastic_max, spec.elastic_step};
      }
      w.per_pod = {{std::string(kResourceGpu), spec.gpus_per_pod}};
      w.priority = spec.priority;
      // Seconds, like a Workload's creationTimestamp: the admission core measures locality
      // waits from it. Equal times are ordered by key.
      w.creation_time = std::llround(spec.submit_s);
      w.required_level = spec.required_level;
      w.preferred_level = spec.preferred_level;
      w.group_size = spec.group_size;
      w.group_level = spec.group_level;
      // Its run time as the trace gives it, at its smallest size (linear scaling, as the engine
      // models it), times the factor: what a user's time limit would say (exact at 1).
      w.expected_runtime_seconds = std::llround(
          std::ceil(options_.time_limit_factor * spec.duration_s * static_cast<double>(spec.pods) /
                    static_cast<double>(spec.min_pods())));
      if (!spec.node_group.empty()) w.node_selector[std::string(kNodeGroupLabel)] = spec.node_group;
      if (!by_key_.emplace(w.key, job.id).second) {
        return absl::InvalidArgumentError(absl::StrCat(spec.origin, ": duplicate job name \"",
                                                       spec.name, "\" in queue ", spec.queue));
      }
      workloads_.push_back(std::move(w));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) override {
    base_.now = std::llround(view.now);
    Sync(view);
    // The cache keeps running workloads' resolutions across cycles, as the operator's
    // admission loop does: thousands run and a few change per cycle.
    admission::CycleOptions options;
    options.cache = cycle_cache_.get();
    options.backfill = options_.backfill;
    admission::CycleResult result = admission::RunAdmissionCycle(base_, *service_, options);
    if (!result.errors.empty()) {
      const admission::ObjectError& e = result.errors.front();
      return absl::InvalidArgumentError(
          absl::StrCat("admission: ", e.kind, " ", e.name, ": ", e.message));
    }
    std::vector<Action> actions;
    // Victims first: the cycle already released or shrunk them in the placement service.
    for (const admission::PreemptionDecision& p : result.preemptions) {
      ASSIGN_OR_RETURN(int32_t id, JobId(p.victim));
      if (p.new_count == 0) {
        SetAdmitted(id, std::nullopt);
        actions.push_back(Action{Action::Kind::kEvict, id, {}});
      } else {
        AdmittedState shrunk = *admitted_[id];
        shrunk.count = p.new_count;
        SetAdmitted(id, std::move(shrunk));
        ASSIGN_OR_RETURN(std::vector<int32_t> nodes, ReservedNodes(p.victim));
        actions.push_back(Action{Action::Kind::kResize, id, std::move(nodes)});
      }
    }
    for (const admission::AdmissionDecision& a : result.admissions) {
      ASSIGN_OR_RETURN(int32_t id, JobId(a.workload));
      SetAdmitted(id, AdmittedState{a.cluster_queue, a.flavors, a.count, base_.now});
      ASSIGN_OR_RETURN(std::vector<int32_t> nodes, NodeIndices(a.placement.nodes));
      actions.push_back(Action{Action::Kind::kStart, id, std::move(nodes)});
    }
    // A pending workload in its locality wait needs a cycle when the wait ends, even if nothing
    // else happens then.
    next_wakeup_ = result.requeue_at ? static_cast<double>(*result.requeue_at)
                                     : std::numeric_limits<double>::infinity();
    // Elastic growth, decided (quota) and placed (Resize) by the admission core.
    for (const admission::GrowthDecision& g : result.growths) {
      ASSIGN_OR_RETURN(int32_t id, JobId(g.workload));
      AdmittedState grown = *admitted_[id];
      grown.count = g.new_count;
      SetAdmitted(id, std::move(grown));
      ASSIGN_OR_RETURN(std::vector<int32_t> nodes, NodeIndices(g.placement.nodes));
      actions.push_back(Action{Action::Kind::kResize, id, std::move(nodes)});
    }
    // Every pending workload is in every cycle's list: the last one says why each still waits.
    // Kept as it is (a move), and indexed by job only when asked, at the end of a run.
    last_pending_ = std::move(result.pending);
    pending_at_.clear();
    return actions;
  }

  // The admission core's last word on the job, as the operator's Queued condition says it.
  std::string PendingReason(int32_t job) const override {
    if (pending_at_.empty()) {
      pending_at_.assign(workloads_.size(), -1);
      for (size_t i = 0; i < last_pending_.size(); ++i) {
        const auto it = by_key_.find(last_pending_[i].workload);
        if (it != by_key_.end()) pending_at_[it->second] = static_cast<int32_t>(i);
      }
    }
    if (pending_at_[job] < 0) return "";
    const admission::PendingDecision& p = last_pending_[pending_at_[job]];
    return absl::StrCat(std::string(admission::ToString(p.reason)), ": ", p.message);
  }

  double NextWakeup() const override { return next_wakeup_; }

  absl::Status JobFinished(int32_t job) override { return Forget(job); }
  absl::Status JobInterrupted(int32_t job) override { return Forget(job); }

  absl::Status NodeChanged(int32_t node, bool up) override {
    const placement::NodeInfo info = SnapshotNode(cluster_->nodes[node], up);
    return service_->Update([&](placement::ClusterSnapshot& s) { return s.UpdateNode(info); });
  }

 private:
  void BuildQueues(const ClusterModel& cluster) { base_ = QueueSnapshot(cluster, options_); }

  absl::StatusOr<int32_t> JobId(const std::string& key) const {
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return absl::InternalError(absl::StrCat("unknown workload ", key));
    return it->second;
  }

  absl::StatusOr<std::vector<int32_t>> NodeIndices(const std::vector<std::string>& names) const {
    std::vector<int32_t> nodes;
    nodes.reserve(names.size());
    for (const std::string& name : names) {
      const int32_t index = cluster_->NodeIndex(name);
      if (index < 0)
        return absl::InternalError(absl::StrCat("placement names unknown node ", name));
      nodes.push_back(index);
    }
    return nodes;
  }

  // Rank -> node of a reservation as the placement service holds it now.
  absl::StatusOr<std::vector<int32_t>> ReservedNodes(const std::string& key) const {
    std::vector<std::string> names;
    bool found = false;
    service_->Read([&](const placement::ClusterSnapshot& s) {
      const placement::ClusterSnapshot::Reservation* r = s.FindReservation(key);
      if (r == nullptr) return;
      found = true;
      for (const auto& rank : r->ranks) names.push_back(s.nodes()[rank.node].info.name);
    });
    if (!found) return absl::InternalError(absl::StrCat("no reservation for ", key));
    return NodeIndices(names);
  }

  // The snapshot's workload list persists across cycles and changes only where jobs did: copying
  // every running workload each cycle dominated large runs.
  void Sync(const CycleView& view) {
    for (size_t i = 0; i < job_at_.size();) {
      const JobState state = (*view.jobs)[job_at_[i]].state;
      if (state == JobState::kPending || state == JobState::kRunning) {
        ++i;
        continue;
      }
      const int32_t gone = job_at_[i];
      const size_t last = job_at_.size() - 1;
      if (i != last) {
        base_.workloads[i] = std::move(base_.workloads[last]);
        job_at_[i] = job_at_[last];
        slot_[job_at_[i]] = static_cast<int32_t>(i);
      }
      base_.workloads.pop_back();
      job_at_.pop_back();
      slot_[gone] = -1;
    }
    for (const std::vector<int32_t>* ids : {&view.running, &view.pending}) {
      for (int32_t id : *ids) {
        if (slot_[id] >= 0) continue;
        slot_[id] = static_cast<int32_t>(job_at_.size());
        job_at_.push_back(id);
        base_.workloads.push_back(workloads_[id]);
        base_.workloads.back().admitted = admitted_[id];
        base_.workloads.back().revision = ++revisions_;
      }
    }
  }

  void SetAdmitted(int32_t id, std::optional<AdmittedState> state) {
    admitted_[id] = std::move(state);
    if (slot_[id] >= 0) {
      base_.workloads[slot_[id]].admitted = admitted_[id];
      base_.workloads[slot_[id]].revision = ++revisions_;
    }
  }

  absl::Status Forget(int32_t job) {
    SetAdmitted(job, std::nullopt);
    absl::Status status = service_->Release(workloads_[job].key);
    if (!status.ok() && !absl::IsNotFound(status)) return status;
    return absl::OkStatus();
  }

  PhalanxPolicyOptions options_;
  const ClusterModel* cluster_ = nullptr;
  std::unique_ptr<placement::InProcessPlacementService> service_;
  std::unique_ptr<admission::CycleCache> cycle_cache_;
  uint64_t revisions_ = 0;  // Workload::revision: bumped on every change the policy makes
  admission::Snapshot base_;
  std::vector<Workload> workloads_;
  std::vector<std::optional<AdmittedState>> admitted_;
  std::vector<int32_t> slot_;    // job -> index in base_.workloads, -1 if not there
  std::vector<int32_t> job_at_;  // index in base_.workloads -> job
  std::unordered_map<std::string, int32_t> by_key_;
  double next_wakeup_ = std::numeric_limits<double>::infinity();
  std::vector<admission::PendingDecision> last_pending_;  // the last cycle's
  mutable std::vector<int32_t> pending_at_;  // job -> index in last_pending_, -1; built on demand
};

}  // namespace

absl::Status CheckQueues(const ClusterModel& cluster) {
  const admission::Model model = admission::CompileModel(QueueSnapshot(cluster, {}));
  if (model.errors.empty()) return absl::OkStatus();
  const admission::ObjectError& e = model.errors.front();
  return absl::InvalidArgumentError(absl::StrCat(cluster.spec.source, ": queues: ", e.kind, " ",
                                                 e.name, ": ", e.message));
}

std::unique_ptr<Policy> MakePhalanxPolicy(const PhalanxPolicyOptions& options) {
  return std::make_unique<PhalanxPolicy>(options);
}

}  // namespace phalanx::sim
