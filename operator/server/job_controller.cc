#include "operator/server/job_controller.h"

#include <algorithm>
#include <map>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_labels.h"
#include "common/status.h"
#include "kube/decode.h"
#include "kube/errors.h"
#include "operator/controller/pod_builder.h"
#include "operator/controller/rank_failure.h"
#include "operator/server/job_events.h"
#include "operator/server/job_status.h"
#include "operator/server/node_faults.h"
#include "operator/server/parallel.h"
#include "operator/server/queue_objects.h"
#include "spdlog/spdlog.h"

namespace phalanx::operator_server {
namespace {

const std::vector<std::string_view> kOwned = {kConditionRunning, kConditionRestarting,
                                              kConditionResizing, kConditionSucceeded,
                                              kConditionFailed};

// How soon a rank held off a failed node is looked at again (the node may recover first).
constexpr absl::Duration kHeldRankRecheck = absl::Seconds(5);
// A template refused for now (a 403: PodSecurity, a webhook) is tried again this often.
constexpr absl::Duration kTemplateRecheck = absl::Seconds(30);

bool Terminal(const kube::Pod& pod) { return kube::FinishedPhase(pod.phase); }

std::vector<Condition> Owned(const std::vector<Condition>& all) {
  std::vector<Condition> out;
  for (std::string_view type : kOwned) {
    if (const Condition* c = FindCondition(all, type)) out.push_back(*c);
  }
  return out;
}

Condition Cond(std::string_view type, bool value, std::string_view reason, std::string message) {
  return {.type = std::string(type),
          .status = value ? "True" : "False",
          .reason = std::string(reason),
          .message = std::move(message)};
}

}  // namespace

JobController::JobController(kube::Client& client, Informers& informers,
                             placement::PlacementService& placement, kube::EventRecorder& events,
                             OperatorMetrics& metrics, int write_concurrency)
    : client_(client),
      informers_(informers),
      placement_(placement),
      events_(events),
      metrics_(metrics),
      write_concurrency_(write_concurrency),
      queue_(kube::DefaultControllerRateLimiter()) {}

void JobController::RegisterHandlers() {
  auto job = [this](const kube::RawObject& j) { queue_.Add(j.meta.Key()); };
  informers_.jobs.AddEventHandlers(
      {.on_add = job,
       .on_update = [this](const kube::RawObject&, const kube::RawObject& j) {
         queue_.Add(j.meta.Key());
       },
       .on_delete = job});
  auto pod = [this](const kube::Pod& p) {
    const std::string* name = p.meta.labels.Find(std::string(kJobLabel));
    if (name == nullptr) return;
    std::string job = p.meta.namespace_ + "/" + *name;
    expected_pods_.Observed(job, p.meta.name);
    queue_.Add(std::move(job));
  };
  informers_.pods.AddEventHandlers(
      {.on_add = pod,
       .on_update = [pod](const kube::Pod&, const kube::Pod& p) { pod(p); },
       .on_delete = pod});
}

absl::Status JobController::LoadServices() {
  ASSIGN_OR_RETURN(kube::ListResult list,
                   client_.List(kube::Services(), "", {.label_selector = std::string(kJobLabel)}));
  std::vector<std::string> owners;
  for (const std::string& item : list.items) {
    ASSIGN_OR_RETURN(kube::RawObject service, kube::Decode<kube::RawObject>(item));
    const kube::OwnerReference* owner = service.meta.ControllerRef();
    if (owner != nullptr && owner->kind == kube::kTrainingJobKind) {
      owners.push_back(owner->uid.str());
    }
  }
  size_t owned = 0;
  {
    absl::MutexLock lock(&mu_);
    for (std::string& uid : owners) owned += services_.insert(std::move(uid)).second;
  }
  spdlog::info("{} TrainingJob Services exist ({} labelled {})", owned, list.items.size(),
               kJobLabel);
  return absl::OkStatus();
}

absl::Status JobController::LoadEndpointSlices() {
  ASSIGN_OR_RETURN(
      kube::ListResult list,
      client_.List(kube::EndpointSlices(), "",
                   {.label_selector = "endpointslice.kubernetes.io/managed-by=" +
                                      std::string(controller::kEndpointSliceManagedBy)}));
  std::map<std::string, WrittenSlices> found;
  for (const std::string& item : list.items) {
    ASSIGN_OR_RETURN(kube::RawObject slice, kube::Decode<kube::RawObject>(item));
    const std::string* job = slice.meta.labels.Find(std::string(kJobLabel));
    const std::string* hash =
        slice.meta.annotations.Find(std::string(controller::kEndpointsHashAnnotation));
    const kube::OwnerReference* owner = slice.meta.ControllerRef();
    if (job == nullptr || owner == nullptr) continue;
    WrittenSlices& written = found[slice.meta.namespace_ + "/" + *job];
    // Slices of two jobs of one name (the older one's not collected yet): whichever is kept,
    // the job's reconcile applies its own if the uid is not its (SyncEndpoints).
    if (!written.uid.empty() && written.uid != owner->uid.str()) continue;
    written.uid = owner->uid.str();
    written.hashes[slice.meta.name] = hash == nullptr ? std::string() : *hash;
  }
  {
    absl::MutexLock lock(&mu_);
    for (auto& [key, written] : found) slices_.try_emplace(key, std::move(written));
  }
  spdlog::info("{} TrainingJob EndpointSlices exist, of {} jobs", list.items.size(), found.size());
  return absl::OkStatus();
}

void JobController::Run(const kube::Cancellation& stop, int workers) {
  if (absl::Status loaded = LoadServices(); !loaded.ok()) {
    spdlog::warn("listing Services: {}; each admitted job's Service is created again (409 if it "
                 "exists; the operator's RBAC needs list on services)",
                 loaded);
  }
  if (absl::Status loaded = LoadEndpointSlices(); !loaded.ok()) {
    spdlog::warn("listing EndpointSlices: {}; each admitted job's slices are applied again (the "
                 "operator's RBAC needs list on endpointslices.discovery.k8s.io)",
                 loaded);
  }
  int id = stop.OnCancel([this] { queue_.ShutDown(); });
  std::vector<std::thread> threads;
  for (int i = 0; i < workers; ++i) {
    threads.emplace_back([this, &stop] {
      while (std::optional<std::string> key = queue_.Get()) {
        if (yield_to_ != nullptr) yield_to_->Yield(max_yield_, &stop);
        absl::StatusOr<std::optional<absl::Duration>> next = Reconcile(*key);
        if (!next.ok()) {
          if (kube::IsNamespaceTerminating(next.status())) {
            // The namespace went into deletion after this job was looked at: not RBAC.
            spdlog::info("TrainingJob {}: its namespace is being deleted: {}", *key,
                         std::string(next.status().message()));
          } else if (kube::IsAuthorizationDenied(next.status())) {
            // RBAC that lacks a verb, which no retry fixes: say it where users look.
            spdlog::error("TrainingJob {}: {} (retrying; check the operator's RBAC)", *key,
                          next.status());
            RecordForbidden(*key, next.status());
          } else if (kube::IsConflict(next.status())) {
            // Optimistic concurrency: another writer got there first (the finalizer's removal
            // racing the job's deletion, most often); the retry reads the object again.
            spdlog::debug("TrainingJob {}: {} (retrying)", *key, next.status());
          } else {
            spdlog::warn("TrainingJob {}: {} (retrying)", *key, next.status());
          }
          queue_.AddRateLimited(*key);
        } else {
          queue_.Forget(*key);
          if (*next) queue_.AddAfter(*key, **next);
        }
        queue_.Done(*key);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  stop.Unregister(id);
}

std::optional<absl::Duration> JobController::CheckTemplate(const kube::TrainingJob& job,
                                                           absl::Time now) {
  if (!informers_.template_checks.enabled()) return std::nullopt;
  const kube::ObjectMeta& meta = job.meta;
  const std::string key = meta.Key();
  if (std::optional<TemplateChecks::Verdict> last =
          informers_.template_checks.Get(key, meta.uid, meta.generation)) {
    if (!last->ask_again) return std::nullopt;
    if (const absl::Duration since = now - last->checked; since < kTemplateRecheck) {
      return kTemplateRecheck - since;
    }
  }
  TemplateChecks::Verdict verdict{.uid = meta.uid, .generation = meta.generation, .checked = now};
  // Rank 0's pod as admission would make it, but on no node and in no flavor yet.
  controller::PodContext ctx{.world_size = std::max(job.replicas, 1), .elastic = job.elastic};
  absl::StatusOr<std::string> body = controller::BuildPod(job, ctx, 0);
  const std::string shape = body.ok() ? TemplateShape(job) : std::string();
  switch (informers_.template_checks.TakeShared(key, meta.uid, meta.generation, shape, now)) {
    case TemplateChecks::Shared::kTaken:
      metrics_.template_verdicts_shared_total.WithLabels({}).Inc();
      return std::nullopt;
    case TemplateChecks::Shared::kHadOne:  // the admission controller shared one just now
      return std::nullopt;
    case TemplateChecks::Shared::kNone:
      break;
  }
  std::string refusal;
  const char* result = "refused";
  if (!body.ok()) {
    refusal = absl::StrCat("cannot build the pods: ", body.status().message());
  } else {
    const absl::Status answer = client_
                                    .Create(kube::Pods(), meta.namespace_, *body,
                                            {.dry_run = true, .field_validation = "Strict"})
                                    .status();
    const controller::TemplateVerdict judged = controller::JudgePodDryRun(answer);
    using Kind = controller::TemplateVerdict::Kind;
    verdict.ask_again = judged.kind == Kind::kRefusedForNow;
    if (judged.kind == Kind::kDeferred) {
      result = "deferred";
      // Once per job generation: a passed verdict is not asked again.
      const bool rbac = kube::IsAuthorizationDenied(answer);
      spdlog::log(rbac ? spdlog::level::warn : spdlog::level::info,
                  "TrainingJob {}: the dry run of its pod was refused by {}{} ({})", key,
                  judged.message,
                  rbac ? " (check the operator's RBAC)"
                       : "; the admission controller holds it back for that, by name",
                  std::string(answer.message()));
    } else if (judged.kind == Kind::kPassed) {
      const bool answered = answer.ok() || absl::IsAlreadyExists(answer);
      result = answered ? "passed" : "unanswered";
      if (!answered) {
        spdlog::warn(
            "TrainingJob {}: the dry run of its pod got no verdict ({}); its pods' "
            "creates will be checked when it is admitted",
            key, answer.ToString());
      }
    } else {
      refusal = judged.message;
      if (verdict.ask_again) result = "refused_for_now";
    }
  }
  metrics_.template_dry_runs_total.WithLabels({result}).Inc();
  if (!shape.empty() &&
      (result == std::string_view("passed") || result == std::string_view("deferred"))) {
    informers_.template_checks.SetPassed(shape, now);
  }
  if (!refusal.empty()) {
    verdict.refused = true;
    verdict.message = absl::StrCat(
        "the API server refuses its pods (a dry run of rank 0's pod): ", refusal,
        verdict.ask_again
            ? absl::StrCat("; asked again every ", absl::ToInt64Seconds(kTemplateRecheck), " s")
            : std::string("; it waits for the TrainingJob to be fixed"));
  }
  const bool ask_again = verdict.ask_again;
  const std::string message = verdict.message;
  if (informers_.template_checks.Set(key, std::move(verdict)) && !message.empty()) {
    spdlog::warn("TrainingJob {}: not admitted: {}", key, message);
  }
  if (ask_again) return kTemplateRecheck;
  return std::nullopt;
}

void JobController::RecordForbidden(const std::string& key, const absl::Status& status) {
  std::shared_ptr<const kube::RawObject> raw = informers_.jobs.Get(key);
  if (raw == nullptr) return;
  (void)events_.Record(JobReference(raw->meta), kube::EventType::kWarning, "Forbidden",
                       std::string(status.message()));
}

void JobController::RecordFailedCreate(const kube::ObjectMeta& job, std::string_view kind,
                                       std::string_view name, const absl::Status& status) {
  // The API server refused the object (a 422 from validation or a webhook, a 403 from an
  // admission plugin: a ResourceQuota exceeded, a PriorityClass that is gone): the job is
  // admitted but gets no pods until someone acts. A 403 from RBAC is recorded as Forbidden by
  // the worker loop.
  if (kube::IsAuthorizationDenied(status)) return;
  (void)events_.Record(JobReference(job), kube::EventType::kWarning, kReasonFailedCreate,
                       FailedRequestMessage("create", kind, job.namespace_, name, status));
}

absl::Status JobController::CheckExistingService(const kube::ObjectMeta& job) {
  ASSIGN_OR_RETURN(std::string json, client_.Get(kube::Services(), job.namespace_, job.name));
  ASSIGN_OR_RETURN(kube::RawObject service, kube::Decode<kube::RawObject>(json));
  const kube::OwnerReference* owner = service.meta.ControllerRef();
  if (owner != nullptr && owner->uid == job.uid) return absl::OkStatus();
  const std::string whose =
      owner == nullptr ? std::string("it has no controller")
                       : absl::StrCat("it belongs to ", owner->kind.str(), " ", owner->name.str(),
                                      " uid ", owner->uid.str());
  absl::Status status = absl::FailedPreconditionError(absl::StrCat(
      "Service ", job.namespace_, "/", job.name, " exists and is not this job's: ", whose,
      service.meta.deletion_timestamp.empty() ? "" : " and is being deleted",
      "; its pods wait until it is gone"));
  (void)events_.Record(JobReference(job), kube::EventType::kWarning, kReasonFailedCreate,
                       std::string(status.message()));
  return status;
}

absl::Status JobController::SyncEndpoints(const kube::TrainingJob& job,
                                          std::vector<controller::RankAddress> ranks) {
  const std::string key = job.meta.Key();
  std::map<std::string, std::string> written;
  {
    absl::MutexLock lock(&mu_);
    auto it = slices_.find(key);
    // Another uid: an earlier job of this name, whose slices go with it (owner references).
    if (it != slices_.end() && it->second.uid == job.meta.uid) written = it->second.hashes;
  }
  if (ranks.empty() && written.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<controller::EndpointSliceBody> wanted,
                   controller::BuildEndpointSlices(job, std::move(ranks)));
  std::map<std::string, std::string> now;  // what exists once this step is done
  absl::Status first_error;
  auto count = [&](std::string_view op, const absl::Status& s) {
    metrics_.endpoint_slice_writes_total.WithLabels({std::string(op), s.ok() ? "ok" : "error"})
        .Inc();
    if (!s.ok() && first_error.ok()) first_error = s;
  };
  for (controller::EndpointSliceBody& slice : wanted) {
    auto it = written.find(slice.name);
    if (it != written.end() && it->second == slice.hash) {
      now.insert(*it);
      continue;
    }
    absl::Status s = client_
                         .Patch(kube::EndpointSlices(), job.meta.namespace_, slice.name,
                                kube::PatchType::kApply, slice.json,
                                {.field_manager = std::string(kJobFieldManager), .force = true})
                         .status();
    count("apply", s);
    if (s.ok()) {
      now[slice.name] = slice.hash;
    } else {
      RecordFailedCreate(job.meta, "EndpointSlice", slice.name, s);
      if (it != written.end()) now.insert(*it);  // unchanged, as far as we know
    }
  }
  // Every written slice still wanted is in `now` (kept, applied, or its failed apply retried with
  // the job); the rest go.
  for (const auto& [name, hash] : written) {
    if (now.count(name) != 0) continue;
    absl::Status s = client_.Delete(kube::EndpointSlices(), job.meta.namespace_, name);
    if (absl::IsNotFound(s)) s = absl::OkStatus();
    count("delete", s);
    if (!s.ok()) now[name] = hash;  // still there: deleted on the next try
  }
  absl::MutexLock lock(&mu_);
  if (now.empty()) {
    slices_.erase(key);
  } else {
    slices_[key] = {.uid = job.meta.uid, .hashes = std::move(now)};
  }
  return first_error;
}

absl::StatusOr<std::optional<absl::Duration>> JobController::Reconcile(const std::string& key) {
  std::shared_ptr<const kube::RawObject> raw = informers_.jobs.Get(key);
  if (raw == nullptr) {
    // Gone; its pods, Service and EndpointSlices are garbage-collected.
    written_.Forget(key);
    informers_.create_failures.Clear(key);
    informers_.template_checks.Forget(key);
    absl::MutexLock lock(&mu_);
    slices_.erase(key);
    seen_ranks_.erase(key);
    return std::nullopt;
  }
  absl::StatusOr<kube::TrainingJob> decoded = kube::DecodeTrainingJob(raw->json);
  if (!decoded.ok()) {
    // An edit the API server took and this controller cannot read (the admission controller
    // says so: an InvalidSpec event, or Queued=True Invalid). Nothing is done for it but one
    // thing: deleted, it is let go, for which its metadata and status are enough (before
    // 2026-12-01 its finalizer held the object forever).
    if (raw->meta.deletion_timestamp.empty()) return decoded.status();
    ASSIGN_OR_RETURN(decoded, kube::DecodeTrainingJobWithoutSpec(raw->json));
  }
  kube::TrainingJob& job = *decoded;
  const kube::ObjectMeta& meta = job.meta;
  const absl::Time now_time = absl::Now();
  const std::string now = Rfc3339(now_time);

  // Taken before the pods are read (create_expectations.h says why).
  const CreateExpectations::Pending expected = expected_pods_.PendingOf(key, now_time);
  std::vector<std::shared_ptr<const kube::Pod>> pods = informers_.pods.ByIndex(kIndexByJob, key);
  // A pod that carries the job's label but was not made by a TrainingJob of this name (a
  // user's pod that copied the labels) is not the operator's to delete: it is set aside, and
  // one holding a rank's name keeps that rank from being created, with a FailedCreate saying
  // why (security audit 2026-11-30 d, S9; before, every such pod was deleted).
  std::map<std::string, std::string> foreign;  // pod name -> whose it is
  std::erase_if(pods, [&](const std::shared_ptr<const kube::Pod>& p) {
    const kube::OwnerReference* owner = p->meta.ControllerRef();
    if (owner != nullptr && owner->kind.view() == kube::kTrainingJobKind &&
        owner->name.view() == meta.name) {
      return false;
    }
    foreign.emplace(p->meta.name, owner == nullptr
                                      ? std::string("it has no controller")
                                      : absl::StrCat("it belongs to ", owner->kind.str(), " ",
                                                     owner->name.str()));
    return true;
  });
  // A pod on a node whose kubelet is gone (NotReady or deleted) never finishes terminating, and
  // its rank's name would stay taken: such pods are deleted at once (grace 0), also those some
  // other deleter left terminating.
  auto on_lost_node = [&](const kube::Pod& p) {
    if (p.node_name.empty()) return false;
    std::shared_ptr<const kube::Node> node = informers_.nodes.Get(p.node_name.str());
    return node == nullptr || !node->ready;
  };
  auto delete_pods = [&](auto&& which) -> absl::Status {
    for (const auto& pod : pods) {
      const bool lost = on_lost_node(*pod);
      if (pod->meta.deletion_timestamp.empty() ? !which(*pod) : !lost) continue;
      kube::DeleteOptions options{.precondition_uid = pod->meta.uid};
      if (lost) options.grace_period_seconds = 0;
      absl::Status s =
          client_.Delete(kube::Pods(), pod->meta.namespace_, pod->meta.name, options);
      if (!s.ok() && !absl::IsNotFound(s) && !kube::IsConflict(s)) return s;
    }
    return absl::OkStatus();
  };
  auto release = [&]() -> absl::Status {
    absl::Status s = placement_.Release(key);
    return s.ok() || absl::IsNotFound(s) ? absl::OkStatus() : s;
  };
  const bool has_finalizer = meta.HasFinalizer(kReservationFinalizer);
  auto apply_meta = [&](bool with) -> absl::Status {
    absl::StatusOr<std::string> r = client_.Patch(
        kube::TrainingJobs(), meta.namespace_, meta.name, kube::PatchType::kApply,
        FinalizerApply(kube::TrainingJobs(), meta, kReservationFinalizer, with),
        {.field_manager = std::string(kJobFieldManager), .force = true});
    metrics_.status_writes_total.WithLabels({"TrainingJob", WriteResult(r.status())}).Inc();
    return r.ok() || absl::IsNotFound(r.status()) ? absl::OkStatus() : r.status();
  };

  // --- deletion: release, delete pods, let the object go -----------------------------------
  if (!meta.deletion_timestamp.empty()) {
    RETURN_IF_ERROR(release());
    RETURN_IF_ERROR(delete_pods([](const kube::Pod&) { return true; }));
    if (has_finalizer) {
      bool first = false;
      {
        absl::MutexLock lock(&mu_);
        if (first = released_.insert(meta.uid).second; first) {
          released_order_.push_back(meta.uid);
          if (released_order_.size() > kReleasedKept) {
            released_.erase(released_order_.front());
            released_order_.pop_front();
          }
        }
      }
      // Outlives the job by the API server's event TTL: `kubectl get events` shows it.
      if (first) {
        (void)events_.Record(JobReference(meta), kube::EventType::kNormal, kReasonReleased,
                             job.status.admission
                                 ? "the job is being deleted: its reservation is released and "
                                   "its pods are deleted"
                                 : "the job is being deleted (it was not admitted: no "
                                   "reservation or pods to release)");
      }
      RETURN_IF_ERROR(apply_meta(false));
    }
    return std::nullopt;
  }
  // --- a namespace being deleted: the namespace controller deletes the pods (before the jobs)
  // and the API server refuses every create there (403 "is being terminated"), which is not
  // the RBAC problem a Forbidden usually is. Nothing to build: the job goes with its namespace,
  // through the deletion branch above.
  if (std::shared_ptr<const kube::RawObject> ns = informers_.namespaces.Get(meta.namespace_);
      ns != nullptr && !ns->meta.deletion_timestamp.empty()) {
    spdlog::debug("TrainingJob {}: namespace {} is being deleted; nothing is created", key,
                  meta.namespace_);
    return std::nullopt;
  }
  if (!has_finalizer) RETURN_IF_ERROR(apply_meta(true));

  // --- the status this controller owns, as it is now: its last write, which the informer may
  // not show yet, else what the informer shows ------------------------------------------------
  std::vector<Condition> all_conditions = ReadConditions(raw->json);
  LifecycleStatus current{.phase = job.status.phase,
                          .restarts = job.status.restarts,
                          .node_fault_restarts = job.status.node_fault_restarts,
                          .ignored_restarts = job.status.ignored_restarts,
                          .start_time = ReadStatusString(raw->json, "startTime"),
                          .completion_time = ReadStatusString(raw->json, "completionTime"),
                          .conditions = Owned(all_conditions)};
  if (written_.Apply(meta, current)) {
    job.status.phase = current.phase;
    job.status.restarts = current.restarts;
    job.status.node_fault_restarts = current.node_fault_restarts;
    job.status.ignored_restarts = current.ignored_restarts;
  }
  LifecycleStatus wanted = current;
  std::vector<Condition> updates;
  // Normal Events (reason, message) about the transition this step writes: recorded once the
  // write has landed, so that the retry of a failed write does not record them twice.
  std::vector<std::pair<std::string, std::string>> on_written;
  auto write = [&]() -> absl::Status {
    wanted.conditions =
        MergeConditions(current.conditions, kOwned, updates, now, meta.generation);
    if (wanted == current) return absl::OkStatus();
    absl::StatusOr<std::string> r =
        client_.Patch(kube::TrainingJobs(), meta.namespace_, meta.name, kube::PatchType::kApply,
                      LifecycleStatusApply(meta, wanted),
                      {.field_manager = std::string(kJobFieldManager), .force = true}, "status");
    metrics_.status_writes_total.WithLabels({"TrainingJob", WriteResult(r.status())}).Inc();
    if (!r.ok() && !absl::IsNotFound(r.status())) return r.status();
    if (r.ok()) {
      absl::StatusOr<kube::RawObject> written = kube::Decode<kube::RawObject>(*r);
      if (written.ok()) written_.Record(meta, wanted, written->meta.resource_version);
      for (auto& [reason, message] : on_written) {
        (void)events_.Record(JobReference(meta), kube::EventType::kNormal, reason, message);
      }
    }
    if (wanted.phase != current.phase) {
      spdlog::info("TrainingJob {}: {} -> {}", key, current.phase.empty() ? "(new)" : current.phase,
                   wanted.phase);
    }
    return absl::OkStatus();
  };

  // --- finished: nothing runs; ttl ------------------------------------------------------------
  if (kube::FinishedPhase(job.status.phase)) {
    RETURN_IF_ERROR(delete_pods([](const kube::Pod& p) { return !Terminal(p); }));
    RETURN_IF_ERROR(SyncEndpoints(job, {}));
    if (!job.ttl_seconds_after_finished) return std::nullopt;
    int64_t done = ParseUnixSeconds(current.completion_time);
    absl::Time expiry = absl::FromUnixSeconds(done) + absl::Seconds(*job.ttl_seconds_after_finished);
    if (done > 0 && now_time < expiry) return expiry - now_time;
    absl::Status s = client_.Delete(kube::TrainingJobs(), meta.namespace_, meta.name,
                                    {.propagation_policy = "Background", .precondition_uid = meta.uid});
    if (!s.ok() && !absl::IsNotFound(s)) return s;
    spdlog::info("TrainingJob {}: deleted {} s after it finished (ttlSecondsAfterFinished)", key,
                 *job.ttl_seconds_after_finished);
    return std::nullopt;
  }

  if (current.phase == "Suspended" && !job.suspend) {
    // As a resumed Job's startTime is reset: the gang's next run sets it again.
    wanted.start_time.clear();
    on_written.emplace_back(kReasonResumed,
                            "spec.suspend is false: the job waits for admission again");
  }

  // --- not admitted (queued, evicted, suspended): no pods ----------------------------------
  if (!job.status.admission || job.suspend) {
    RETURN_IF_ERROR(delete_pods([](const kube::Pod&) { return true; }));
    // These pods are this controller's own deletions: the next admission starts with no rank
    // seen, even one whose Admitted condition turns True again within the same second.
    {
      absl::MutexLock lock(&mu_);
      seen_ranks_.erase(key);
    }
    wanted.phase = job.suspend ? "Suspended" : "Queued";
    // Evicted: queued again, and the next run sets it anew, as a Kueue-evicted Job is suspended
    // and its startTime reset when it resumes. A suspension keeps it until the resume (above).
    if (!job.suspend) wanted.start_time.clear();
    // Resumed and not admitted yet is not an eviction (audit 2026-12-01, F5): the reason stays
    // Resumed until the job runs again.
    const Condition* running = FindCondition(current.conditions, kConditionRunning);
    const bool resumed = !job.suspend && running != nullptr && running->status == "False" &&
                         (running->reason == "Suspended" || running->reason == "Resumed");
    const std::string_view why = job.suspend ? "Suspended" : resumed ? "Resumed" : "Evicted";
    if (running != nullptr) {
      updates.push_back(Cond(kConditionRunning, false, why,
                             resumed ? "resumed (spec.suspend: false) and not admitted yet: no pods"
                                     : "the gang is not admitted: its pods were deleted"));
    }
    // A restart that was under way is over: a queued job is not restarting, and its next
    // admission starts a new gang.
    for (Condition& c : Deactivate(current.conditions, {kConditionRestarting}, why)) {
      updates.push_back(std::move(c));
    }
    RETURN_IF_ERROR(write());
    RETURN_IF_ERROR(SyncEndpoints(job, {}));
    return CheckTemplate(job, now_time);
  }

  // --- admitted ----------------------------------------------------------------------------
  const kube::TrainingJobAdmission& admitted = *job.status.admission;
  const int32_t world = admitted.replicas;
  const int32_t generation = job.status.restarts;

  // The Service is created outside mu_: held across the round trip, it made every worker wait
  // for every other job's Service (553 admitted jobs: 553 creates one at a time). The work
  // queue never gives one key to two workers, so a job's Service is not created twice.
  bool need_service;
  {
    absl::MutexLock lock(&mu_);
    need_service = services_.count(meta.uid) == 0;
  }
  if (need_service) {
    ASSIGN_OR_RETURN(std::string service, controller::BuildHeadlessService(job));
    absl::StatusOr<std::string> r = client_.Create(kube::Services(), meta.namespace_, service);
    if (!r.ok() && !absl::IsAlreadyExists(r.status())) {
      RecordFailedCreate(meta, "service", meta.name, r.status());
      return r.status();
    }
    if (!r.ok()) RETURN_IF_ERROR(CheckExistingService(meta));
    absl::MutexLock lock(&mu_);
    services_.insert(meta.uid);
  }

  // Pods of this gang generation by rank; everything else goes.
  std::map<int, std::shared_ptr<const kube::Pod>> ranks;
  std::set<std::string> names;  // every pod name still present, deleting or not
  int beyond = 0;               // pods of this generation above the admitted size (a shrink)
  for (const auto& pod : pods) {
    names.insert(pod->meta.name);
    const int rank = GangRank(*pod, meta.uid, generation);
    const bool this_generation = rank >= 0;
    if (this_generation && rank >= world) ++beyond;
    if (this_generation && rank < world && pod->meta.deletion_timestamp.empty()) ranks[rank] = pod;
  }
  // A rank whose node was replaced (status.placement names another node than the one its pod
  // runs on or was created for) goes, and is created again on its new node.
  if (job.status.placement && static_cast<int32_t>(job.status.placement->nodes.size()) == world) {
    const std::vector<std::string>& reserved = job.status.placement->nodes;
    for (auto it = ranks.begin(); it != ranks.end();) {
      const std::string_view pinned = PinnedNode(*it->second);
      if (pinned.empty() || pinned == reserved[it->first]) {
        ++it;
        continue;
      }
      spdlog::info("TrainingJob {}: rank {} moves from node {} to {}", key, it->first, pinned,
                   reserved[it->first]);
      it = ranks.erase(it);
    }
  }
  RETURN_IF_ERROR(delete_pods([&](const kube::Pod& p) {
    auto it = ranks.find(PodIntLabel(p, kRankLabel));
    return it == ranks.end() || it->second.get() != &p;
  }));
  // Where each rank's pod was last seen bound, in this generation (ranks above the size gone).
  std::map<int, std::string> seen_on;
  {
    absl::MutexLock lock(&mu_);
    // The admission controller's condition: `current.conditions` holds only this controller's
    // (kOwned), where it was never found, so a re-admission on the same nodes compared its new
    // pods with the last admission's and called them recreated (audit session 34, D2-2).
    const Condition* admitted_cond = FindCondition(all_conditions, kConditionAdmitted);
    const std::string admission =
        admitted_cond != nullptr ? admitted_cond->last_transition_time : std::string();
    SeenRanks& seen = seen_ranks_[key];
    if (seen.uid != meta.uid || seen.admitted != admission || seen.generation != generation) {
      seen =
          SeenRanks{.uid = meta.uid, .admitted = admission, .generation = generation, .nodes = {}};
    }
    seen.nodes.erase(seen.nodes.lower_bound(world), seen.nodes.end());
    for (const auto& [rank, pod] : ranks) {
      if (!pod->node_name.empty()) seen.nodes[rank] = pod->node_name.str();
    }
    seen_on = seen.nodes;
  }

  // The end: phase, condition, reservation released, whatever still runs deleted.
  auto finish = [&](bool succeeded, std::string_view reason,
                    const std::string& message) -> absl::StatusOr<std::optional<absl::Duration>> {
    wanted.phase = succeeded ? "Succeeded" : "Failed";
    wanted.completion_time = now;
    updates.push_back(
        Cond(succeeded ? kConditionSucceeded : kConditionFailed, true, reason, message));
    // Running and Restarting say the job is over, not what they said while it ran (audit
    // 2026-12-01, F6: a Failed job kept "Restarting=False AllRanksRunning: all 2 ranks are
    // running").
    for (std::string_view type : {kConditionRunning, kConditionRestarting}) {
      if (FindCondition(current.conditions, type) != nullptr) {
        updates.push_back(Cond(type, false, wanted.phase, message));
      }
    }
    RETURN_IF_ERROR(write());
    // Released by phalanx-scheduler too once it sees the phase (LiveSnapshot), should this fail.
    RETURN_IF_ERROR(release());
    RETURN_IF_ERROR(delete_pods([](const kube::Pod& p) { return !Terminal(p); }));
    metrics_.jobs_finished_total.WithLabels({wanted.phase, std::string(reason)}).Inc();
    (void)events_.Record(JobReference(meta),
                         succeeded ? kube::EventType::kNormal : kube::EventType::kWarning,
                         std::string(reason), message);
    spdlog::info("TrainingJob {}: {}: {}", key, wanted.phase, message);
    if (!job.ttl_seconds_after_finished) return std::nullopt;
    return absl::Seconds(*job.ttl_seconds_after_finished);
  };

  // A failed rank restarts the whole gang, or fails the job. A failure its node caused is not
  // the job's: it restarts the gang without counting against maxRestarts (a Job's
  // podFailurePolicy can ignore DisruptionTarget the same way).
  auto node_cause = [&](const kube::Pod& p) -> std::string {
    if (p.disruption_target) return "Kubernetes stopped it (condition DisruptionTarget)";
    if (p.node_name.empty()) return "";
    std::shared_ptr<const kube::Node> node = informers_.nodes.Get(p.node_name.str());
    std::optional<NodeFault> fault = DetectNodeFault(p.node_name.str(), node.get(), {});
    // A taint is a fault only for the gang's tolerations, which are not at hand here; a cordon
    // stops no pod (before 2026-11-30 it was a taint here, and so never a cause either).
    if (!fault || fault->kind == NodeFaultKind::kTainted ||
        fault->kind == NodeFaultKind::kCordoned) {
      return "";
    }
    return fault->detail;
  };
  // Success by policy (checked after failures: a failed rank restarts the gang first).
  int succeeded = 0;
  for (const auto& [rank, pod] : ranks) succeeded += pod->phase == "Succeeded" ? 1 : 0;
  const bool rank_zero_done = ranks.count(0) != 0 && ranks[0]->phase == "Succeeded";
  const bool success = (job.success_policy == "RankZero" && rank_zero_done) ||
                       (job.success_policy != "RankZero" && succeeded == world);

  // spec.activeDeadlineSeconds, counted from the admission: past it the job fails whatever its
  // pods are doing (as a Job's deadline wins over its backoffLimit), unless it already succeeded.
  const std::optional<absl::Time> deadline =
      kube::ActiveDeadline(job, AdmittedAt(all_conditions));
  if (deadline && now_time >= *deadline && !success) {
    const absl::Time admitted_at = *deadline - absl::Seconds(*job.active_deadline_seconds);
    // status.startTime is set when every rank first runs in this admission: without it the
    // gang never ran (its pods were never bound or started), and the message must not say so.
    if (current.start_time.empty()) {
      int running = 0;
      for (const auto& [rank, pod] : ranks) running += pod->phase == "Running" ? 1 : 0;
      return finish(false, "DeadlineExceeded",
                    absl::StrCat("the gang was admitted ",
                                 absl::ToInt64Seconds(now_time - admitted_at), " s ago (at ",
                                 Rfc3339(admitted_at), "), past spec.activeDeadlineSeconds (",
                                 *job.active_deadline_seconds, " s), and never had all its ",
                                 world, " ranks running (", running, " running now)"));
    }
    return finish(false, "DeadlineExceeded",
                  absl::StrCat("the gang ran past spec.activeDeadlineSeconds (",
                               *job.active_deadline_seconds, " s since it was admitted at ",
                               Rfc3339(admitted_at), ")"));
  }

  // The failed ranks of this generation, judged together: one rank's failure usually makes the
  // others fail too (NCCL timeouts, a lost rendezvous store). In order: a node fault in the gang
  // restarts it uncounted (docs/operator.md "Faults"); else the rule of the failure that ended
  // first decides (controller::DecidingFailure): FailJob fails the job, Ignore restarts it
  // uncounted; else (a Count rule, named, or none) the restart counts against maxRestarts. A rank its own node failed is not
  // judged by the rules.
  using controller::RankFailure;
  std::vector<RankFailure> failures;
  for (const auto& [rank, pod] : ranks) {
    if (pod->phase != "Failed") continue;
    RankFailure& f = failures.emplace_back(RankFailure{.rank = rank, .pod = pod.get()});
    f.node_cause = node_cause(*pod);
    if (f.node_cause.empty()) f.rule = controller::MatchFailureRules(job.failure_rules, *pod);
  }
  // "pod x (rank 1) failed: <how>", and the rule it matched if that decides.
  auto failed_pod = [&](const RankFailure& f, bool with_rule = false) {
    std::string text = absl::StrCat("pod ", f.pod->meta.name, " (rank ", f.rank, ") failed");
    const std::string why = with_rule ? controller::DescribeRuleMatch(*f.pod, *f.rule)
                                      : controller::DescribePodFailure(*f.pod);
    if (!why.empty()) absl::StrAppend(&text, ": ", why);
    return text;
  };
  const int32_t counted = job.status.CountedRestarts();
  // "; 2 other ranks failed" (a cascade), so the message names one pod but hides none.
  auto others = [&]() -> std::string {
    if (failures.size() < 2) return "";
    return absl::StrCat("; ", failures.size() - 1, " other rank",
                        failures.size() == 2 ? "" : "s", " failed too");
  };
  auto uncounted_so_far = [&]() -> std::string {
    std::vector<std::string> parts;
    if (job.status.node_fault_restarts > 0) {
      parts.push_back(absl::StrCat(job.status.node_fault_restarts, " after node failures"));
    }
    if (job.status.ignored_restarts > 0) {
      parts.push_back(absl::StrCat(job.status.ignored_restarts, " ignored by failure rules"));
    }
    return absl::StrJoin(parts, " and ");
  };
  if (!failures.empty()) {
    // The root cause of a cascade (the lowest rank if no time is known).
    const RankFailure* first = controller::FirstToFail(failures);
    // A node fault explains the failures, before any rule: a failed rank's own node, or a
    // rank's still shown running (its peers fail on NCCL timeouts before its pod is marked
    // Failed).
    auto it = std::find_if(failures.begin(), failures.end(),
                           [](const RankFailure& f) { return !f.node_cause.empty(); });
    const RankFailure* decides = it == failures.end() ? nullptr : &*it;
    std::string node_cause_text;
    if (decides != nullptr) {
      node_cause_text = absl::StrCat("pod ", decides->pod->meta.name, " (rank ", decides->rank,
                                     ") failed: ", decides->node_cause);
    }
    for (const auto& [rank, pod] : ranks) {
      if (decides != nullptr) break;
      // A rank that is done needs its node no more (it may have been scaled away since).
      if (kube::FinishedPhase(pod->phase)) continue;
      const std::string cause = node_cause(*pod);
      if (cause.empty()) continue;
      decides = first;
      node_cause_text = absl::StrCat(failed_pod(*first), "; the node of rank ", rank,
                                     " failed: ", cause);
    }
    if (decides == nullptr) {
      decides = controller::DecidingFailure(failures);
      if (decides != nullptr && decides->rule->action == controller::kActionFailJob) {
        return finish(false, "PodFailurePolicy",
                      absl::StrCat(failed_pod(*decides, /*with_rule=*/true), others()));
      }
    }
    const RankFailure& f = decides != nullptr ? *decides : *first;
    const bool by_node = !node_cause_text.empty();
    // A rule that matched (Ignore or Count) is named in the message.
    const bool by_rule = !by_node && decides != nullptr;
    const bool ignored = by_rule && decides->rule->action == controller::kActionIgnore;
    if (by_node || ignored || counted < job.max_restarts) {
      wanted.restarts = job.status.restarts + 1;
      std::string message;
      std::string_view reason = "PodFailed";
      auto uncounted_restart = [&] {
        return absl::StrCat(others(), "; restarting the gang (restart ", wanted.restarts,
                            ", not counted against maxRestarts: ", counted, " of at most ",
                            job.max_restarts, " counted)");
      };
      if (by_node) {
        reason = kReasonNodeFailure;
        wanted.node_fault_restarts = job.status.node_fault_restarts + 1;
        message = absl::StrCat(node_cause_text, uncounted_restart());
      } else if (ignored) {
        reason = "PodFailureIgnored";
        wanted.ignored_restarts = job.status.ignored_restarts + 1;
        message = absl::StrCat(failed_pod(f, /*with_rule=*/true), uncounted_restart());
      } else {
        message = absl::StrCat(failed_pod(f, by_rule), others(), "; restarting the gang (restart ",
                               counted + 1, " of at most ", job.max_restarts, ")");
        const std::string uncounted = uncounted_so_far();
        if (!uncounted.empty()) {
          absl::StrAppend(&message, "; earlier restarts not counted: ", uncounted);
        }
      }
      wanted.phase = "Restarting";
      updates.push_back(Cond(kConditionRestarting, true, reason, message));
      updates.push_back(Cond(kConditionRunning, false, reason, message));
      RETURN_IF_ERROR(write());
      metrics_.job_restarts_total.WithLabels({std::string(reason)}).Inc();
      (void)events_.Record(JobReference(meta), kube::EventType::kWarning, "Restarting", message);
      return std::nullopt;
    }
    const std::string uncounted = uncounted_so_far();
    // "pod x (rank 0) failed after ...", or after a description: "...; after ...".
    const std::string what = absl::StrCat(failed_pod(f, by_rule), others());
    return finish(false, "MaxRestartsExceeded",
                  absl::StrCat(what, absl::EndsWith(what, ") failed") ? " " : "; ", "after ",
                               counted, " restarts (maxRestarts ", job.max_restarts, ")",
                               uncounted.empty() ? "" : absl::StrCat(" and ", uncounted,
                                                                     ", not counted")));
  }

  if (success) {
    std::string message =
        job.success_policy == "RankZero" ? std::string("rank 0 succeeded (successPolicy RankZero)")
        : world == 1                     ? std::string("its one rank succeeded (successPolicy All)")
                     : absl::StrCat("all ", world, " ranks succeeded (successPolicy All)");
    return finish(true, "Succeeded", message);
  }

  // A rank that succeeded before the others (successPolicy All, or a rank other than 0 under
  // RankZero) leaves the gang running, as a PyTorchJob stays Running until its replicas end.
  int running = 0, done = 0;
  for (const auto& [rank, pod] : ranks) {
    running += pod->phase == "Running" ? 1 : 0;
    done += pod->phase == "Succeeded" ? 1 : 0;
  }
  std::vector<int> present;
  for (const auto& [rank, pod] : ranks) present.push_back(rank);
  const bool resizing = (current.phase == "Running" || current.phase == "Resizing") &&
                        GangResizing(job.elastic.has_value(), world, present, beyond);
  // Ranks being added (an elastic growth) or stopping above the size: phase Resizing.
  auto mark_resizing = [&] {
    wanted.phase = "Resizing";
    std::string message =
        absl::StrCat("resizing to ", world, " ranks: ", running, " running",
                     beyond > 0 ? absl::StrCat(", ", beyond, " above it stopping") : std::string());
    if (current.phase != "Resizing") on_written.emplace_back("Resizing", message);
    updates.push_back(Cond(kConditionResizing, true, "Resizing", message));
  };

  // Missing ranks: create them once the name is free (a deleted pod may still be terminating)
  // and no create of it is still on its way to the informer.
  int created = 0;
  std::optional<absl::Duration> recheck;  // when an expected pod's wait lapses

  if (static_cast<int32_t>(ranks.size()) < world) {
    controller::PodContext ctx;
    ctx.world_size = world;
    ctx.elastic = job.elastic;
    ctx.restart = generation;
    if (job.status.placement && static_cast<int32_t>(job.status.placement->nodes.size()) == world) {
      ctx.nodes = job.status.placement->nodes;
    }
    if (admitted.node_selector && admitted.tolerations) {
      // As the flavor was at admission: the reserved nodes were chosen under these labels, and
      // an edit of the NodeFlavor since must not leave a restarted gang's pods unbindable.
      ctx.node_labels = *admitted.node_selector;
      ctx.tolerations = *admitted.tolerations;
    } else if (std::shared_ptr<const kube::RawObject> flavor_raw =
                   informers_.flavors.Get(admitted.flavor)) {
      absl::StatusOr<admission::ResourceFlavor> flavor = DecodeResourceFlavor(flavor_raw->json);
      if (flavor.ok()) {
        ctx.node_labels = flavor->node_labels;
        for (const placement::Toleration& t : flavor->tolerations) {
          ctx.tolerations.push_back(kube::FromPlacementToleration(t));
        }
      }
    }
    // What the pods carry, for the node's fault as the admission controller reads it.
    const std::vector<placement::Toleration> tolerations = GangPodTolerations(job, ctx.tolerations);
    std::vector<std::pair<int, std::string>> missing;  // rank, pod body
    bool squatted = false;                             // a rank's name taken by a foreign pod
    for (int rank = 0; rank < world; ++rank) {
      if (ranks.count(rank) != 0) continue;
      const std::string name = controller::RankPodName(meta.name, rank);
      if (auto squatter = foreign.find(name); squatter != foreign.end()) {
        const std::string message = absl::StrCat(
            "pod ", meta.namespace_, "/", name, " exists and is not this job's: ", squatter->second,
            "; rank ", rank, " waits until it is gone");
        if (informers_.create_failures.Get(key) != message) {
          (void)events_.Record(JobReference(meta), kube::EventType::kWarning, kReasonFailedCreate,
                               message);
          informers_.create_failures.Set(key, message);
        }
        squatted = true;
        continue;
      }
      if (names.count(name) != 0) continue;  // still terminating
      // Created by an earlier step; its informer event is on the way (and wakes this job).
      if (expected.names.contains(name)) {
        recheck = expected.wait;
        continue;
      }
      // A reserved node that takes no new pod of the gang (cordoned, NotReady, gone, ...) is
      // the admission controller's to replace, by the same rule: a pod pinned there only fails
      // to schedule until the move deletes it, and it read as recreated there (audit session 34,
      // D2-3).
      if (static_cast<size_t>(rank) < ctx.nodes.size()) {
        std::shared_ptr<const kube::Node> node = informers_.nodes.Get(ctx.nodes[rank]);
        if (std::optional<NodeFault> fault =
                DetectGangNodeFault(job, ctx.nodes[rank], node.get(), tolerations)) {
          spdlog::info("TrainingJob {}: rank {} waits to be moved: {}", key, rank, fault->detail);
          // Nobody else wakes the job if the node recovers before it is replaced.
          recheck = recheck ? std::min(*recheck, kHeldRankRecheck) : kHeldRankRecheck;
          continue;
        }
      }
      absl::StatusOr<std::string> body = controller::BuildPod(job, ctx, rank);
      if (!body.ok()) {
        // The template cannot become a pod: nothing will change that but an edit of the job.
        return finish(false, "InvalidTemplate",
                      absl::StrCat("cannot build the pods: ", body.status().message()));
      }
      missing.emplace_back(rank, *std::move(body));
    }
    // Several creates in flight: one at a time, a 64-rank gang waits for 64 round trips.
    // Expected before the create is sent: the informer may show the pod before Create returns.
    auto pod_name = [&](size_t i) { return controller::RankPodName(meta.name, missing[i].first); };
    for (size_t i = 0; i < missing.size(); ++i) expected_pods_.Expect(key, pod_name(i), now_time);
    std::vector<absl::Status> results(missing.size());
    ParallelFor(missing.size(), write_concurrency_, [&](size_t i) {
      // Strict: a misspelt field of the template is refused, not dropped (audit session 36,
      // F3: `nodeSelectr` placed the gang on another flavor without a word).
      results[i] = client_
                       .Create(kube::Pods(), meta.namespace_, missing[i].second,
                               {.field_validation = "Strict"})
                       .status();
    });
    absl::Status first_error;
    std::optional<std::string> unknown_fields;
    for (size_t i = 0; i < missing.size(); ++i) {
      if (results[i].ok()) {
        ++created;
        continue;
      }
      if (kube::IsStrictDecodingError(results[i])) {
        expected_pods_.Observed(key, pod_name(i));
        if (!unknown_fields)
          unknown_fields = controller::TemplateDecodingError(std::string(results[i].message()));
        continue;
      }
      if (absl::IsAlreadyExists(results[i])) {
        metrics_.pod_create_conflicts_total.WithLabels({}).Inc();
        continue;  // there already: its informer event clears the expectation
      }
      expected_pods_.Observed(key, pod_name(i));  // not created: nothing will show up
      if (first_error.ok()) {
        RecordFailedCreate(meta, "pod", pod_name(i), results[i]);
        informers_.create_failures.Set(
            key, FailedRequestMessage("create", "pod", meta.namespace_, pod_name(i), results[i]));
        first_error = results[i];
      }
    }
    if (unknown_fields) {
      // The same template is refused every time, and an admitted job's spec cannot change.
      metrics_.pods_created_total.WithLabels({}).Inc(created);
      return finish(false, "InvalidTemplate",
                    absl::StrCat("cannot create the pods: ", *unknown_fields));
    }
    if (!first_error.ok()) {
      metrics_.pods_created_total.WithLabels({}).Inc(created);
      // Admitted, whatever its pods: a job that holds a reservation must not read as Queued
      // (the FailedCreate event says what is wrong; the step is retried with backoff).
      if (current.phase == "Queued" || current.phase.empty()) {
        wanted.phase = "Admitted";
        (void)write();
      } else if (resizing) {
        // A growth whose new pods are refused is resizing all the same: the pods-ready
        // timeout counts from here (NotRunningSince).
        mark_resizing();
        (void)write();
      }
      return first_error;
    }
    metrics_.pods_created_total.WithLabels({}).Inc(created);
    if (!squatted) informers_.create_failures.Clear(key);
    // A rank whose pod ran on the node it is reserved on now lost that pod to someone else:
    // the operator deletes a rank's pod only to restart the gang or to move the rank.
    std::vector<std::string> again;
    for (size_t i = 0; i < missing.size(); ++i) {
      const int rank = missing[i].first;
      auto was = seen_on.find(rank);
      if (!results[i].ok() || was == seen_on.end() ||
          static_cast<size_t>(rank) >= ctx.nodes.size() || ctx.nodes[rank] != was->second) {
        continue;
      }
      again.push_back(absl::StrCat("pod ", pod_name(i), " (rank ", rank, ") on ", was->second));
    }
    if (!again.empty()) {
      const std::string message =
          absl::StrCat(absl::StrJoin(again, ", "), again.size() == 1 ? " was" : " were",
                       " deleted while the gang ran (not by phalanx-operator); created again ",
                       "on the same node");
      spdlog::warn("TrainingJob {}: {}", key, message);
      (void)events_.Record(JobReference(meta), kube::EventType::kWarning, "PodRecreated", message);
    }
    if (created > 0) {
      spdlog::info("TrainingJob {}: created {} pods (world size {}, restart {})", key, created,
                   world, generation);
    }
  }

  if (running > 0 && running + done == world && beyond == 0) {
    if (FindCondition(current.conditions, kConditionResizing) != nullptr) {
      updates.push_back(Cond(kConditionResizing, false, "Resized",
                             absl::StrCat("the gang runs ", world, " ranks")));
    }
    wanted.phase = "Running";
    if (wanted.start_time.empty()) wanted.start_time = now;
    std::string message =
        done > 0 ? absl::StrCat(running, " of ", world, " ranks running, ", done, " succeeded")
        : world == 1 ? std::string("its one rank is running")
                     : absl::StrCat("all ", world, " ranks are running");
    if (current.phase != "Running") on_written.emplace_back("Running", message);
    updates.push_back(Cond(kConditionRunning, true,
                           done > 0 ? "RanksRunningOrSucceeded" : "AllRanksRunning", message));
    if (FindCondition(current.conditions, kConditionRestarting) != nullptr) {
      updates.push_back(Cond(kConditionRestarting, false, "AllRanksRunning", message));
    }
  } else if (resizing) {
    mark_resizing();
  } else if (current.phase != "Restarting") {
    wanted.phase = "Admitted";
    if (FindCondition(current.conditions, kConditionRunning) != nullptr) {
      updates.push_back(Cond(kConditionRunning, false, "RanksNotRunning",
                             absl::StrCat(running, " of ", world, " ranks running")));
    }
  }
  RETURN_IF_ERROR(write());
  // After the status: a slice the API server refuses must not hold back the job's phase.
  std::vector<controller::RankAddress> addresses;
  for (const auto& [rank, pod] : ranks) {
    if (pod->pod_ip.empty() || Terminal(*pod)) continue;
    addresses.push_back({.rank = rank,
                         .pod = pod->meta.name,
                         .uid = pod->meta.uid,
                         .ip = pod->pod_ip,
                         .node = pod->node_name.str()});
  }
  RETURN_IF_ERROR(SyncEndpoints(job, std::move(addresses)));
  // Look again when the deadline passes (a second late: the check above is `>=`).
  if (deadline) {
    const absl::Duration left = *deadline - now_time + absl::Seconds(1);
    recheck = recheck ? std::min(*recheck, left) : left;
  }
  return recheck;
}

}  // namespace phalanx::operator_server
