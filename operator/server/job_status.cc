#include "operator/server/job_status.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kube/json.h"
#include "operator/server/node_faults.h"
#include "rapidjson/document.h"

namespace phalanx::operator_server {
namespace {

using Alloc = rapidjson::Document::AllocatorType;

const rapidjson::Value* StatusOf(const rapidjson::Document& doc) {
  if (!doc.IsObject()) return nullptr;
  auto it = doc.FindMember("status");
  if (it == doc.MemberEnd() || !it->value.IsObject()) return nullptr;
  return &it->value;
}

void AddString(rapidjson::Value& obj, std::string_view key, std::string_view value, Alloc& a) {
  obj.AddMember(kube::JsonString(key, a), kube::JsonString(value, a), a);
}

rapidjson::Value ConditionsJson(const std::vector<Condition>& conditions, Alloc& a) {
  rapidjson::Value list(rapidjson::kArrayType);
  for (const Condition& c : conditions) {
    rapidjson::Value item(rapidjson::kObjectType);
    AddString(item, "type", c.type, a);
    AddString(item, "status", c.status, a);
    AddString(item, "reason", c.reason, a);
    AddString(item, "message", c.message, a);
    AddString(item, "lastTransitionTime", c.last_transition_time, a);
    if (c.observed_generation > 0) item.AddMember("observedGeneration", c.observed_generation, a);
    list.PushBack(item, a);
  }
  return list;
}

bool Owned(const std::vector<std::string_view>& owned, std::string_view type) {
  return std::find(owned.begin(), owned.end(), type) != owned.end();
}

}  // namespace

kube::ObjectReference JobReference(const kube::ObjectMeta& job) {
  return {.api_version = kube::TrainingJobs().ApiVersion(),
          .kind = std::string(kube::kTrainingJobKind),
          .namespace_ = job.namespace_,
          .name = job.name,
          .uid = job.uid};
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

int64_t ParseUnixSeconds(std::string_view rfc3339) {
  absl::Time t;
  std::string error;
  if (rfc3339.empty() || !absl::ParseTime(absl::RFC3339_full, std::string(rfc3339), &t, &error)) return 0;
  return absl::ToUnixSeconds(t);
}

int64_t QueuedSince(const std::vector<Condition>& conditions, std::string_view creation_timestamp,
                    int64_t now) {
  const int64_t created = ParseUnixSeconds(creation_timestamp);
  const Condition* queued = FindCondition(conditions, kConditionQueued);
  if (queued == nullptr) return created;
  if (queued->status != "True") return now;
  return std::max(created, ParseUnixSeconds(queued->last_transition_time));
}

int64_t AdmittedSince(const std::vector<Condition>& conditions) {
  const Condition* admitted = FindCondition(conditions, kConditionAdmitted);
  if (admitted == nullptr || admitted->status != "True") return 0;
  return ParseUnixSeconds(admitted->last_transition_time);
}

int64_t NotRunningSince(const std::vector<Condition>& conditions) {
  const int64_t admitted = AdmittedSince(conditions);
  if (admitted <= 0) return 0;
  const Condition* running = FindCondition(conditions, kConditionRunning);
  if (running != nullptr && running->status == "True") {
    const Condition* resizing = FindCondition(conditions, kConditionResizing);
    if (resizing == nullptr || resizing->status != "True") return 0;
    return std::max(admitted, ParseUnixSeconds(resizing->last_transition_time));
  }
  int64_t since = admitted;
  if (running != nullptr) since = std::max(since, ParseUnixSeconds(running->last_transition_time));
  // A shrink to the ranks that ran starts the clock again for the gang as it is now.
  const Condition* shrunk = FindCondition(conditions, kConditionShrunk);
  if (shrunk != nullptr && shrunk->status == "True" && shrunk->reason == kReasonPodsReadyTimeout) {
    since = std::max(since, ParseUnixSeconds(shrunk->last_transition_time));
  }
  return since;
}

int64_t RequeueDelaySeconds(const PodsReadyPolicy& policy, int32_t count) {
  int64_t delay = std::max<int64_t>(1, policy.backoff_base_seconds);
  for (int32_t i = 1; i < count && delay < policy.backoff_max_seconds; ++i) delay *= 2;
  return std::min(delay, policy.backoff_max_seconds);
}

std::optional<absl::Time> AdmittedAt(const std::vector<Condition>& conditions) {
  const int64_t since = AdmittedSince(conditions);
  if (since <= 0) return std::nullopt;
  return absl::FromUnixSeconds(since);
}

std::vector<Condition> ReadConditions(std::string_view object_json) {
  std::vector<Condition> out;
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(object_json);
  if (!doc.ok()) return out;
  const rapidjson::Value* status = StatusOf(*doc);
  if (status == nullptr) return out;
  auto it = status->FindMember("conditions");
  if (it == status->MemberEnd() || !it->value.IsArray()) return out;
  for (const rapidjson::Value& c : it->value.GetArray()) {
    if (!c.IsObject()) continue;
    auto generation = c.FindMember("observedGeneration");
    out.push_back({std::string(kube::StringMember(c, "type")),
                   std::string(kube::StringMember(c, "status")),
                   std::string(kube::StringMember(c, "reason")),
                   std::string(kube::StringMember(c, "message")),
                   std::string(kube::StringMember(c, "lastTransitionTime")),
                   generation != c.MemberEnd() && generation->value.IsInt64()
                       ? generation->value.GetInt64()
                       : 0});
  }
  return out;
}

UnreadableJob ReadUnreadableJob(std::string_view object_json) {
  UnreadableJob out;
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(object_json);
  if (!doc.ok() || !doc->IsObject()) return out;
  if (auto spec = doc->FindMember("spec"); spec != doc->MemberEnd() && spec->value.IsObject()) {
    out.queue_name = std::string(kube::StringMember(spec->value, "queueName"));
  }
  const rapidjson::Value* status = StatusOf(*doc);
  if (status != nullptr) {
    auto admission = status->FindMember("admission");
    out.admitted = admission != status->MemberEnd() && admission->value.IsObject();
    out.phase = std::string(kube::StringMember(*status, "phase"));
  }
  return out;
}

std::string ReadStatusString(std::string_view object_json, std::string_view key) {
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(object_json);
  if (!doc.ok()) return "";
  const rapidjson::Value* status = StatusOf(*doc);
  return status == nullptr ? "" : std::string(kube::StringMember(*status, key));
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

std::vector<Condition> Deactivate(const std::vector<Condition>& current,
                                  const std::vector<std::string_view>& types,
                                  std::string_view reason) {
  // metav1.Condition's message limit; cut on a UTF-8 character boundary.
  constexpr size_t kMaxMessage = 32768;
  std::vector<Condition> out;
  for (std::string_view type : types) {
    const Condition* c = FindCondition(current, type);
    if (c == nullptr || c->status != "True") continue;
    std::string message = absl::StrCat("Previously: ", c->message);
    if (message.size() > kMaxMessage) {
      size_t cut = kMaxMessage;
      while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
      message.resize(cut);
    }
    out.push_back({.type = c->type, .status = "False", .reason = std::string(reason),
                   .message = std::move(message)});
  }
  return out;
}

std::vector<Condition> MergeConditions(const std::vector<Condition>& current,
                                       const std::vector<std::string_view>& owned,
                                       const std::vector<Condition>& updates,
                                       std::string_view now, int64_t generation) {
  std::vector<Condition> out;
  for (std::string_view type : owned) {
    const Condition* update = FindCondition(updates, type);
    const Condition* existing = FindCondition(current, type);
    if (update == nullptr) {
      if (existing != nullptr) out.push_back(*existing);
      continue;
    }
    Condition c = *update;
    c.last_transition_time = existing != nullptr && existing->status == c.status &&
                                     !existing->last_transition_time.empty()
                                 ? existing->last_transition_time
                                 : std::string(now);
    c.observed_generation = generation;
    out.push_back(std::move(c));
  }
  return out;
}

bool SameConditions(const std::vector<Condition>& current,
                    const std::vector<std::string_view>& owned,
                    const std::vector<Condition>& wanted) {
  size_t owned_current = 0;
  for (const Condition& c : current) owned_current += Owned(owned, c.type) ? 1 : 0;
  if (owned_current != wanted.size()) return false;
  for (const Condition& w : wanted) {
    const Condition* c = FindCondition(current, w.type);
    if (c == nullptr || c->status != w.status || c->reason != w.reason ||
        c->message != w.message || c->observed_generation != w.observed_generation) {
      return false;
    }
  }
  return true;
}

bool GangResizing(bool elastic, int32_t world, const std::vector<int>& present, int beyond) {
  if (beyond > 0) return true;
  if (!elastic || static_cast<int32_t>(present.size()) >= world) return false;
  // A growth leaves ranks 0..k-1 and adds k..world-1.
  return present.empty() || present.back() == static_cast<int>(present.size()) - 1;
}

std::string AdmissionStatusApply(const kube::ObjectMeta& job, const AdmissionStatus& s) {
  rapidjson::Document doc = kube::NewApiObject(kube::TrainingJobs().ApiVersion(),
                                               kube::kTrainingJobKind, job.name, job.namespace_);
  Alloc& a = doc.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  if (s.admission) {
    rapidjson::Value admission(rapidjson::kObjectType);
    AddString(admission, "clusterQueue", s.admission->cluster_queue, a);
    AddString(admission, "flavor", s.admission->flavor, a);
    admission.AddMember("replicas", s.admission->replicas, a);
    if (s.admission->node_selector) {
      rapidjson::Value selector(rapidjson::kObjectType);
      for (const auto& [key, value] : *s.admission->node_selector) {
        selector.AddMember(kube::JsonString(key, a), kube::JsonString(value, a), a);
      }
      admission.AddMember("nodeSelector", selector, a);
    }
    if (s.admission->tolerations) {
      rapidjson::Value list(rapidjson::kArrayType);
      for (const kube::Toleration& t : *s.admission->tolerations) {
        rapidjson::Value entry(rapidjson::kObjectType);
        if (!t.key.empty()) AddString(entry, "key", t.key.str(), a);
        if (!t.operator_.empty()) AddString(entry, "operator", t.operator_.str(), a);
        if (!t.value.empty()) AddString(entry, "value", t.value.str(), a);
        if (!t.effect.empty()) AddString(entry, "effect", t.effect.str(), a);
        list.PushBack(entry, a);
      }
      admission.AddMember("tolerations", list, a);
    }
    status.AddMember("admission", admission, a);
  }
  if (s.placement) {
    rapidjson::Value placement(rapidjson::kObjectType);
    AddString(placement, "domain", s.placement->domain, a);
    AddString(placement, "level", s.placement->level, a);
    rapidjson::Value nodes(rapidjson::kArrayType);
    for (const std::string& n : s.placement->nodes) nodes.PushBack(kube::JsonString(n, a), a);
    placement.AddMember("nodes", nodes, a);
    status.AddMember("placement", placement, a);
  }
  status.AddMember("conditions", ConditionsJson(s.conditions, a), a);
  doc.AddMember("status", status, a);
  return kube::ToJson(doc);
}

std::string RequeueStateApply(const kube::ObjectMeta& job,
                              const std::optional<kube::TrainingJobRequeueState>& state) {
  rapidjson::Document doc = kube::NewApiObject(kube::TrainingJobs().ApiVersion(),
                                               kube::kTrainingJobKind, job.name, job.namespace_);
  Alloc& a = doc.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  if (state) {
    rapidjson::Value rq(rapidjson::kObjectType);
    rq.AddMember("count", state->count, a);
    if (!state->requeue_at.empty()) AddString(rq, "requeueAt", state->requeue_at, a);
    status.AddMember("requeueState", rq, a);
  }
  doc.AddMember("status", status, a);
  return kube::ToJson(doc);
}

std::string SuspendApply(const kube::ObjectMeta& job) {
  rapidjson::Document doc = kube::NewApiObject(kube::TrainingJobs().ApiVersion(),
                                               kube::kTrainingJobKind, job.name, job.namespace_);
  Alloc& a = doc.GetAllocator();
  rapidjson::Value spec(rapidjson::kObjectType);
  spec.AddMember("suspend", true, a);
  doc.AddMember("spec", spec, a);
  return kube::ToJson(doc);
}

kube::TrainingJobPlacement PlacementStatus(const placement::Placement& p) {
  return {.domain = p.domain.path.empty() ? "cluster" : p.domain.path.back(),
          .level = p.domain.level,
          .nodes = p.nodes};
}

std::string LifecycleStatusApply(const kube::ObjectMeta& job, const LifecycleStatus& s) {
  rapidjson::Document doc = kube::NewApiObject(kube::TrainingJobs().ApiVersion(),
                                               kube::kTrainingJobKind, job.name, job.namespace_);
  Alloc& a = doc.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  if (!s.phase.empty()) AddString(status, "phase", s.phase, a);
  status.AddMember("restarts", s.restarts, a);
  if (s.node_fault_restarts > 0) status.AddMember("nodeFaultRestarts", s.node_fault_restarts, a);
  if (s.ignored_restarts > 0) status.AddMember("ignoredRestarts", s.ignored_restarts, a);
  if (!s.start_time.empty()) AddString(status, "startTime", s.start_time, a);
  if (!s.completion_time.empty()) AddString(status, "completionTime", s.completion_time, a);
  if (job.generation > 0) status.AddMember("observedGeneration", job.generation, a);
  status.AddMember("conditions", ConditionsJson(s.conditions, a), a);
  doc.AddMember("status", status, a);
  return kube::ToJson(doc);
}

std::string FinalizerApply(const kube::Resource& resource, const kube::ObjectMeta& meta,
                           std::string_view finalizer, bool with_finalizer) {
  rapidjson::Document doc =
      kube::NewApiObject(resource.ApiVersion(), resource.kind, meta.name, meta.namespace_);
  Alloc& a = doc.GetAllocator();
  rapidjson::Value finalizers(rapidjson::kArrayType);
  if (with_finalizer) finalizers.PushBack(kube::JsonString(finalizer, a), a);
  doc["metadata"].AddMember("finalizers", finalizers, a);
  // A uid precondition: never create or touch a successor object of the same name.
  doc["metadata"].AddMember("uid", kube::JsonString(meta.uid, a), a);
  return kube::ToJson(doc);
}

}  // namespace phalanx::operator_server
