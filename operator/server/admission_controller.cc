#include "operator/server/admission_controller.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "kube/errors.h"
#include "operator/admission/apply.h"
#include "operator/server/job_events.h"
#include "operator/server/job_status.h"
#include "operator/server/namespace_quota.h"
#include "operator/server/parallel.h"
#include "operator/server/pods_ready.h"
#include "operator/server/queue_objects.h"
#include "spdlog/spdlog.h"

namespace phalanx::operator_server {
namespace {

// A pending job the core is to keep pending, reason Invalid, with `message`: counted as its
// queue's pending workload, as Kueue counts an inadmissible one.
admission::Workload InvalidWorkload(const kube::TrainingJob& job, std::string message) {
  admission::Workload refused;
  refused.key = job.meta.Key();
  refused.namespace_name = job.meta.namespace_;
  refused.queue_name = job.queue_name;
  refused.invalid = std::move(message);
  return refused;
}

constexpr char kCycleKey[] = "cycle";
constexpr absl::Duration kMaxPlacementRetryDelay = absl::Seconds(5);
// A gang that quota admits but no domain holds now waits for capacity, and capacity also frees
// where the operator sees no event: pods of other workloads ending (it watches only its own),
// a reservation released through the Placement API by hand. Such gangs are looked at again at
// least this often, as kube-scheduler retries unschedulable pods at the latest after 5 minutes.
constexpr absl::Duration kCannotBePlacedRecheck = absl::Seconds(30);
const std::vector<std::string_view> kOwned = {kConditionQueued, kConditionAdmitted,
                                              kConditionEvicted, kConditionNodesReplaced,
                                              kConditionShrunk};


// The flavor a gang's GPUs were admitted in (the one pods are pinned to), else any.
std::string MainFlavor(const std::map<std::string, std::string>& flavors) {
  auto gpu = flavors.find(std::string(kResourceGpu));
  if (gpu != flavors.end()) return gpu->second;
  return flavors.empty() ? "" : flavors.begin()->second;
}

// What the admitted flavors give the gang's pods, recorded in status.admission at admission so
// that a later edit of a NodeFlavor does not reach a running gang (its reserved nodes were chosen
// under these labels): the node labels and tolerations of every distinct flavor assigned, as
// the cycle's placement request merged them.
void RecordFlavors(const std::map<std::string, std::string>& assigned,
                   const std::vector<admission::ResourceFlavor>& flavors,
                   kube::TrainingJobAdmission& out) {
  auto& selector = out.node_selector.emplace();
  auto& tolerations = out.tolerations.emplace();
  std::set<std::string> seen;
  for (const auto& [resource, name] : assigned) {
    if (!seen.insert(name).second) continue;
    auto flavor = std::find_if(flavors.begin(), flavors.end(),
                               [&](const admission::ResourceFlavor& f) { return f.name == name; });
    if (flavor == flavors.end()) continue;
    selector.insert(flavor->node_labels.begin(), flavor->node_labels.end());
    for (const placement::Toleration& t : flavor->tolerations) {
      tolerations.push_back(kube::FromPlacementToleration(t));
    }
  }
}

bool Inadmissible(admission::PendingReason reason) {
  switch (reason) {
    case admission::PendingReason::kQuota:
    case admission::PendingReason::kTopology:
    case admission::PendingReason::kStrictFifoBlocked:
    case admission::PendingReason::kPlacementError:
      return false;
    default:
      return true;
  }
}

// Whether a job change can change an admission decision: not our own condition writes.
bool JobChangeMatters(const kube::RawObject& old, const kube::RawObject& now) {
  if (old.meta.generation != now.meta.generation ||
      old.meta.deletion_timestamp != now.meta.deletion_timestamp) {
    return true;
  }
  absl::StatusOr<kube::TrainingJob> a = kube::DecodeTrainingJob(old.json);
  absl::StatusOr<kube::TrainingJob> b = kube::DecodeTrainingJob(now.json);
  if (!a.ok() || !b.ok()) return true;
  return a->status.phase != b->status.phase ||
         a->status.admission.has_value() != b->status.admission.has_value() ||
         (a->status.admission && a->status.admission->replicas != b->status.admission->replicas);
}

// What the Admitted condition of a gang that changed size says: its admission as it is now.
// Whether a shrunk gang still borrows is not known here, so only a growth says it.
Admitted AdmittedNow(const kube::TrainingJobAdmission& admission,
                     const std::optional<kube::TrainingJobPlacement>& placement,
                     bool borrowing = false) {
  return {.cluster_queue = admission.cluster_queue,
          .flavor = admission.flavor,
          .pods = admission.replicas,
          .where = PlacedIn(placement),
          .borrowing = borrowing};
}

bool NodeChangeMatters(const kube::Node& a, const kube::Node& b) {
  return a.ready != b.ready || a.unschedulable != b.unschedulable || a.taints != b.taints ||
         !(a.meta.labels == b.meta.labels) || !(a.allocatable == b.allocatable);
}

}  // namespace

AdmissionController::AdmissionController(kube::Client& client, Informers& informers,
                                         placement::PlacementService& placement,
                                         kube::EventRecorder& events, OperatorMetrics& metrics,
                                         AdmissionControllerOptions options)
    : client_(client),
      informers_(informers),
      placement_(placement),
      events_(events),
      metrics_(metrics),
      options_(std::move(options)),
      queue_(kube::DefaultControllerRateLimiter()),
      faults_(
          [this](const std::string& name) { return informers_.nodes.Get(name); },
          [this](const std::string& flavor) {
            std::vector<placement::Toleration> tolerations;
            if (std::shared_ptr<const kube::RawObject> raw = informers_.flavors.Get(flavor)) {
              absl::StatusOr<admission::ResourceFlavor> f = DecodeResourceFlavor(raw->json);
              if (f.ok()) tolerations = f->tolerations;
            }
            return tolerations;
          },
          [this](const std::string& job) { return informers_.pods.ByIndex(kIndexByJob, job); },
          placement, options_.faults) {}

void AdmissionController::Trigger() { queue_.Add(kCycleKey); }

void AdmissionController::RegisterHandlers() {
  auto trigger = [this](const auto&) { Trigger(); };
  informers_.jobs.AddEventHandlers(
      {.on_add = trigger,
       .on_update =
           [this](const kube::RawObject& old, const kube::RawObject& now) {
             if (JobChangeMatters(old, now)) Trigger();
           },
       .on_delete = trigger});
  // Capacity frees when a pod finishes or goes. A rank on a cordoned node needs a spare when its
  // pod is being deleted (a drain's eviction) or a new pod is created for it there.
  auto on_cordoned_node = [this](const kube::Pod& pod) {
    const std::string_view pinned = PinnedNode(pod);
    if (pinned.empty()) return false;
    std::shared_ptr<const kube::Node> node = informers_.nodes.Get(std::string(pinned));
    return node != nullptr && node->unschedulable;
  };
  informers_.pods.AddEventHandlers(
      {.on_add =
           [this, on_cordoned_node](const kube::Pod& pod) {
             if (on_cordoned_node(pod)) Trigger();
           },
       .on_update =
           [this, on_cordoned_node](const kube::Pod& old, const kube::Pod& now) {
             if (old.phase != now.phase && (now.phase == "Succeeded" || now.phase == "Failed")) {
               Trigger();
             } else if (old.meta.deletion_timestamp.empty() &&
                        !now.meta.deletion_timestamp.empty() && on_cordoned_node(now)) {
               Trigger();
             }
           },
       .on_delete = trigger});
  informers_.nodes.AddEventHandlers(
      {.on_add = trigger,
       .on_update =
           [this](const kube::Node& old, const kube::Node& now) {
             if (!(old.meta.labels == now.meta.labels)) topology_check_due_ = true;
             if (NodeChangeMatters(old, now)) Trigger();
           },
       .on_delete = trigger});
  // Configuration objects: spec edits (generation) and deletion requests, not our own status or
  // finalizer writes.
  kube::EventHandlers<kube::RawObject> config{
      .on_add = trigger,
      .on_update =
          [this](const kube::RawObject& old, const kube::RawObject& now) {
            if (old.meta.generation != now.meta.generation || now.meta.generation == 0 ||
                old.meta.deletion_timestamp != now.meta.deletion_timestamp) {
              Trigger();
            }
          },
      .on_delete = trigger};
  informers_.cluster_queues.AddEventHandlers(config);
  informers_.local_queues.AddEventHandlers(config);
  informers_.flavors.AddEventHandlers(config);
  // A PriorityClass has no spec and no generation bump: value and globalDefault are top-level
  // fields, and moving globalDefault to another class changes which class (and priority, and
  // which scoped ResourceQuotas) every job without one has. Any update starts a cycle; the
  // classes change rarely.
  kube::EventHandlers<kube::RawObject> any_change{
      .on_add = trigger,
      .on_update = [this](const kube::RawObject&, const kube::RawObject&) { Trigger(); },
      .on_delete = trigger};
  informers_.priority_classes.AddEventHandlers(any_change);
  // A quota's limits decide what namespace_quota.h refuses, and its use (status.used) which
  // jobs it holds back: a use that went down may let one be admitted. Use going up, at every pod
  // create in the namespace, only holds back more, and is left to the next cycle.
  // A LimitRange's defaults decide whether a template's unset cpu or memory is refused (a core
  // object without a generation: any update).
  informers_.limit_ranges.AddEventHandlers(any_change);
  informers_.resource_quotas.AddEventHandlers(
      {.on_add = trigger,
       .on_update =
           [this](const kube::RawObject& old, const kube::RawObject& now) {
             absl::StatusOr<NamespaceQuota> before = DecodeResourceQuota(old.json);
             absl::StatusOr<NamespaceQuota> after = DecodeResourceQuota(now.json);
             if (before.ok() != after.ok() || (after.ok() && QuotaChangeMatters(*before, *after))) {
               Trigger();
             }
           },
       .on_delete = trigger});
  informers_.namespaces.AddEventHandlers(
      {.on_add = trigger,
       .on_update =
           [this](const kube::RawObject& old, const kube::RawObject& now) {
             if (!(old.meta.labels == now.meta.labels)) Trigger();
           },
       .on_delete = trigger});
}

void AdmissionController::Run(const kube::Cancellation& stop) {
  int id = stop.OnCancel([this] { queue_.ShutDown(); });
  ReleaseOrphans();
  Trigger();
  while (std::optional<std::string> key = queue_.Get()) {
    auto start = std::chrono::steady_clock::now();
    CycleStats stats = RunCycle();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics_.admission_cycle_duration_seconds.WithLabels({}).Observe(seconds);
    metrics_.admission_cycles_total.WithLabels({}).Inc();
    if (stats.admitted + stats.evicted + stats.resized + stats.released + stats.write_errors +
            stats.node_faults >
        0) {
      spdlog::info(
          "admission cycle: {} workloads, {} admitted, {} evicted, {} resized, {} pending, {} "
          "released, {} hit by node failures, {} write errors, {} Placement calls, {:.1f} ms",
          stats.workloads, stats.admitted, stats.evicted, stats.resized, stats.pending,
          stats.released, stats.node_faults, stats.write_errors, stats.calls.Total(),
          seconds * 1e3);
    } else {
      spdlog::debug("admission cycle: {} workloads, {} pending, {:.1f} ms", stats.workloads,
                    stats.pending, seconds * 1e3);
    }
    queue_.Done(*key);
    // Fold the events of the next interval into one cycle.
    if (stop.WaitFor(options_.min_cycle_interval)) break;
  }
  stop.Unregister(id);
}

void AdmissionController::ReleaseOrphans() {
  int released = 0;
  for (const auto& raw : informers_.jobs.List()) {
    absl::StatusOr<kube::TrainingJob> job = kube::DecodeTrainingJob(raw->json);
    if (!job.ok() || job->status.admission || kube::FinishedPhase(job->status.phase)) continue;
    absl::Status s = placement_.Release(raw->meta.Key());
    if (s.ok()) {
      ++released;
      spdlog::warn(
          "released the reservation of TrainingJob {}: its status holds no admission "
          "(an operator stopped between reserving and writing status)",
          raw->meta.Key());
    } else if (!absl::IsNotFound(s)) {
      spdlog::debug("release of {}: {}", raw->meta.Key(), s);
    }
  }
  if (released > 0) spdlog::info("released {} orphaned reservations", released);
}

void AdmissionController::WriteStatuses(std::vector<StatusWrite>& writes) {
  std::optional<kube::WriteGate::Hold> first;
  if (options_.write_gate != nullptr && !writes.empty()) first.emplace(*options_.write_gate);
  ParallelFor(writes.size(), options_.write_concurrency, [&](size_t i) {
    StatusWrite& w = writes[i];
    w.ok = ApplyJobStatus(*w.object, AdmissionStatusApply(*w.meta, w.status));
    if (w.ok && w.event) (void)events_.Record(JobReference(*w.meta), *w.event, w.reason, w.message);
  });
}

bool AdmissionController::ApplyJobStatus(const kube::RawObject& job, const std::string& body) {
  absl::StatusOr<std::string> result = client_.Patch(
      kube::TrainingJobs(), job.meta.namespace_, job.meta.name, kube::PatchType::kApply, body,
      {.field_manager = std::string(kAdmissionFieldManager), .force = true}, "status");
  metrics_.status_writes_total.WithLabels({"TrainingJob", WriteResult(result.status())}).Inc();
  if (!result.ok()) {
    spdlog::warn("TrainingJob {}: status write failed: {}", job.meta.Key(), result.status());
    return false;
  }
  return true;
}

bool AdmissionController::ApplyRequeueState(
    const kube::RawObject& job, const std::optional<kube::TrainingJobRequeueState>& state) {
  absl::StatusOr<std::string> result = client_.Patch(
      kube::TrainingJobs(), job.meta.namespace_, job.meta.name, kube::PatchType::kApply,
      RequeueStateApply(job.meta, state),
      {.field_manager = std::string(kRequeueFieldManager), .force = true}, "status");
  metrics_.status_writes_total.WithLabels({"TrainingJob", WriteResult(result.status())}).Inc();
  if (!result.ok()) {
    spdlog::warn("TrainingJob {}: requeue state write failed: {}", job.meta.Key(),
                 result.status());
  }
  return result.ok();
}

bool AdmissionController::ApplySuspend(const kube::RawObject& job) {
  absl::StatusOr<std::string> result = client_.Patch(
      kube::TrainingJobs(), job.meta.namespace_, job.meta.name, kube::PatchType::kApply,
      SuspendApply(job.meta), {.field_manager = std::string(kRequeueFieldManager), .force = true});
  if (!result.ok()) {
    spdlog::warn("TrainingJob {}: suspend at the requeuing limit failed: {}", job.meta.Key(),
                 result.status());
  }
  return result.ok();
}

bool AdmissionController::EvictIfNotReady(const kube::RawObject& raw, kube::TrainingJob& job,
                                          int64_t not_running_since, absl::Time now,
                                          CycleStats& stats,
                                          std::optional<absl::Time>& next_check) {
  const PodsReadyPolicy& policy = options_.pods_ready;
  const absl::Time due = absl::FromUnixSeconds(not_running_since + policy.timeout_seconds);
  if (now < due) {
    next_check = next_check ? std::min(*next_check, due) : due;
    return false;
  }
  const std::string key = raw.meta.Key();
  const std::vector<std::shared_ptr<const kube::Pod>> pods =
      informers_.pods.ByIndex(kIndexByJob, key);
  const std::vector<Condition> current = ReadConditions(raw.json);
  const int64_t admitted = AdmittedSince(current);
  const Condition* running = FindCondition(current, kConditionRunning);
  // Running and resizing: an elastic growth whose new ranks must come up, or a shrink whose
  // ranks above the new size are still stopping, which has nothing to wait for.
  const bool growing = running != nullptr && running->status == "True";
  const int32_t world = job.status.admission->replicas;
  const std::set<int32_t> running_ranks = RunningRanks(job, pods);
  if (growing && static_cast<int32_t>(running_ranks.size()) >= world) return false;
  std::string message = absl::StrCat(
      "the gang did not have every rank running within ", policy.timeout_seconds, "s of ",
      growing                        ? absl::StrCat("its growth to ", world, " ranks")
      : not_running_since > admitted ? std::string("when it stopped running")
                                     : std::string("its admission"),
      " (phalanx-operator --pods-ready-timeout-seconds): ",
      DescribeNotRunning(job, pods, 2, informers_.create_failures.Get(key)));
  if (job.elastic) {
    // The ranks that run may be enough: keep those (elastic.minReplicas at least) and drop the
    // others, as a node-fault shrink does, rather than evict the whole gang.
    std::string why;
    if (std::optional<FaultDecision> shrink =
            faults_.ShrinkToRunning(job, running_ranks, message, why)) {
      if (ApplyFault(raw, job, *shrink, Rfc3339(now), stats)) pods_ready_shrunk_[key] = now;
      return false;
    }
    if (growing) {
      // A gang that ran before its growth is not evicted for the growth: the shrink back to
      // the ranks that run is tried again shortly.
      spdlog::warn("TrainingJob {}: {}; not shrunk back yet{}", key, message, why);
      const absl::Time again = now + absl::Seconds(5);
      next_check = next_check ? std::min(*next_check, again) : again;
      return false;
    }
    absl::StrAppend(&message, why);
  }
  absl::StrAppend(&message, "; evicted");
  const int64_t now_s = absl::ToUnixSeconds(now);
  // A requeue state written for this eviction already (its status write failed after it):
  // keep it, so that one eviction counts once.
  kube::TrainingJobRequeueState state;
  const std::optional<kube::TrainingJobRequeueState>& before = job.status.requeue_state;
  const bool written = before && !before->requeue_at.empty() &&
                       ParseUnixSeconds(before->requeue_at) > now_s;
  state.count = written ? before->count : (before ? before->count : 0) + 1;
  const bool at_limit =
      policy.backoff_limit_count >= 0 && state.count > policy.backoff_limit_count;
  const int64_t delay = RequeueDelaySeconds(policy, state.count);
  if (written) {
    state.requeue_at = before->requeue_at;
  } else if (!at_limit) {
    state.requeue_at = Rfc3339(now + absl::Seconds(delay));
  }
  // The reservation first, as a suspension releases it: if a write below fails, the job still
  // shows admitted, and the next cycle does all of this again (a second release is NotFound).
  absl::Status released = placement_.Release(key);
  if (!released.ok() && !absl::IsNotFound(released)) {
    spdlog::warn("TrainingJob {}: release after the pods-ready timeout: {}", key, released);
    Trigger();
    return false;
  }
  if (at_limit) {
    absl::StrAppend(&message, " and suspended: requeue ", state.count,
                    " would pass --requeuing-backoff-limit-count ", policy.backoff_limit_count,
                    "; resume the job (spec.suspend: false) to queue it again");
  } else {
    absl::StrAppend(&message, ", requeue ", state.count, " at ", state.requeue_at,
                    " (backoff ", delay, "s)");
  }
  if (!ApplyRequeueState(raw, state)) {
    ++stats.write_errors;
    Trigger();
    return false;
  }
  AdmissionStatus status;
  const std::string reason(kReasonPodsReadyTimeout);
  status.conditions = MergeConditions(current, kOwned, EvictedUpdates(reason, message),
                                      Rfc3339(now), job.meta.generation);
  const std::optional<kube::TrainingJobAdmission> admission = job.status.admission;
  if (!ApplyJobStatus(raw, AdmissionStatusApply(job.meta, status))) {
    ++stats.write_errors;
    Trigger();
    return false;
  }
  job.status.admission.reset();
  job.status.placement.reset();
  job.status.requeue_state = state;
  in_flight_.Record(key, job.meta.uid, {.requeue_state = state});
  ++stats.evicted;
  metrics_.evicted_workloads_total.WithLabels({admission->cluster_queue, reason}).Inc();
  spdlog::warn("TrainingJob {}: {}", key, message);
  (void)events_.Record(JobReference(job.meta), kube::EventType::kWarning, reason, message);
  if (at_limit && !ApplySuspend(raw)) Trigger();  // retried by the next cycle
  return true;
}

void AdmissionController::ChargeNamespaceQuotas(
    const std::map<std::string, kube::TrainingJob>& jobs,
    std::map<std::string, std::vector<NamespaceQuota>>& quotas_by_namespace,
    std::string_view global_default, admission::Snapshot& snapshot) const {
  // Each job's pods: those that exist, and those an admitted one is still owed (the job
  // controller creates them after the admission), which status.used cannot count yet.
  std::map<std::string, std::vector<JobPods>> pods_by_namespace;
  for (const auto& [key, job] : jobs) {
    if (!quotas_by_namespace.contains(job.meta.namespace_)) continue;
    const auto pods = informers_.pods.ByIndex(kIndexByJob, key);
    const int32_t existing = LivePods(pods);
    const int32_t admitted =
        job.status.admission && !job.suspend ? job.status.admission->replicas : 0;
    // A rank whose pod succeeded is done: no pod is created for it again (successPolicy All
    // waits for the others), so it is not owed.
    pods_by_namespace[job.meta.namespace_].push_back(
        {.job = &job,
         .existing = existing,
         .owed = std::max(0, admitted - existing - SucceededPods(pods))});
  }
  for (auto& [ns, quotas] : quotas_by_namespace) {
    if (auto pods = pods_by_namespace.find(ns); pods != pods_by_namespace.end()) {
      ChargeJobPods(pods->second, quotas, global_default);
    }
    AddQuotaBudgets(quotas, snapshot.budgets);
  }
}

CycleStats AdmissionController::RunCycle() {
  CycleStats stats;
  const absl::Time now_time = absl::Now();
  const std::string now = Rfc3339(now_time);
  admission::Snapshot snapshot;
  snapshot.now = absl::ToUnixSeconds(now_time);
  snapshot.fair_sharing = options_.fair_sharing;
  faults_.BeginCycle();

  auto decode_all = [](const auto& informer, auto decode, auto& out, std::string_view kind) {
    for (const auto& raw : informer.List()) {
      auto decoded = decode(raw->json);
      if (decoded.ok()) {
        out.push_back(*std::move(decoded));
      } else {
        spdlog::warn("{} {}: {}", kind, raw->meta.Key(), decoded.status());
      }
    }
  };
  decode_all(informers_.flavors, DecodeResourceFlavor, snapshot.flavors, "NodeFlavor");
  decode_all(informers_.cluster_queues, DecodeClusterQueue, snapshot.cluster_queues,
             "ClusterTrainingQueue");
  decode_all(informers_.local_queues, DecodeLocalQueue, snapshot.local_queues, "TrainingQueue");
  decode_all(informers_.namespaces, DecodeNamespace, snapshot.namespaces, "Namespace");
  std::vector<PriorityClass> priority_classes;
  decode_all(informers_.priority_classes, DecodePriorityClass, priority_classes, "PriorityClass");
  for (const PriorityClass& pc : priority_classes) {
    snapshot.priority_classes.emplace(pc.name, pc.value);
  }
  // What the API server gives the pods of a job that names no class, so also the job's own
  // class (an admitted one with live pods keeps theirs instead: KeepPodsPriority below).
  const std::string global_default = GlobalDefaultPriorityClass(priority_classes);

  // Each namespace's ResourceQuotas, for the jobs not admitted yet.
  std::vector<NamespaceQuota> quotas;
  decode_all(informers_.resource_quotas, DecodeResourceQuota, quotas, "ResourceQuota");
  // Each job is seen with its namespace's LimitRange defaults applied (ApplyLimitRanges), as its
  // pods will be: by name, the order in which the first of two naming a resource holds.
  std::vector<LimitRangeDefaults> limit_ranges;
  decode_all(informers_.limit_ranges, DecodeLimitRange, limit_ranges, "LimitRange");
  std::sort(
      limit_ranges.begin(), limit_ranges.end(),
      [](const LimitRangeDefaults& a, const LimitRangeDefaults& b) { return a.name < b.name; });
  std::map<std::string, std::vector<NamespaceQuota>> quotas_by_namespace;
  // By name: the first that refuses or holds a job back is named, the same one every cycle.
  std::sort(quotas.begin(), quotas.end(),
            [](const NamespaceQuota& a, const NamespaceQuota& b) { return a.name < b.name; });
  for (NamespaceQuota& q : quotas) {
    quotas_by_namespace[q.namespace_name].push_back(std::move(q));
  }

  // The jobs, with the writes the informer has not caught up with laid over them.
  std::map<std::string, std::shared_ptr<const kube::RawObject>> objects;
  std::map<std::string, kube::TrainingJob> jobs;
  std::vector<std::string> to_release;   // admitted but suspended
  std::vector<std::string> suspended;    // not admitted and suspended
  std::vector<admission::PendingDecision> invalid;
  std::map<std::string, DecodedJob> decoded;  // replaces decoded_jobs_ after the loop
  std::optional<absl::Time> pods_ready_check;  // when the next gang's pods-ready timeout ends
  // Workloads (their index in snapshot.workloads) to check against their namespace's quotas,
  // and whether a pods-ready shrink caps an elastic one's growth.
  std::vector<std::pair<size_t, bool>> quota_checked;
  // Node labels changed since the last look: are admitted gangs still where they were placed?
  const bool check_topology = topology_check_due_.exchange(false);
  std::map<std::string, std::string> drift_now;
  auto node_lookup = [this](const std::string& name) { return informers_.nodes.Get(name); };
  for (const auto& raw : informers_.jobs.List()) {
    const std::string key = raw->meta.Key();
    DecodedJob& entry = decoded[key];
    if (auto last = decoded_jobs_.find(key);
        last != decoded_jobs_.end() && last->second.raw == raw) {
      entry = std::move(last->second);
    } else {
      entry.raw = raw;
      entry.job = kube::DecodeTrainingJob(raw->json);
      // An edit the decoder refuses leaves the job as it was last read: an admitted one stays
      // charged to its queue (audit 2026-12-01, F1: it dropped out of the queue's usage, and
      // another job was admitted past quota). The API server's schema refuses such numbers
      // now; this covers objects stored before, and any other decode failure.
      if (!entry.job.ok() && last != decoded_jobs_.end() && last->second.job.ok() &&
          last->second.job->meta.uid == raw->meta.uid) {
        const std::string why(entry.job.status().message());
        spdlog::warn(
            "TrainingJob {}: its last edit cannot be read ({}); it is kept as it was "
            "read before",
            key, why);
        (void)events_.Record(JobReference(raw->meta), kube::EventType::kWarning, "InvalidSpec",
                             absl::StrCat("the last edit cannot be read: ", why,
                                          "; phalanx-operator keeps the job as it was before it"));
        entry.job = last->second.job;
      }
      const std::vector<Condition> conditions = ReadConditions(raw->json);
      entry.admitted_since = AdmittedSince(conditions);
      entry.not_running_since = NotRunningSince(conditions);
      const Condition* shrunk = FindCondition(conditions, kConditionShrunk);
      entry.pods_ready_shrunk = shrunk != nullptr && shrunk->status == "True" &&
                                shrunk->reason == kReasonPodsReadyTimeout;
    }
    absl::StatusOr<kube::TrainingJob> job = entry.job;  // a copy: in-flight writes go over it
    if (!job.ok()) {
      spdlog::warn("TrainingJob {}: {}", key, job.status());
      const UnreadableJob unread = ReadUnreadableJob(raw->json);
      if (unread.admitted || !raw->meta.deletion_timestamp.empty() ||
          kube::FinishedPhase(unread.phase)) {
        continue;
      }
      // Not admitted: pending in its queue with reason Invalid and the decoder's message, which
      // names the field, like a job whose spec the core refuses (audit 2026-12-01, F2: it was
      // given no status, condition or event at all).
      kube::TrainingJob shell;
      shell.meta = raw->meta;
      shell.queue_name = unread.queue_name;
      snapshot.workloads.push_back(InvalidWorkload(shell, std::string(job.status().message())));
      objects[key] = raw;
      jobs.emplace(key, std::move(shell));
      continue;
    }
    in_flight_.Apply(key, *job);
    ApplyLimitRanges(limit_ranges, *job);
    if (!job->meta.deletion_timestamp.empty() || kube::FinishedPhase(job->status.phase)) continue;
    objects[key] = raw;
    if (job->suspend) {
      (job->status.admission ? to_release : suspended).push_back(key);
      jobs.emplace(key, *std::move(job));
      continue;
    }
    if (std::optional<FaultDecision> fault = faults_.Respond(*job, now_time)) {
      if (!ApplyFault(*raw, *job, *fault, now, stats)) continue;
    }
    if (check_topology && job->status.admission) {
      if (std::string drift = TopologyDrift(*job, node_lookup); !drift.empty()) {
        if (auto last = topology_drift_.find(key);
            last == topology_drift_.end() || last->second != drift) {
          const std::string message = absl::StrCat(
              drift, "; the gang keeps running where it is (suspend and resume the job to ",
              "place it again)");
          spdlog::warn("TrainingJob {}: {}", key, message);
          (void)events_.Record(JobReference(job->meta), kube::EventType::kWarning,
                               std::string(kReasonTopologyChanged), message);
        }
        drift_now[key] = std::move(drift);
      }
    }
    if (!job->status.admission) pods_ready_shrunk_.erase(key);
    int64_t not_running_since = entry.not_running_since;
    if (auto shrunk = pods_ready_shrunk_.find(key);
        not_running_since > 0 && shrunk != pods_ready_shrunk_.end()) {
      // The clock starts again at a pods-ready shrink the informer may not show yet.
      not_running_since = std::max(not_running_since, absl::ToUnixSeconds(shrunk->second));
    }
    if (job->status.admission && options_.pods_ready.timeout_seconds > 0 &&
        not_running_since > 0 &&
        EvictIfNotReady(*raw, *job, not_running_since, now_time, stats, pods_ready_check) &&
        job->status.requeue_state->requeue_at.empty()) {
      continue;  // suspended at the requeuing limit: the next cycle sees spec.suspend
    }
    if (!job->status.admission && job->status.requeue_state &&
        job->status.requeue_state->requeue_at.empty()) {
      // At the requeuing limit, but the suspension did not land: try again.
      if (!ApplySuspend(*raw)) Trigger();
      continue;
    }
    if (!job->status.admission && informers_.template_checks.enabled()) {
      // Counted once the API server has said what it makes of the job's pods (the job
      // controller's dry run, template_checks.h, which triggers a cycle): a refused template
      // waits, reason Invalid, and takes no quota.
      std::optional<TemplateChecks::Verdict> check =
          informers_.template_checks.Get(key, job->meta.uid, job->meta.generation);
      if (!check.has_value()) {
        // A job of a sweep whose first jobs' dry run passed takes that verdict here, rather than
        // wait for the job controller to reach it (the gate cost 5-14 % of the bench's Phalanx
        // phase with shared verdicts; docs/benchmarks.md).
        if (!entry.template_shape) entry.template_shape = TemplateShape(*entry.job);
        if (informers_.template_checks.TakeShared(key, job->meta.uid, job->meta.generation,
                                                  *entry.template_shape,
                                                  now_time) == TemplateChecks::Shared::kTaken) {
          metrics_.template_verdicts_shared_total.WithLabels({}).Inc();
        }
        check = informers_.template_checks.Get(key, job->meta.uid, job->meta.generation);
        if (!check.has_value()) continue;
      }
      if (check->refused) {
        snapshot.workloads.push_back(InvalidWorkload(*job, check->message));
        jobs.emplace(key, *std::move(job));
        continue;
      }
    }
    // Admitted since its Admitted condition turned True; admitted by this operator and not
    // yet seen with that condition (a write the informer has not caught up with): just now.
    const int64_t admitted_at =
        !job->status.admission ? 0 : entry.admitted_since > 0 ? entry.admitted_since : snapshot.now;
    absl::StatusOr<admission::Workload> workload =
        WorkloadFromJob(*job, admitted_at, options_.allow_job_priority, global_default);
    // Only for a job without a priority of its own: the pod lookup is per admitted job and cycle.
    if (const bool explicit_priority = job->priority.has_value() && options_.allow_job_priority;
        workload.ok() && job->status.admission && !HasOwnPriority(*job, explicit_priority)) {
      KeepPodsPriority(*job, informers_.pods.ByIndex(kIndexByJob, key), explicit_priority,
                       *workload);
    }
    if (!workload.ok() && !job->status.admission) {
      // Counted as its queue's pending workload, as Kueue counts an inadmissible one: the
      // core resolves the queue and keeps it pending with this message.
      snapshot.workloads.push_back(InvalidWorkload(*job, std::string(workload.status().message())));
    } else if (!workload.ok()) {
      invalid.push_back({key, "", admission::PendingReason::kInvalid,
                         std::string(workload.status().message())});
    } else {
      // Checked against its namespace's quotas below, once every job's pods are counted.
      quota_checked.push_back({snapshot.workloads.size(),
                               job->status.admission && workload->elastic &&
                                   (entry.pods_ready_shrunk || pods_ready_shrunk_.contains(key))});
      snapshot.workloads.push_back(*std::move(workload));
    }
    jobs.emplace(key, *std::move(job));
  }
  ChargeNamespaceQuotas(jobs, quotas_by_namespace, global_default, snapshot);
  for (const auto& [index, pods_ready_shrunk] : quota_checked) {
    admission::Workload& workload = snapshot.workloads[index];
    const kube::TrainingJob& job = jobs.at(workload.key);
    // A job whose every pod a LimitRange's max or min refuses waits, named, for a fix of either
    // (Kueue's rule); an admitted one is left alone (its pods were created already).
    if (!job.status.admission) {
      workload.invalid = LimitRangeRefusal(limit_ranges, job);
      if (!workload.invalid.empty()) continue;
    }
    if (auto quotas = quotas_by_namespace.find(job.meta.namespace_);
        quotas != quotas_by_namespace.end()) {
      // The smallest gang it could be admitted at: never, if the limits cannot hold it (it
      // waits for a fix); not now, if what the namespace uses, and the pods admitted gangs are
      // still owed, leave too little room (it waits for the namespace to use less, re-checked
      // every cycle). Admitted jobs are left alone: their own pods are in that use.
      const int32_t pods = workload.elastic ? workload.elastic->min : workload.count;
      if (!job.status.admission) {
        workload.invalid = QuotaRefusal(job, pods, quotas->second, global_default);
        if (workload.invalid.empty()) {
          workload.held = QuotaShortfall(job, pods, quotas->second, global_default);
        }
      }
      // An elastic job is admitted, or grows, only as far as the room lets its pods be
      // created (it grows further when the namespace uses less).
      if (workload.elastic && workload.invalid.empty() && workload.held.empty()) {
        workload.elastic->max = ElasticSizeWithRoom(
            job, *workload.elastic, job.status.admission ? job.status.admission->replicas : 0,
            quotas->second, global_default);
      }
      // What the jobs admitted before it in this cycle take of the same room, the core counts.
      workload.budget_per_pod = BudgetPerPod(job, quotas->second, global_default);
    }
    if (pods_ready_shrunk) {
      // Shrunk to the ranks that ran: growing back would bring the ranks that could not.
      workload.elastic->max = std::min(workload.elastic->max, job.status.admission->replicas);
    }
  }
  decoded_jobs_ = std::move(decoded);  // jobs gone from the informer leave the cache
  if (check_topology) topology_drift_ = std::move(drift_now);
  // A node under a gang went NotReady and is within its grace: the job is told when its ranks
  // will move, once per episode.
  for (const NodeFaultResponder::Notice& notice : faults_.notices()) {
    if (auto job = jobs.find(notice.job); job != jobs.end()) {
      (void)events_.Record(JobReference(job->second.meta), kube::EventType::kWarning,
                           std::string(FaultReason(NodeFaultKind::kNotReady)), notice.message);
    }
  }
  in_flight_.Retain(decoded_jobs_);
  std::erase_if(pods_ready_shrunk_,
                [&](const auto& entry) { return !decoded_jobs_.contains(entry.first); });
  stats.workloads = static_cast<int>(snapshot.workloads.size());

  admission::CycleOptions cycle_options = options_.cycle;
  cycle_options.cache = &cache_;
  admission::CycleResult result = admission::RunAdmissionCycle(snapshot, placement_, cycle_options);
  stats.calls = result.calls;
  metrics_.placement_calls_total.WithLabels({"ReserveBatch"}).Inc(result.calls.reserve_batch);
  metrics_.placement_calls_total.WithLabels({"Reserve"}).Inc(result.calls.reserve);
  metrics_.placement_calls_total.WithLabels({"PlanPreemption"}).Inc(result.calls.plan_preemption);
  metrics_.placement_calls_total.WithLabels({"EstimateStart"}).Inc(result.calls.estimate_start);
  metrics_.placement_calls_total.WithLabels({"Release"}).Inc(result.calls.release);
  metrics_.placement_calls_total.WithLabels({"Resize"}).Inc(result.calls.resize);
  for (const auto& [method, count] : faults_.calls()) {
    metrics_.placement_calls_total.WithLabels({method}).Inc(count);
  }

  auto conditions_of = [&](const std::string& key) { return ReadConditions(objects[key]->json); };

  // --- admissions: reserved already; persist, or give the reservation back -------------------
  // Written in parallel (WriteStatuses); what they decided is then recorded in order.
  std::vector<StatusWrite> written(result.admissions.size());
  // Since when each waited: from its conditions as they were, read once here.
  std::vector<int64_t> waited_since(result.admissions.size());
  for (size_t i = 0; i < result.admissions.size(); ++i) {
    const admission::AdmissionDecision& a = result.admissions[i];
    written[i].object = objects.at(a.workload).get();
    written[i].meta = &jobs.at(a.workload).meta;
    written[i].event = kube::EventType::kNormal;
    written[i].reason = std::string(kReasonAdmitted);
    AdmissionStatus& status = written[i].status;
    status.admission = kube::TrainingJobAdmission{
        .cluster_queue = a.cluster_queue, .flavor = MainFlavor(a.flavors), .replicas = a.count};
    RecordFlavors(a.flavors, snapshot.flavors, *status.admission);
    status.placement = PlacementStatus(a.placement);
    written[i].message = AdmittedMessage(
        {.cluster_queue = a.cluster_queue,
         .flavor = status.admission->flavor,
         .pods = a.count,
         .where = a.placement.domain.path.empty() ? "" : a.placement.domain.ToString(),
         .borrowing = a.borrowing,
         .preempted = a.preempted});
    const std::vector<Condition> current = conditions_of(a.workload);
    waited_since[i] = QueuedSince(current, written[i].meta->creation_timestamp.str(),
                                  snapshot.now);
    // An eviction, replaced nodes or a shrink of an earlier admission no longer hold.
    std::vector<Condition> updates =
        Deactivate(current, {kConditionEvicted, kConditionNodesReplaced, kConditionShrunk},
                   kReasonAdmitted);
    updates.push_back({.type = std::string(kConditionQueued), .status = "False",
                       .reason = "Admitted", .message = written[i].message});
    updates.push_back({.type = std::string(kConditionAdmitted), .status = "True",
                       .reason = "Admitted", .message = written[i].message});
    status.conditions =
        MergeConditions(current, kOwned, updates, now, written[i].meta->generation);
  }
  WriteStatuses(written);
  for (size_t i = 0; i < result.admissions.size(); ++i) {
    const admission::AdmissionDecision& a = result.admissions[i];
    const kube::TrainingJob& job = jobs.at(a.workload);
    if (!written[i].ok) {
      ++stats.write_errors;
      (void)placement_.Release(a.workload);  // retried from scratch next cycle
      Trigger();
      continue;
    }
    in_flight_.Record(a.workload, job.meta.uid,
                      {written[i].status.admission, written[i].status.placement});
    ++stats.admitted;
    metrics_.admitted_workloads_total.WithLabels({a.cluster_queue}).Inc();
    // From when it last started waiting (created, or queued again after an eviction), as
    // Kueue's kueue_admission_wait_time_seconds and the oldest-pending gauge below.
    metrics_.admission_wait_time_seconds.WithLabels({a.cluster_queue})
        .Observe(std::max<double>(0, snapshot.now - waited_since[i]));
    metrics_.placement_level_total
        .WithLabels({a.placement.domain.level.empty() ? "cluster" : a.placement.domain.level})
        .Inc();
  }

  // --- preemptions: the victims' reservations are released or shrunk already ---------------
  for (const admission::PreemptionDecision& p : result.preemptions) {
    auto it = jobs.find(p.victim);
    if (it == jobs.end()) continue;
    const kube::TrainingJob& job = it->second;
    // A stopPolicy drain is an eviction without a preemptor: its reason names the stopped
    // queue (Kueue's ClusterQueueStopped / LocalQueueStopped); every other one is Preempted.
    const bool drained = p.reason == admission::PreemptionReason::kClusterQueueStopped ||
                         p.reason == admission::PreemptionReason::kLocalQueueStopped;
    const std::string reason = drained ? std::string(admission::ToString(p.reason)) : "Preempted";
    AdmissionStatus status;
    if (p.new_count > 0 && job.status.admission && job.status.placement) {
      status.admission = job.status.admission;
      status.admission->replicas = p.new_count;
      status.placement = job.status.placement;
      status.placement->nodes.resize(std::min<size_t>(status.placement->nodes.size(),
                                                      static_cast<size_t>(p.new_count)));
      // The same conditions as a shrink after node failures: Shrunk=True says why.
      status.conditions = MergeConditions(
          conditions_of(p.victim), kOwned,
          ShrunkUpdates(AdmittedNow(*status.admission, status.placement, p.borrowing),
                        job.status.admission->replicas, reason, p.message),
          now, job.meta.generation);
    } else {
      status.conditions = MergeConditions(conditions_of(p.victim), kOwned,
                                          EvictedUpdates(reason, p.message), now,
                                          job.meta.generation);
    }
    const bool ok = ApplyJobStatus(*objects[p.victim], AdmissionStatusApply(job.meta, status));
    // Even if the write failed the reservation is gone: treat the job as the decision left it,
    // and write again next cycle (the Trigger) from the overlay.
    in_flight_.Record(p.victim, job.meta.uid, {status.admission, status.placement});
    if (!ok) {
      ++stats.write_errors;
      Trigger();
    }
    if (!drained) {
      metrics_.preempted_workloads_total
          .WithLabels({p.preemptor_cluster_queue, std::string(admission::ToString(p.reason))})
          .Inc();
    }
    if (p.new_count > 0) {
      ++stats.resized;
      metrics_.resize_events_total.WithLabels({"shrink"}).Inc();
      (void)events_.Record(JobReference(job.meta), kube::EventType::kNormal, "Shrunk", p.message);
    } else {
      ++stats.evicted;
      metrics_.evicted_workloads_total.WithLabels({p.cluster_queue, reason}).Inc();
      (void)events_.Record(JobReference(job.meta), kube::EventType::kWarning, reason, p.message);
    }
  }

  // --- elastic growth ----------------------------------------------------------------------
  for (const admission::GrowthDecision& g : result.growths) {
    const kube::TrainingJob& job = jobs.at(g.workload);
    AdmissionStatus status;
    status.admission = job.status.admission;
    if (!status.admission) continue;
    status.admission->replicas = g.new_count;
    status.placement = PlacementStatus(g.placement);
    const std::vector<Condition> current = conditions_of(g.workload);
    // A Shrunk=True from before is history once the gang grows again: False, "Previously: ...".
    std::vector<Condition> updates = Deactivate(current, {kConditionShrunk}, kReasonGrown);
    for (Condition& c : ResizedAdmission(
             AdmittedNow(*status.admission, status.placement, g.borrowing), g.old_count)) {
      updates.push_back(std::move(c));
    }
    status.conditions = MergeConditions(current, kOwned, updates, now, job.meta.generation);
    if (!ApplyJobStatus(*objects[g.workload], AdmissionStatusApply(job.meta, status))) {
      ++stats.write_errors;
      (void)placement_.Resize(g.workload, g.old_count);
      continue;
    }
    in_flight_.Record(g.workload, job.meta.uid, {status.admission, status.placement});
    ++stats.resized;
    metrics_.resize_events_total.WithLabels({"grow"}).Inc();
    (void)events_.Record(
        JobReference(job.meta), kube::EventType::kNormal, kReasonGrown,
        GrownMessage(g.old_count, g.new_count,
                     g.placement.domain.path.empty() ? "" : g.placement.domain.ToString()));
  }

  // An elastic job held at its size is told by whom once, until the hold ends or changes.
  std::map<std::string, std::string> holds;
  for (const admission::GrowthHold& h : result.growth_holds) {
    auto job = jobs.find(h.workload);
    if (job == jobs.end()) continue;
    auto last = growth_holds_.find(h.workload);
    if (last == growth_holds_.end() || last->second != h.message) {
      (void)events_.Record(JobReference(job->second.meta), kube::EventType::kNormal,
                           kReasonGrowthHeld, h.message);
    }
    holds[h.workload] = h.message;
  }
  growth_holds_ = std::move(holds);

  // --- suspended jobs -----------------------------------------------------------------------
  const std::string suspended_message = "the job is suspended (spec.suspend: true)";
  for (const std::string& key : to_release) {
    const kube::TrainingJob& job = jobs.at(key);
    absl::Status released = placement_.Release(key);
    if (!released.ok() && !absl::IsNotFound(released)) {
      spdlog::warn("TrainingJob {}: release on suspend: {}", key, released);
      Trigger();
      continue;
    }
    AdmissionStatus status;
    status.conditions = MergeConditions(
        conditions_of(key), kOwned,
        {{.type = std::string(kConditionQueued), .status = "False", .reason = "Suspended",
          .message = suspended_message},
         {.type = std::string(kConditionAdmitted), .status = "False", .reason = "Suspended",
          .message = suspended_message}},
        now, job.meta.generation);
    if (!ApplyJobStatus(*objects[key], AdmissionStatusApply(job.meta, status))) {
      ++stats.write_errors;
      Trigger();
    }
    in_flight_.Record(key, job.meta.uid, {});
    ++stats.released;
    metrics_.evicted_workloads_total.WithLabels({job.status.admission->cluster_queue, "Suspended"})
        .Inc();
    (void)events_.Record(JobReference(job.meta), kube::EventType::kNormal, "Suspended",
                         "reservation released and pods deleted: " + suspended_message);
  }

  // --- pending: the Queued condition says why, written only when it changes; its Event only
  // when the reason changes (QueuedEventDue). Decided here, written below write_concurrency at a
  // time (a held queue's 1,000 new jobs are 1,000 writes) -------------------------------------
  std::vector<StatusWrite> queued_writes;
  // Returns since when the job has been queued (QueuedSince of the conditions it had).
  auto write_queued = [&](const std::string& key, std::string_view status_value,
                          std::string_view reason, const std::string& message,
                          bool warn) -> int64_t {
    const kube::TrainingJob& job = jobs.at(key);
    std::vector<Condition> current = conditions_of(key);
    const int64_t since = QueuedSince(current, std::string(job.meta.creation_timestamp), snapshot.now);
    std::vector<Condition> updates = {{.type = std::string(kConditionQueued),
                                       .status = std::string(status_value),
                                       .reason = std::string(reason),
                                       .message = message,
                                       .observed_generation = job.meta.generation}};
    // Resumed and waiting again: the suspension's Admitted=False no longer says why it is not
    // admitted (audit session 35, F7); the Queued condition does.
    if (const Condition* admitted = FindCondition(current, kConditionAdmitted);
        status_value == "True" && !job.suspend && admitted != nullptr &&
        admitted->status == "False" && admitted->reason == "Suspended") {
      updates.push_back({.type = std::string(kConditionAdmitted),
                         .status = "False",
                         .reason = "Resumed",
                         .message = "resumed (spec.suspend: false) and waiting for admission: "
                                    "the Queued condition says why",
                         .observed_generation = job.meta.generation});
    }
    std::vector<Condition> wanted = updates;
    for (const Condition& c : current) {
      if (std::find(kOwned.begin(), kOwned.end(), c.type) == kOwned.end()) continue;
      if (std::none_of(updates.begin(), updates.end(),
                       [&](const Condition& u) { return u.type == c.type; })) {
        wanted.push_back(c);
      }
    }
    if (SameConditions(current, kOwned, wanted)) return since;
    StatusWrite& w = queued_writes.emplace_back();
    w.object = objects.at(key).get();
    w.meta = &job.meta;
    w.status.conditions = MergeConditions(current, kOwned, updates, now, job.meta.generation);
    if (QueuedEventDue(FindCondition(current, kConditionQueued), status_value, reason)) {
      w.event = warn ? kube::EventType::kWarning : kube::EventType::kNormal;
    }
    w.reason = std::string(reason);
    w.message = message;
    return since;
  };
  std::map<std::string, std::pair<int, int>> pending_by_cq;  // active, inadmissible
  std::map<std::string, double> oldest_pending;               // cluster queue -> since
  for (const admission::PendingDecision& p : result.pending) {
    ++stats.pending;
    double since;
    if (p.reason == admission::PendingReason::kRequeueBackoff) {
      // The eviction's Queued condition says why and until when; nothing to add to it.
      since = static_cast<double>(QueuedSince(
          conditions_of(p.workload), jobs.at(p.workload).meta.creation_timestamp.str(),
          snapshot.now));
    } else {
      // A job that cannot be admitted until someone changes something, or that the scheduler
      // could not be asked about, is a warning; one waiting its turn is not, nor one waiting
      // for its namespace's pods to use less of a ResourceQuota (inadmissible all the same:
      // no room in its ClusterTrainingQueue would let it in).
      const bool warn =
          (Inadmissible(p.reason) && p.reason != admission::PendingReason::kNamespaceQuota) ||
          p.reason == admission::PendingReason::kPlacementError;
      since = static_cast<double>(
          write_queued(p.workload, "True", admission::ToString(p.reason), p.message, warn));
    }
    if (!p.cluster_queue.empty()) {
      auto& counts = pending_by_cq[p.cluster_queue];
      (Inadmissible(p.reason) ? counts.second : counts.first)++;
      auto [it, inserted] = oldest_pending.emplace(p.cluster_queue, since);
      if (!inserted) it->second = std::min(it->second, since);
    }
  }
  for (const admission::PendingDecision& p : invalid) {
    ++stats.pending;
    write_queued(p.workload, "True", admission::ToString(p.reason), p.message, true);
  }
  for (const std::string& key : suspended) {
    write_queued(key, "False", "Suspended", suspended_message, false);
  }
  // A suspension resets the requeue count, as Kueue resets a deactivated workload's.
  for (const auto* keys : {&suspended, &to_release}) {
    for (const std::string& key : *keys) {
      if (jobs.at(key).status.requeue_state && !ApplyRequeueState(*objects.at(key), std::nullopt)) {
        ++stats.write_errors;
      }
    }
  }

  WriteStatuses(queued_writes);
  for (const StatusWrite& w : queued_writes) stats.write_errors += w.ok ? 0 : 1;

  ReportObjectErrors(result.errors);

  admission::ApplyDecisions(result, snapshot);
  WriteQueueStatuses(snapshot, result.pending, now);
  ReconcileFinalizers(snapshot);
  std::set<std::string> queue_names;
  for (const admission::ClusterQueue& cq : snapshot.cluster_queues) {
    auto counts = pending_by_cq[cq.name];
    metrics_.pending_workloads.WithLabels({cq.name, "active"}).Set(counts.first);
    metrics_.pending_workloads.WithLabels({cq.name, "inadmissible"}).Set(counts.second);
    queue_names.insert(cq.name);
  }
  metrics_.pending_workloads.RemoveIf(
      [&](const std::vector<std::string>& labels) { return !queue_names.contains(labels[0]); });
  metrics_.oldest_pending.Replace(std::move(oldest_pending));
  if (result.requeue_at) {
    queue_.AddAfter(kCycleKey, absl::Seconds(std::max<int64_t>(1, *result.requeue_at - snapshot.now)));
  }
  if (pods_ready_check) {
    queue_.AddAfter(kCycleKey, std::max(absl::Milliseconds(100), *pods_ready_check - now_time));
  }
  if (std::optional<absl::Time> at = faults_.next_check()) {
    queue_.AddAfter(kCycleKey, std::max(absl::Milliseconds(100), *at - now_time));
  }
  // No informer event follows a Placement call that failed (phalanx-scheduler restarting or
  // unreachable): retry with backoff, or those jobs would wait for an unrelated change. The
  // backoff is capped because a request the scheduler rejects (an unknown topology level) fails
  // every cycle too, and must not slow the recovery from the next outage.
  bool placement_failed = false;
  bool cannot_be_placed = false;
  for (const admission::PendingDecision& p : result.pending) {
    if (p.reason == admission::PendingReason::kPlacementError) {
      metrics_.placement_errors_total.WithLabels({}).Inc();
    }
    placement_failed |= p.reason == admission::PendingReason::kPlacementError;
    cannot_be_placed |= p.reason == admission::PendingReason::kTopology;
  }
  if (cannot_be_placed) queue_.AddAfter(kCycleKey, kCannotBePlacedRecheck);
  if (placement_failed) {
    queue_.AddRateLimited(kCycleKey);
    queue_.AddAfter(kCycleKey, kMaxPlacementRetryDelay);  // the sooner of the two wins
  } else {
    queue_.Forget(kCycleKey);
  }
  return stats;
}

bool AdmissionController::ApplyFault(const kube::RawObject& raw, kube::TrainingJob& job,
                                     const FaultDecision& fault, const std::string& now,
                                     CycleStats& stats) {
  const std::string key = raw.meta.Key();
  const std::string& reason = fault.reason;
  const bool evicted = fault.action == FaultAction::kEvicted;
  // Replaced and shrunk jobs stay admitted: one condition says what happened, and its event.
  const std::string_view kept_condition =
      fault.action == FaultAction::kReplaced ? kConditionNodesReplaced : kConditionShrunk;
  std::vector<Condition> updates;
  if (evicted) {
    updates = EvictedUpdates(reason, fault.message);
  } else if (fault.action == FaultAction::kShrunk && fault.admission && job.status.admission) {
    updates = ShrunkUpdates(AdmittedNow(*fault.admission, fault.placement),
                            job.status.admission->replicas, reason, fault.message);
  } else {
    updates.push_back({.type = std::string(kept_condition),
                       .status = "True",
                       .reason = reason,
                       .message = fault.message});
  }
  AdmissionStatus status{.admission = fault.admission, .placement = fault.placement};
  std::vector<Condition> current = ReadConditions(raw.json);
  const bool pods_ready = reason == kReasonPodsReadyTimeout;
  if (pods_ready) {
    // Shrunk's lastTransitionTime restarts the pods-ready clock (NotRunningSince): a new one
    // even when the condition was True already.
    std::erase_if(current, [](const Condition& c) { return c.type == kConditionShrunk; });
  }
  status.conditions = MergeConditions(current, kOwned, updates, now, job.meta.generation);
  const std::optional<kube::TrainingJobAdmission> before = job.status.admission;
  // The scheduler holds the decision already: the rest of this cycle must see it.
  job.status.admission = fault.admission;
  job.status.placement = fault.placement;
  ++stats.node_faults;
  if (!ApplyJobStatus(raw, AdmissionStatusApply(job.meta, status))) {
    // The next cycle finds the failed nodes in the old status again and asks again, which the
    // scheduler answers with what it holds now: the write is retried, nothing moves twice.
    ++stats.write_errors;
    Trigger();
    return !evicted;
  }
  in_flight_.Record(key, job.meta.uid, {fault.admission, fault.placement});
  const std::string action(ActionName(fault.action));
  if (!pods_ready) metrics_.node_failures_total.WithLabels({action, reason}).Inc();
  for (const auto& [node_reason, count] : fault.nodes_replaced) {
    metrics_.node_replacements_total.WithLabels({node_reason}).Inc(count);
  }
  spdlog::warn("TrainingJob {}: {}", key, fault.message);
  (void)events_.Record(JobReference(job.meta), kube::EventType::kWarning,
                       std::string(evicted ? kConditionEvicted : kept_condition), fault.message);
  if (fault.action == FaultAction::kShrunk) {
    ++stats.resized;
    metrics_.resize_events_total.WithLabels({"shrink"}).Inc();
  }
  if (!evicted) return true;
  ++stats.evicted;
  metrics_.evicted_workloads_total
      .WithLabels({before ? before->cluster_queue : "", std::string(kReasonNodeFailure)})
      .Inc();
  Trigger();  // admitted again by a later cycle, once the job controller saw the eviction
  return false;
}

void AdmissionController::ReportObjectErrors(const std::vector<admission::ObjectError>& errors) {
  std::map<std::string, std::string> now;
  for (const admission::ObjectError& e : errors) {
    const std::string key = absl::StrCat(e.kind, " ", e.name);
    now[key] = e.message;
    auto seen = object_errors_.find(key);
    if (seen != object_errors_.end() && seen->second == e.message) continue;
    spdlog::warn("{}: {}", key, e.message);
    // Namespaced kinds are named "namespace/name" by the core.
    const size_t slash = e.name.find('/');
    kube::ObjectReference ref{.api_version = kube::ClusterTrainingQueues().ApiVersion(),
                              .kind = e.kind,
                              .namespace_ = slash == std::string::npos ? "" : e.name.substr(0, slash),
                              .name = slash == std::string::npos ? e.name : e.name.substr(slash + 1)};
    (void)events_.Record(ref, kube::EventType::kWarning, "InvalidConfiguration", e.message);
  }
  for (const auto& [key, message] : object_errors_) {
    if (now.count(key) == 0) spdlog::info("{}: resolved ({})", key, message);
  }
  object_errors_ = std::move(now);
}

void AdmissionController::ReconcileFinalizers(const admission::Snapshot& snapshot) {
  const ResourcesInUse in_use = FindResourcesInUse(snapshot);
  auto reconcile = [&](const auto& informer, const kube::Resource& resource,
                       const std::set<std::string>& used) {
    for (const auto& raw : informer.List()) {
      const kube::ObjectMeta& meta = raw->meta;
      const FinalizerChange change =
          ResourceInUseFinalizerChange(meta, used.contains(std::string(meta.name)));
      if (change == FinalizerChange::kNone) continue;
      const bool add = change == FinalizerChange::kAdd;
      absl::StatusOr<std::string> result = client_.Patch(
          resource, "", meta.name, kube::PatchType::kApply,
          FinalizerApply(resource, meta, kResourceInUseFinalizer, add),
          {.field_manager = std::string(kAdmissionFieldManager), .force = true});
      metrics_.status_writes_total.WithLabels({resource.kind, WriteResult(result.status())})
          .Inc();
      if (!result.ok()) {
        // Gone or replaced meanwhile (the uid precondition), or deleted before the add landed:
        // the informer brings the change and the next cycle looks again.
        if (!absl::IsNotFound(result.status())) {
          spdlog::warn("{} {}: finalizer {}: {}", resource.kind, meta.name,
                       add ? "add" : "removal", result.status());
        }
        continue;
      }
      if (!add) {
        spdlog::info("{} {}: deleted, and no longer in use: finalizer {} removed", resource.kind,
                     meta.name, kResourceInUseFinalizer);
      }
    }
  };
  reconcile(informers_.cluster_queues, kube::ClusterTrainingQueues(), in_use.cluster_queues);
  reconcile(informers_.flavors, kube::NodeFlavors(), in_use.flavors);
}

void AdmissionController::WriteQueueStatuses(const admission::Snapshot& snapshot,
                                             const std::vector<admission::PendingDecision>& pending,
                                             const std::string& now) {
  QueueStatuses statuses = ComputeQueueStatuses(snapshot);
  AddPendingJobs(snapshot, pending, options_.queue_status_pending_jobs, statuses);
  // The Active conditions observe the generation of the spec they were computed from.
  for (ClusterQueueStatus& cq : statuses.cluster_queues) {
    const auto object = informers_.cluster_queues.Get(cq.name);
    cq.observed_generation = object ? object->meta.generation : 0;
  }
  for (LocalQueueStatus& lq : statuses.local_queues) {
    const auto object = informers_.local_queues.Get(lq.namespace_name + "/" + lq.name);
    lq.observed_generation = object ? object->meta.generation : 0;
  }
  // Keyed by the object's uid too: a queue deleted and created again under the same name is a
  // new object with no status, whatever was last written to the old one.
  std::map<std::string, std::string> written;
  // `body(time)` is the status with `time` as its Active condition's lastTransitionTime; with ""
  // it is the fingerprint of what the status says. The time moves only when the condition's
  // status does, as metav1.Condition means it: a queue whose counts change keeps the time it
  // became Active. It is read from the object only when a status is written.
  auto apply = [&](const kube::Informer<kube::RawObject>& informer,
                   const kube::Resource& resource, const std::string& ns, const std::string& name,
                   bool active, const std::function<std::string(const std::string&)>& body) {
    const std::string key = ns.empty() ? name : ns + "/" + name;
    const auto object = informer.Get(key);
    const std::string cache_key = key + "@" + (object ? object->meta.uid : "");
    const std::string fingerprint = body("");
    auto last = queue_status_.find(cache_key);
    if (last != queue_status_.end() && last->second == fingerprint) {
      written.insert(*last);
      return;
    }
    std::string since = now;
    if (object != nullptr) {
      const std::vector<Condition> conditions = ReadConditions(object->json);
      const Condition* c = FindCondition(conditions, "Active");
      if (c != nullptr && c->status == (active ? "True" : "False") &&
          !c->last_transition_time.empty()) {
        since = c->last_transition_time;
      }
    }
    absl::StatusOr<std::string> result = client_.Patch(
        resource, ns, name, kube::PatchType::kApply, body(since),
        {.field_manager = std::string(kAdmissionFieldManager), .force = true}, "status");
    metrics_.status_writes_total.WithLabels({resource.kind, WriteResult(result.status())}).Inc();
    if (!result.ok()) {
      spdlog::warn("{} {}: status write failed: {}", resource.kind, key, result.status());
      return;
    }
    written[cache_key] = fingerprint;
  };
  // Every queue gauge is set for what exists now, and the series of anything else (a deleted
  // ClusterTrainingQueue, a flavor or resource taken out of one) are dropped: a gauge left at
  // its last value would keep an alert on it firing forever.
  std::set<std::vector<std::string>> queues, usage, quota, borrowing, lending;
  for (const ClusterQueueStatus& cq : statuses.cluster_queues) {
    apply(informers_.cluster_queues, kube::ClusterTrainingQueues(), "", cq.name,
          cq.inactive_reason.empty(),
          [&](const std::string& time) { return ClusterQueueStatusApply(cq, time); });
    metrics_.admitted_active_workloads.WithLabels({cq.name}).Set(cq.admitted);
    const std::string_view state = cq.inactive_reason.empty() ? "active"
                                   : cq.inactive_condition_reason == "Terminating" ? "terminating"
                                                                                   : "pending";
    for (std::string_view each : {"active", "pending", "terminating"}) {
      metrics_.cluster_queue_status.WithLabels({cq.name, std::string(each)})
          .Set(each == state ? 1 : 0);
    }
    queues.insert({cq.name});
    for (const FlavorUsage& f : cq.flavors_usage) {
      for (const ResourceUsage& r : f.resources) {
        metrics_.resource_usage.WithLabels({cq.name, f.flavor, r.resource}).Set(r.total);
        usage.insert({cq.name, f.flavor, r.resource});
      }
    }
  }
  for (const admission::ClusterQueue& cq : snapshot.cluster_queues) {
    for (const admission::ResourceGroup& g : cq.resource_groups) {
      for (const admission::FlavorQuotas& f : g.flavors) {
        for (const admission::ResourceQuota& q : f.resources) {
          metrics_.nominal_quota.WithLabels({cq.name, f.flavor, q.resource}).Set(q.nominal);
          quota.insert({cq.name, f.flavor, q.resource});
          if (q.borrowing_limit) {
            metrics_.borrowing_limit.WithLabels({cq.name, f.flavor, q.resource})
                .Set(*q.borrowing_limit);
            borrowing.insert({cq.name, f.flavor, q.resource});
          }
          if (q.lending_limit) {
            metrics_.lending_limit.WithLabels({cq.name, f.flavor, q.resource})
                .Set(*q.lending_limit);
            lending.insert({cq.name, f.flavor, q.resource});
          }
        }
      }
    }
  }
  auto absent_from = [](const std::set<std::vector<std::string>>& present) {
    return [&present](const std::vector<std::string>& labels) { return !present.contains(labels); };
  };
  metrics_.admitted_active_workloads.RemoveIf(absent_from(queues));
  metrics_.resource_usage.RemoveIf(absent_from(usage));
  metrics_.nominal_quota.RemoveIf(absent_from(quota));
  metrics_.borrowing_limit.RemoveIf(absent_from(borrowing));
  metrics_.lending_limit.RemoveIf(absent_from(lending));
  metrics_.cluster_queue_status.RemoveIf(
      [&](const std::vector<std::string>& labels) { return !queues.contains({labels[0]}); });
  for (const LocalQueueStatus& lq : statuses.local_queues) {
    apply(informers_.local_queues, kube::TrainingQueues(), lq.namespace_name, lq.name,
          lq.inactive_reason.empty(),
          [&](const std::string& time) { return LocalQueueStatusApply(lq, time); });
  }
  queue_status_ = std::move(written);  // the queues that exist now, and nothing else
}

}  // namespace phalanx::operator_server
