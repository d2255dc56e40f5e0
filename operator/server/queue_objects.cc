#include "operator/server/queue_objects.h"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/fnv.h"
#include "common/quantity.h"
#include "common/resources.h"
#include "common/status.h"
#include "kube/decode.h"
#include "kube/json.h"
#include "rapidjson/document.h"

namespace phalanx::operator_server {
namespace {

using admission::ClusterQueue;
using kube::Member;
using rapidjson::Value;

absl::string_view Piece(std::string_view s) { return absl::string_view(s.data(), s.size()); }

absl::Status Invalid(std::string_view field, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(Piece(field), ": ", Piece(problem)));
}

std::map<std::string, std::string> ToMap(const kube::StringMap& map) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : map) out.emplace(key, value);
  return out;
}

// An API object's metadata, through the shared decoder so that it reads like every other
// object's, and the title ("ClusterTrainingQueue llm") that prefixes every error about it.
struct Meta {
  kube::ObjectMeta meta;
  std::string title;
};

absl::StatusOr<Meta> DecodeMeta(std::string_view json, std::string_view kind) {
  absl::StatusOr<kube::RawObject> raw = kube::Decode<kube::RawObject>(json);
  if (!raw.ok()) return Annotate(raw.status(), kind);
  Meta out{std::move(raw->meta), std::string(kind)};
  absl::StrAppend(&out.title, " ", out.meta.Key());
  return out;
}

// The object as a DOM, for its spec.
absl::StatusOr<rapidjson::Document> ParseDocument(std::string_view json, const Meta& meta) {
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(json);
  if (!doc.ok()) return Annotate(doc.status(), meta.title);
  if (!doc->IsObject()) return Invalid(meta.title, "not a JSON object");
  return doc;
}

// ---- Fields, each error naming the field's path --------------------------------------------

// The member `key` of `parent` if it is an object, nullptr when absent.
absl::StatusOr<const Value*> FindObject(const Value& parent, std::string_view key,
                                        std::string_view field) {
  const Value* v = Member(parent, key);
  if (v != nullptr && !v->IsObject()) return Invalid(field, "not an object");
  return v;
}

// Calls read(item, item_field) for every element of the array member `key` (absent: none), each
// of which must be an object.
template <typename Read>
absl::Status ForEachObject(const Value& parent, std::string_view key, const std::string& field,
                           Read read) {
  const Value* array = Member(parent, key);
  if (array == nullptr) return absl::OkStatus();
  if (!array->IsArray()) return Invalid(field, "not an array");
  for (rapidjson::SizeType i = 0; i < array->Size(); ++i) {
    std::string item = absl::StrCat(field, "[", i, "]");
    if (!(*array)[i].IsObject()) return Invalid(item, "not an object");
    RETURN_IF_ERROR(read((*array)[i], item));
  }
  return absl::OkStatus();
}

absl::Status ReadStringList(const Value& parent, std::string_view key, const std::string& field,
                            std::vector<std::string>* out) {
  const Value* array = Member(parent, key);
  if (array == nullptr) return absl::OkStatus();
  if (!array->IsArray()) return Invalid(field, "not an array");
  for (rapidjson::SizeType i = 0; i < array->Size(); ++i) {
    const Value& item = (*array)[i];
    if (!item.IsString()) return Invalid(absl::StrCat(field, "[", i, "]"), "not a string");
    out->emplace_back(item.GetString(), item.GetStringLength());
  }
  return absl::OkStatus();
}

// A map of strings; errors name the entry as "field[key]", as ParseResourceList does.
absl::Status ReadStringMap(const Value& parent, std::string_view key, const std::string& field,
                           std::map<std::string, std::string>* out) {
  ASSIGN_OR_RETURN(const Value* map, FindObject(parent, key, field));
  if (map == nullptr) return absl::OkStatus();
  for (const auto& entry : map->GetObject()) {
    std::string name(entry.name.GetString(), entry.name.GetStringLength());
    if (!entry.value.IsString()) return Invalid(absl::StrCat(field, "[", name, "]"), "not a string");
    (*out)[name].assign(entry.value.GetString(), entry.value.GetStringLength());
  }
  return absl::OkStatus();
}

// An enum field: absent (or "") keeps `*out`, a value outside `values` is an error.
template <typename E>
absl::Status ReadEnum(const Value& parent, std::string_view key, const std::string& field,
                      std::initializer_list<std::pair<std::string_view, E>> values, E* out) {
  std::string text;
  RETURN_IF_ERROR(kube::ReadString(parent, key, field, &text));
  if (text.empty()) return absl::OkStatus();
  for (const auto& [name, value] : values) {
    if (name == text) {
      *out = value;
      return absl::OkStatus();
    }
  }
  std::vector<std::string_view> names;
  for (const auto& entry : values) names.push_back(entry.first);
  return Invalid(field, absl::StrCat("\"", text, "\" is not one of ",
                                     absl::StrJoin(names, ", ", [](std::string* o, auto n) {
                                       absl::StrAppend(o, Piece(n));
                                     })));
}

// An int-or-string quantity (a YAML `64` arrives as a JSON number) that must not be negative;
// nullopt when absent.
absl::StatusOr<std::optional<Quantity>> ReadQuantity(const Value& parent, std::string_view key,
                                                     const std::string& field) {
  const Value* v = Member(parent, key);
  if (v == nullptr) return std::nullopt;
  std::string text;
  if (v->IsString()) {
    text.assign(v->GetString(), v->GetStringLength());
  } else if (v->IsNumber()) {
    text = kube::ToJson(*v);
  } else {
    return Invalid(field, "not a quantity (want a string or a number)");
  }
  absl::StatusOr<Quantity> quantity = Quantity::Parse(text);
  if (!quantity.ok()) return Annotate(quantity.status(), field);
  if (quantity->IsNegative()) {
    return Invalid(field, absl::StrCat("must not be negative, got \"", text, "\""));
  }
  return std::optional<Quantity>(*quantity);
}

// A quota in canonical units of `resource` (CanonicalAmount, as ParseResourceList and so the
// simulator's quotas count it); nullopt when absent.
absl::StatusOr<std::optional<int64_t>> ReadAmount(const Value& parent, std::string_view key,
                                                  const std::string& field,
                                                  std::string_view resource) {
  ASSIGN_OR_RETURN(std::optional<Quantity> quantity, ReadQuantity(parent, key, field));
  if (!quantity.has_value()) return std::nullopt;
  absl::StatusOr<int64_t> amount = CanonicalAmount(resource, *quantity);
  if (!amount.ok()) return Annotate(amount.status(), field);
  return std::optional<int64_t>(*amount);
}

absl::Status ReadToleration(const Value& item, const std::string& field,
                            placement::Toleration* t) {
  RETURN_IF_ERROR(kube::ReadString(item, "key", field + ".key", &t->key));
  RETURN_IF_ERROR(kube::ReadString(item, "operator", field + ".operator", &t->op));
  if (t->op.empty()) t->op = "Equal";
  RETURN_IF_ERROR(kube::ReadString(item, "value", field + ".value", &t->value));
  return kube::ReadString(item, "effect", field + ".effect", &t->effect);
}

// ---- ClusterQueue --------------------------------------------------------------------------

absl::Status ReadResourceQuota(const Value& item, const std::string& field,
                               admission::ResourceQuota* q) {
  RETURN_IF_ERROR(kube::ReadString(item, "name", field + ".name", &q->resource));
  ASSIGN_OR_RETURN(std::optional<int64_t> nominal,
                   ReadAmount(item, "nominalQuota", field + ".nominalQuota", q->resource));
  if (!nominal.has_value()) return Invalid(field + ".nominalQuota", "missing");
  q->nominal = *nominal;
  ASSIGN_OR_RETURN(q->borrowing_limit,
                   ReadAmount(item, "borrowingLimit", field + ".borrowingLimit", q->resource));
  ASSIGN_OR_RETURN(q->lending_limit,
                   ReadAmount(item, "lendingLimit", field + ".lendingLimit", q->resource));
  return absl::OkStatus();
}

absl::Status ReadResourceGroups(const Value& spec, ClusterQueue& cq) {
  return ForEachObject(spec, "resourceGroups", "spec.resourceGroups", [&](const Value& g,
                                                                          const std::string& gf) {
    admission::ResourceGroup& group = cq.resource_groups.emplace_back();
    RETURN_IF_ERROR(ReadStringList(g, "coveredResources", gf + ".coveredResources",
                                   &group.covered_resources));
    return ForEachObject(g, "flavors", gf + ".flavors", [&](const Value& f,
                                                            const std::string& ff) {
      admission::FlavorQuotas& flavor = group.flavors.emplace_back();
      RETURN_IF_ERROR(kube::ReadString(f, "name", ff + ".name", &flavor.flavor));
      return ForEachObject(f, "resources", ff + ".resources",
                           [&](const Value& r, const std::string& rf) {
                             return ReadResourceQuota(r, rf, &flavor.resources.emplace_back());
                           });
    });
  });
}

// Absent: Kueue's null selector, which admits no namespace; {} admits every namespace.
absl::Status ReadNamespaceSelector(const Value& spec, ClusterQueue& cq) {
  const std::string field = "spec.namespaceSelector";
  ASSIGN_OR_RETURN(const Value* selector, FindObject(spec, "namespaceSelector", field));
  if (selector == nullptr) {
    cq.namespace_selector = std::nullopt;
    return absl::OkStatus();
  }
  admission::LabelSelector& out = cq.namespace_selector.emplace();
  RETURN_IF_ERROR(
      ReadStringMap(*selector, "matchLabels", field + ".matchLabels", &out.match_labels));
  return ForEachObject(*selector, "matchExpressions", field + ".matchExpressions",
                       [&](const Value& e, const std::string& ef) {
                         admission::LabelSelectorRequirement& req =
                             out.match_expressions.emplace_back();
                         RETURN_IF_ERROR(kube::ReadString(e, "key", ef + ".key", &req.key));
                         RETURN_IF_ERROR(
                             kube::ReadString(e, "operator", ef + ".operator", &req.op));
                         return ReadStringList(e, "values", ef + ".values", &req.values);
                       });
}

absl::Status ReadPreemption(const Value& spec, ClusterQueue& cq) {
  using admission::BorrowWithinCohortPolicy;
  using admission::ReclaimWithinCohortPolicy;
  using admission::WithinClusterQueuePolicy;
  ASSIGN_OR_RETURN(const Value* preemption,
                   FindObject(spec, "preemption", "spec.preemption"));
  if (preemption == nullptr) return absl::OkStatus();
  admission::ClusterQueuePreemption& out = cq.preemption;
  RETURN_IF_ERROR(ReadEnum(
      *preemption, "withinClusterQueue", "spec.preemption.withinClusterQueue",
      {{"Never", WithinClusterQueuePolicy::kNever},
       {"LowerPriority", WithinClusterQueuePolicy::kLowerPriority},
       {"LowerOrNewerEqualPriority", WithinClusterQueuePolicy::kLowerOrNewerEqualPriority}},
      &out.within_cluster_queue));
  RETURN_IF_ERROR(ReadEnum(*preemption, "reclaimWithinCohort",
                           "spec.preemption.reclaimWithinCohort",
                           {{"Never", ReclaimWithinCohortPolicy::kNever},
                            {"LowerPriority", ReclaimWithinCohortPolicy::kLowerPriority},
                            {"Any", ReclaimWithinCohortPolicy::kAny}},
                           &out.reclaim_within_cohort));
  const std::string bf = "spec.preemption.borrowWithinCohort";
  ASSIGN_OR_RETURN(const Value* borrow, FindObject(*preemption, "borrowWithinCohort", bf));
  if (borrow == nullptr) return absl::OkStatus();
  RETURN_IF_ERROR(ReadEnum(*borrow, "policy", bf + ".policy",
                           {{"Never", BorrowWithinCohortPolicy::kNever},
                            {"LowerPriority", BorrowWithinCohortPolicy::kLowerPriority}},
                           &out.borrow_within_cohort.policy));
  if (Member(*borrow, "maxPriorityThreshold") != nullptr) {
    int32_t threshold = 0;
    RETURN_IF_ERROR(kube::ReadInt32(*borrow, "maxPriorityThreshold",
                                    bf + ".maxPriorityThreshold", &threshold));
    out.borrow_within_cohort.max_priority_threshold = threshold;
  }
  return absl::OkStatus();
}

absl::Status ReadStopPolicy(const Value& spec, admission::StopPolicy& out) {
  using admission::StopPolicy;
  return ReadEnum(spec, "stopPolicy", "spec.stopPolicy",
                  {{"None", StopPolicy::kNone},
                   {"Hold", StopPolicy::kHold},
                   {"HoldAndDrain", StopPolicy::kHoldAndDrain}},
                  &out);
}

absl::Status ReadClusterQueueSpec(const Value& spec, ClusterQueue& cq) {
  using admission::QueueingStrategy;
  RETURN_IF_ERROR(kube::ReadString(spec, "cohort", "spec.cohort", &cq.cohort));
  RETURN_IF_ERROR(ReadEnum(spec, "queueingStrategy", "spec.queueingStrategy",
                           {{"StrictFIFO", QueueingStrategy::kStrictFifo},
                            {"BestEffortFIFO", QueueingStrategy::kBestEffortFifo}},
                           &cq.queueing_strategy));
  RETURN_IF_ERROR(ReadResourceGroups(spec, cq));
  RETURN_IF_ERROR(ReadNamespaceSelector(spec, cq));
  RETURN_IF_ERROR(ReadPreemption(spec, cq));
  ASSIGN_OR_RETURN(const Value* fair, FindObject(spec, "fairSharing", "spec.fairSharing"));
  if (fair != nullptr) {
    // A quantity, so "500m" is half the default weight, as in Kueue.
    ASSIGN_OR_RETURN(std::optional<Quantity> weight,
                     ReadQuantity(*fair, "weight", "spec.fairSharing.weight"));
    if (weight.has_value()) cq.fair_sharing_weight = weight->ToDouble();
  }
  RETURN_IF_ERROR(ReadStopPolicy(spec, cq.stop_policy));
  RETURN_IF_ERROR(ReadEnum(spec, "backfillQuota", "spec.backfillQuota",
                           {{"Never", admission::BackfillQuota::kNever},
                            {"HoldForHead", admission::BackfillQuota::kHoldForHead}},
                           &cq.backfill_quota));
  RETURN_IF_ERROR(kube::ReadInt64(spec, "localityWaitSeconds", "spec.localityWaitSeconds",
                                  &cq.locality_wait_seconds));
  if (cq.locality_wait_seconds < 0) {
    return Invalid("spec.localityWaitSeconds",
                   absl::StrCat("must not be negative, got ", cq.locality_wait_seconds));
  }
  return absl::OkStatus();
}

// ---- TrainingJob ---------------------------------------------------------------------------

// metadata.resourceVersion as a Workload::revision: the number itself when it is one (etcd's
// revision, which every write raises), else an FNV-1a hash of the text; never 0 unless empty.
uint64_t Revision(std::string_view resource_version) {
  if (resource_version.empty()) return 0;
  uint64_t value = 0;
  const char* end = resource_version.data() + resource_version.size();
  auto [ptr, error] = std::from_chars(resource_version.data(), end, value);
  if (error == std::errc() && ptr == end && value != 0) return value;
  const uint64_t hash = Fnv1a64(resource_version);
  return hash == 0 ? 1 : hash;
}

}  // namespace

absl::StatusOr<admission::ResourceFlavor> DecodeResourceFlavor(std::string_view json) {
  ASSIGN_OR_RETURN(Meta meta, DecodeMeta(json, "NodeFlavor"));
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseDocument(json, meta));
  admission::ResourceFlavor flavor;
  flavor.name = meta.meta.name;
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(const Value* spec, FindObject(doc, "spec", "spec"));
    if (spec == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(ReadStringMap(*spec, "nodeLabels", "spec.nodeLabels", &flavor.node_labels));
    RETURN_IF_ERROR(ForEachObject(*spec, "nodeTaints", "spec.nodeTaints",
                                  [&](const Value& item, const std::string& field) {
                                    placement::Taint& t = flavor.node_taints.emplace_back();
                                    RETURN_IF_ERROR(
                                        kube::ReadString(item, "key", field + ".key", &t.key));
                                    RETURN_IF_ERROR(kube::ReadString(item, "value",
                                                                     field + ".value", &t.value));
                                    return kube::ReadString(item, "effect", field + ".effect",
                                                            &t.effect);
                                  }));
    RETURN_IF_ERROR(ForEachObject(*spec, "tolerations", "spec.tolerations",
                                  [&](const Value& item, const std::string& field) {
                                    return ReadToleration(item, field,
                                                          &flavor.tolerations.emplace_back());
                                  }));
    return kube::ReadString(*spec, "topologyName", "spec.topologyName", &flavor.topology_name);
  }();
  if (!status.ok()) return Annotate(status, meta.title);
  return flavor;
}

absl::StatusOr<ClusterQueue> DecodeClusterQueue(std::string_view json) {
  ASSIGN_OR_RETURN(Meta meta, DecodeMeta(json, "ClusterTrainingQueue"));
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseDocument(json, meta));
  ClusterQueue cq;
  cq.name = meta.meta.name;
  cq.terminating = !meta.meta.deletion_timestamp.empty();
  absl::Status status = [&]() -> absl::Status {
    static const Value kNoSpec(rapidjson::kObjectType);
    ASSIGN_OR_RETURN(const Value* spec, FindObject(doc, "spec", "spec"));
    return ReadClusterQueueSpec(spec != nullptr ? *spec : kNoSpec, cq);
  }();
  if (!status.ok()) return Annotate(status, meta.title);
  return cq;
}

absl::StatusOr<admission::LocalQueue> DecodeLocalQueue(std::string_view json) {
  ASSIGN_OR_RETURN(Meta meta, DecodeMeta(json, "TrainingQueue"));
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseDocument(json, meta));
  admission::LocalQueue lq{.namespace_name = meta.meta.namespace_, .name = meta.meta.name};
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(const Value* spec, FindObject(doc, "spec", "spec"));
    if (spec == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(ReadStopPolicy(*spec, lq.stop_policy));
    return kube::ReadString(*spec, "clusterQueue", "spec.clusterQueue", &lq.cluster_queue);
  }();
  if (!status.ok()) return Annotate(status, meta.title);
  return lq;
}

absl::StatusOr<PriorityClass> DecodePriorityClass(std::string_view json) {
  ASSIGN_OR_RETURN(Meta meta, DecodeMeta(json, "PriorityClass"));
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseDocument(json, meta));
  if (Member(doc, "value") == nullptr) return Invalid(meta.title, "value: missing");
  PriorityClass pc{.name = meta.meta.name};
  absl::Status status = kube::ReadInt32(doc, "value", "value", &pc.value);
  if (!status.ok()) return Annotate(status, meta.title);
  if (const Value* global_default = Member(doc, "globalDefault"); global_default != nullptr) {
    if (!global_default->IsBool()) return Invalid(meta.title, "globalDefault: not a boolean");
    pc.global_default = global_default->GetBool();
  }
  return pc;
}

std::string GlobalDefaultPriorityClass(const std::vector<PriorityClass>& classes) {
  const PriorityClass* lowest = nullptr;
  for (const PriorityClass& pc : classes) {
    if (!pc.global_default) continue;
    if (lowest == nullptr || pc.value < lowest->value ||
        (pc.value == lowest->value && pc.name < lowest->name)) {
      lowest = &pc;
    }
  }
  return lowest == nullptr ? "" : lowest->name;
}

std::string PodPriorityClass(const kube::TrainingJob& job, std::string_view global_default) {
  if (!job.priority_class_name.empty()) return job.priority_class_name;
  if (!job.pod.priority_class_name.empty()) return job.pod.priority_class_name.str();
  return std::string(global_default);
}

bool HasOwnPriority(const kube::TrainingJob& job, bool explicit_priority) {
  return explicit_priority || !PodPriorityClass(job, "").empty();
}

void KeepPodsPriority(const kube::TrainingJob& job,
                      const std::vector<std::shared_ptr<const kube::Pod>>& pods,
                      bool explicit_priority, admission::Workload& w) {
  if (!job.status.admission || HasOwnPriority(job, explicit_priority)) return;
  std::optional<int32_t> lowest;
  for (const std::shared_ptr<const kube::Pod>& pod : pods) {
    if (!pod->meta.deletion_timestamp.empty()) continue;
    lowest = lowest ? std::min(*lowest, pod->priority) : pod->priority;
  }
  if (!lowest) return;
  w.priority_class.clear();
  w.priority = *lowest;
}

absl::StatusOr<admission::Namespace> DecodeNamespace(std::string_view json) {
  ASSIGN_OR_RETURN(Meta meta, DecodeMeta(json, "Namespace"));
  return admission::Namespace{.name = meta.meta.name, .labels = ToMap(meta.meta.labels)};
}

absl::StatusOr<admission::Workload> WorkloadFromJob(const kube::TrainingJob& job,
                                                    int64_t admission_time, bool allow_job_priority,
                                                    std::string_view global_default_class) {
  admission::Workload w;
  w.key = job.meta.Key();
  if (!job.template_problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("TrainingJob ", w.key, ": ",
                                                   job.template_problem));
  }
  w.namespace_name = job.meta.namespace_;
  w.queue_name = job.queue_name;
  w.count = job.replicas;
  if (job.elastic.has_value()) {
    w.elastic = placement::ElasticRange{.min = job.elastic->min_replicas,
                                        .max = job.elastic->max_replicas,
                                        .step = job.elastic->step};
  }
  w.per_pod = job.pod.requests;
  if (job.priority.has_value() && !allow_job_priority && !job.status.admission) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.priority (", *job.priority, ") is not honoured on this cluster: priorities come ",
        "only from PriorityClasses (phalanx-operator --allow-job-priority=false); remove it and ",
        "set spec.priorityClassName"));
  }
  if (job.priority.has_value() && allow_job_priority) {
    w.priority = *job.priority;
  } else {
    w.priority_class = PodPriorityClass(job, global_default_class);
  }
  if (!job.meta.creation_timestamp.empty()) {
    absl::Time created;
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, job.meta.creation_timestamp.str(), &created,
                         &error)) {
      return Invalid(absl::StrCat("TrainingJob ", w.key, ": metadata.creationTimestamp"),
                     absl::StrCat("\"", job.meta.creation_timestamp.str(), "\": ", error));
    }
    w.creation_time = absl::ToUnixSeconds(created);
  }
  if (job.status.requeue_state && !job.status.requeue_state->requeue_at.empty() &&
      !job.status.admission) {
    absl::Time at;
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, job.status.requeue_state->requeue_at, &at, &error)) {
      return Invalid(absl::StrCat("TrainingJob ", w.key, ": status.requeueState.requeueAt"),
                     absl::StrCat("\"", job.status.requeue_state->requeue_at, "\": ", error));
    }
    w.requeue_at = absl::ToUnixSeconds(at);
  }
  // Enforced by the job controller, so backfill may trust it as an upper bound (docs/admission.md
  // "What the estimate uses").
  w.expected_runtime_seconds = job.active_deadline_seconds;
  w.required_level = job.topology.required;
  w.preferred_level = job.topology.preferred;
  w.group_size = job.topology.group_size;
  w.group_level = job.topology.group_level;
  w.node_selector = ToMap(job.pod.node_selector);
  w.node_affinity = job.node_affinity;
  w.max_pods_per_node = job.max_pods_per_node;
  for (const kube::Toleration& t : job.pod.tolerations) {
    w.tolerations.push_back(kube::ToPlacementToleration(t));
  }
  if (job.status.admission.has_value()) {
    const kube::TrainingJobAdmission& a = *job.status.admission;
    admission::AdmittedState& admitted = w.admitted.emplace();
    admitted.cluster_queue = a.cluster_queue;
    admitted.count = a.replicas;
    admitted.admission_time = admission_time;
    // The status keeps one flavor: every resource was admitted in it, `pods` included (charged
    // only where the ClusterQueue has quota for pods, as the cycle charged it at admission).
    for (const auto& [resource, amount] : w.per_pod) admitted.flavors[resource] = a.flavor;
    admitted.flavors[std::string(kResourcePods)] = a.flavor;
  }
  // The class of a job that names none is the cluster's default, or after admission its pods'
  // priority (KeepPodsPriority): neither is in the job's resourceVersion, so the CycleCache
  // compares the fields instead.
  w.revision = HasOwnPriority(job, job.priority.has_value() && allow_job_priority)
                   ? Revision(job.meta.resource_version)
                   : 0;
  return w;
}

ResourcesInUse FindResourcesInUse(const admission::Snapshot& snapshot) {
  ResourcesInUse out;
  for (const admission::ClusterQueue& cq : snapshot.cluster_queues) {
    for (const admission::ResourceGroup& group : cq.resource_groups) {
      for (const admission::FlavorQuotas& f : group.flavors) out.flavors.insert(f.flavor);
    }
  }
  for (const admission::Workload& w : snapshot.workloads) {
    if (!w.admitted.has_value()) continue;
    out.cluster_queues.insert(w.admitted->cluster_queue);
    for (const auto& [resource, flavor] : w.admitted->flavors) out.flavors.insert(flavor);
  }
  return out;
}

FinalizerChange ResourceInUseFinalizerChange(const kube::ObjectMeta& meta, bool in_use) {
  const bool has = meta.HasFinalizer(kResourceInUseFinalizer);
  if (meta.deletion_timestamp.empty()) return has ? FinalizerChange::kNone : FinalizerChange::kAdd;
  return has && !in_use ? FinalizerChange::kRemove : FinalizerChange::kNone;
}

}  // namespace phalanx::operator_server
