#include "kube/api/training_job.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/api_labels.h"
#include "common/quantity.h"
#include "common/resources.h"
#include "common/status.h"
#include "kube/decode.h"
#include "kube/json.h"
#include "kube/resource.h"
#include "rapidjson/document.h"
#include "scheduler/node_affinity.h"

namespace kube {
namespace {

using rapidjson::Value;
using phalanx::placement::NodeSelectorRequirement;
using phalanx::placement::NodeSelectorTerm;

// The member `key` of `object` as an array (nullptr when absent), or InvalidArgument.
absl::StatusOr<const Value*> ArrayMember(const Value& object, std::string_view key,
                                         const std::string& field) {
  const Value* array = Member(object, key);
  if (array != nullptr && !array->IsArray()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": not an array"));
  }
  return array;
}

absl::Status ReadRequirements(const Value& term, std::string_view key, const std::string& field,
                              std::vector<NodeSelectorRequirement>* out) {
  ASSIGN_OR_RETURN(const Value* list, ArrayMember(term, key, field));
  for (rapidjson::SizeType i = 0; list != nullptr && i < list->Size(); ++i) {
    const Value& entry = (*list)[i];
    const std::string at = absl::StrCat(field, "[", i, "]");
    if (!entry.IsObject()) return absl::InvalidArgumentError(at + ": not an object");
    NodeSelectorRequirement& r = out->emplace_back();
    RETURN_IF_ERROR(ReadString(entry, "key", at + ".key", &r.key));
    RETURN_IF_ERROR(ReadString(entry, "operator", at + ".operator", &r.op));
    ASSIGN_OR_RETURN(const Value* values, ArrayMember(entry, "values", at + ".values"));
    for (rapidjson::SizeType v = 0; values != nullptr && v < values->Size(); ++v) {
      if (!(*values)[v].IsString()) {
        return absl::InvalidArgumentError(absl::StrCat(at, ".values[", v, "]: not a string"));
      }
      r.values.emplace_back((*values)[v].GetString(), (*values)[v].GetStringLength());
    }
  }
  return absl::OkStatus();
}

// spec.template's required node affinity into `out`, or InvalidArgument naming the field of a
// form placement cannot honour (and kube-scheduler would refuse or never match).
absl::Status ReadRequiredNodeAffinity(const Value& tmpl, std::vector<NodeSelectorTerm>* out) {
  constexpr std::string_view kRequired =
      "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  const Value* spec = Member(tmpl, "spec");
  const Value* affinity = spec == nullptr ? nullptr : Member(*spec, "affinity");
  const Value* node = affinity == nullptr ? nullptr : Member(*affinity, "nodeAffinity");
  const Value* required =
      node == nullptr ? nullptr : Member(*node, "requiredDuringSchedulingIgnoredDuringExecution");
  if (required == nullptr) return absl::OkStatus();
  const std::string field = std::string(kRequired) + ".nodeSelectorTerms";
  ASSIGN_OR_RETURN(const Value* terms, ArrayMember(*required, "nodeSelectorTerms", field));
  if (terms == nullptr || terms->Empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": must have at least one node selector term"));
  }
  for (rapidjson::SizeType t = 0; t < terms->Size(); ++t) {
    const Value& term = (*terms)[t];
    const std::string at = absl::StrCat(field, "[", t, "]");
    if (!term.IsObject()) return absl::InvalidArgumentError(at + ": not an object");
    NodeSelectorTerm& parsed = out->emplace_back();
    RETURN_IF_ERROR(ReadRequirements(term, "matchExpressions", at + ".matchExpressions",
                                     &parsed.match_expressions));
    RETURN_IF_ERROR(
        ReadRequirements(term, "matchFields", at + ".matchFields", &parsed.match_fields));
  }
  return phalanx::placement::ValidateNodeAffinity(*out, field);
}

absl::Status ReadAdmission(const Value& status, TrainingJobStatus* out) {
  const Value* admission = Member(status, "admission");
  if (admission == nullptr) return absl::OkStatus();
  TrainingJobAdmission a;
  RETURN_IF_ERROR(
      ReadString(*admission, "clusterQueue", "status.admission.clusterQueue", &a.cluster_queue));
  RETURN_IF_ERROR(ReadString(*admission, "flavor", "status.admission.flavor", &a.flavor));
  RETURN_IF_ERROR(ReadInt32(*admission, "replicas", "status.admission.replicas", &a.replicas));
  if (const Value* selector = Member(*admission, "nodeSelector"); selector != nullptr) {
    if (!selector->IsObject()) {
      return absl::InvalidArgumentError("status.admission.nodeSelector: not an object");
    }
    auto& labels = a.node_selector.emplace();
    for (const auto& m : selector->GetObject()) {
      if (m.value.IsString()) labels[m.name.GetString()] = m.value.GetString();
    }
  }
  ASSIGN_OR_RETURN(const Value* tolerations,
                   ArrayMember(*admission, "tolerations", "status.admission.tolerations"));
  if (tolerations != nullptr) {
    auto& list = a.tolerations.emplace();
    for (const Value& t : tolerations->GetArray()) {
      if (!t.IsObject()) continue;
      list.push_back({.key = StringMember(t, "key"),
                      .operator_ = StringMember(t, "operator"),
                      .value = StringMember(t, "value"),
                      .effect = StringMember(t, "effect")});
    }
  }
  out->admission = std::move(a);
  return absl::OkStatus();
}

absl::Status ReadPlacement(const Value& status, TrainingJobStatus* out) {
  const Value* placement = Member(status, "placement");
  if (placement == nullptr) return absl::OkStatus();
  TrainingJobPlacement p;
  RETURN_IF_ERROR(ReadString(*placement, "domain", "status.placement.domain", &p.domain));
  RETURN_IF_ERROR(ReadString(*placement, "level", "status.placement.level", &p.level));
  if (const Value* nodes = Member(*placement, "nodes"); nodes != nullptr) {
    if (!nodes->IsArray()) {
      return absl::InvalidArgumentError("status.placement.nodes: not an array");
    }
    p.nodes.reserve(nodes->Size());
    for (rapidjson::SizeType i = 0; i < nodes->Size(); ++i) {
      const Value& node = (*nodes)[i];
      if (!node.IsString() || node.GetStringLength() == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("status.placement.nodes[", i, "]: not a node name"));
      }
      p.nodes.emplace_back(node.GetString(), node.GetStringLength());
    }
  }
  out->placement = std::move(p);
  return absl::OkStatus();
}

absl::Status ReadFailureRules(const Value& failure, std::vector<TrainingJobFailureRule>* out) {
  ASSIGN_OR_RETURN(const Value* rules, ArrayMember(failure, "rules", "spec.failurePolicy.rules"));
  for (rapidjson::SizeType i = 0; rules != nullptr && i < rules->Size(); ++i) {
    const std::string where = absl::StrCat("spec.failurePolicy.rules[", i, "]");
    const Value& rule = (*rules)[i];
    if (!rule.IsObject()) return absl::InvalidArgumentError(absl::StrCat(where, ": not an object"));
    TrainingJobFailureRule r;
    RETURN_IF_ERROR(ReadString(rule, "action", where + ".action", &r.action));
    const Value* on = Member(rule, "onExitCodes");
    if (on == nullptr || !on->IsObject()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ".onExitCodes: missing"));
    }
    RETURN_IF_ERROR(
        ReadString(*on, "containerName", where + ".onExitCodes.containerName", &r.container_name));
    std::string op;
    RETURN_IF_ERROR(ReadString(*on, "operator", where + ".onExitCodes.operator", &op));
    r.not_in = op == "NotIn";
    ASSIGN_OR_RETURN(const Value* values,
                     ArrayMember(*on, "values", where + ".onExitCodes.values"));
    for (rapidjson::SizeType v = 0; values != nullptr && v < values->Size(); ++v) {
      if (!(*values)[v].IsInt()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ".onExitCodes.values[", v, "]: not an int32"));
      }
      r.values.push_back((*values)[v].GetInt());
    }
    out->push_back(std::move(r));
  }
  return absl::OkStatus();
}

// A container's `resources` member `kind` (requests or limits) as name -> quantity text.
std::map<std::string, std::string> QuantityTexts(const Value& resources, const char* kind) {
  std::map<std::string, std::string> out;
  if (!resources.HasMember(kind) || !resources[kind].IsObject()) return out;
  for (const auto& amount : resources[kind].GetObject()) {
    out[amount.name.GetString()] =
        amount.value.IsString() ? std::string(amount.value.GetString()) : ToJson(amount.value);
  }
  return out;
}

// A JSON required pod anti-affinity term as common/resources.h's view; false when it is not an
// object.
bool ReadAntiAffinityTerm(const Value& term, phalanx::AntiAffinityTermView* out) {
  if (!term.IsObject()) return false;
  out->topology_key = std::string(StringMember(term, "topologyKey"));
  const Value* namespaces = Member(term, "namespaces");
  out->beyond_own_namespace = Member(term, "namespaceSelector") != nullptr ||
                              (namespaces != nullptr && namespaces->IsArray() &&
                               !namespaces->Empty());
  out->label_keys = Member(term, "matchLabelKeys") != nullptr ||
                    Member(term, "mismatchLabelKeys") != nullptr;
  const Value* selector = Member(term, "labelSelector");
  out->has_selector = selector != nullptr && selector->IsObject();
  if (!out->has_selector) return true;
  if (const Value* labels = Member(*selector, "matchLabels"); labels && labels->IsObject()) {
    for (const auto& m : labels->GetObject()) {
      if (m.value.IsString()) out->match_labels[m.name.GetString()] = m.value.GetString();
    }
  }
  if (const Value* exprs = Member(*selector, "matchExpressions"); exprs && exprs->IsArray()) {
    for (const Value& e : exprs->GetArray()) {
      if (!e.IsObject()) return false;
      phalanx::AntiAffinityTermView::Expression& x = out->match_expressions.emplace_back();
      x.key = std::string(StringMember(e, "key"));
      x.op = std::string(StringMember(e, "operator"));
      if (const Value* values = Member(e, "values"); values && values->IsArray()) {
        for (const Value& v : values->GetArray()) {
          if (v.IsString()) x.values.emplace_back(v.GetString());
        }
      }
    }
  }
  return true;
}

// The first field of the pod template `tmpl` that constrains placement in a way gang placement
// does not model (phalanx::UnmodelledSchedulingProblem), or "". Sets `max_pods_per_node` to 1
// for a required pod anti-affinity that keeps the template's pods one per node.
std::string UnmodelledSchedulingField(const Value& tmpl, const std::string& job_name,
                                      int32_t* max_pods_per_node) {
  const Value* spec = Member(tmpl, "spec");
  if (spec == nullptr || !spec->IsObject()) return "";
  if (const Value* affinity = Member(*spec, "affinity"); affinity && affinity->IsObject()) {
    for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
      const Value* rules = Member(*affinity, kind);
      if (rules == nullptr || !rules->IsObject()) continue;
      const Value* required = Member(*rules, "requiredDuringSchedulingIgnoredDuringExecution");
      if (required == nullptr || !required->IsArray() || required->Empty()) continue;
      const std::string field = absl::StrCat(
          "spec.template.spec.affinity.", kind, ".requiredDuringSchedulingIgnoredDuringExecution");
      if (std::string_view(kind) == "podAffinity") return field;
      // Anti-affinity of the gang's own pods per node: one rank per node, which is modelled.
      // The pods carry the template's labels and the job label the operator adds.
      std::map<std::string, std::string> labels = {{std::string(phalanx::kJobLabel), job_name}};
      if (const Value* meta = Member(tmpl, "metadata"); meta && meta->IsObject()) {
        if (const Value* l = Member(*meta, "labels"); l && l->IsObject()) {
          for (const auto& m : l->GetObject()) {
            if (m.value.IsString()) labels.emplace(m.name.GetString(), m.value.GetString());
          }
        }
      }
      for (rapidjson::SizeType i = 0; i < required->Size(); ++i) {
        phalanx::AntiAffinityTermView term;
        if (!ReadAntiAffinityTerm((*required)[i], &term) ||
            !phalanx::OneRankPerNode(term, labels)) {
          return absl::StrCat(field, "[", i, "]");
        }
      }
      *max_pods_per_node = 1;
    }
  }
  const Value* spread = Member(*spec, "topologySpreadConstraints");
  if (spread == nullptr || !spread->IsArray()) return "";
  for (rapidjson::SizeType i = 0; i < spread->Size(); ++i) {
    const Value& c = (*spread)[i];
    const Value* when = c.IsObject() ? Member(c, "whenUnsatisfiable") : nullptr;
    if (when != nullptr && when->IsString() && std::string_view(when->GetString()) ==
                                                   "DoNotSchedule") {
      return absl::StrCat("spec.template.spec.topologySpreadConstraints[", i, "]");
    }
  }
  return "";
}

// Every quantity of the template's containers and overhead that is not one, named by its field
// as written ("spec.template.spec.containers[0].resources.limits[cpu]: invalid quantity ...").
// The pod decoder would refuse it too, but after requests are defaulted from limits, and naming
// neither the container nor the list.
absl::Status CheckTemplateQuantities(const Value& tmpl) {
  const Value* spec = tmpl.IsObject() ? Member(tmpl, "spec") : nullptr;
  if (spec == nullptr || !spec->IsObject()) return absl::OkStatus();
  auto check = [](const Value* amounts, const std::string& field) -> absl::Status {
    if (amounts == nullptr || !amounts->IsObject()) return absl::OkStatus();
    for (const auto& amount : amounts->GetObject()) {
      if (!amount.value.IsString()) continue;  // a JSON number is a quantity
      absl::StatusOr<phalanx::Quantity> q = phalanx::Quantity::Parse(amount.value.GetString());
      if (!q.ok()) {
        return phalanx::Annotate(q.status(),
                                 absl::StrCat(field, "[", amount.name.GetString(), "]"));
      }
    }
    return absl::OkStatus();
  };
  for (const char* list : {"containers", "initContainers"}) {
    const Value* items = Member(*spec, list);
    if (items == nullptr || !items->IsArray()) continue;
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      const Value& c = (*items)[i];
      const Value* resources = c.IsObject() ? Member(c, "resources") : nullptr;
      if (resources == nullptr || !resources->IsObject()) continue;
      for (const char* kind : {"limits", "requests"}) {
        RETURN_IF_ERROR(
            check(Member(*resources, kind),
                  absl::StrCat("spec.template.spec.", list, "[", i, "].resources.", kind)));
      }
    }
  }
  return check(Member(*spec, "overhead"), "spec.template.spec.overhead");
}

// The API server defaults a pod's container requests to its limits for every resource that has a
// limit and no request (extended resources such as nvidia.com/gpu are usually given only as
// limits). A pod template inside a custom resource is not defaulted, so do it here: the gang's
// per-pod requests must be what the pods will really request.
//
// Returns the first fraction of an extended resource it meets ("1.5" nvidia.com/gpu), named by
// its field: the API server would refuse every pod built from the template.
std::string DefaultRequestsFromLimits(Value& tmpl, rapidjson::Document::AllocatorType& alloc) {
  std::string problem;
  if (!tmpl.IsObject() || !tmpl.HasMember("spec") || !tmpl["spec"].IsObject()) return problem;
  Value& spec = tmpl["spec"];
  for (const char* list : {"containers", "initContainers"}) {
    if (!spec.HasMember(list) || !spec[list].IsArray()) continue;
    int index = -1;
    for (Value& container : spec[list].GetArray()) {
      ++index;
      if (!container.IsObject() || !container.HasMember("resources")) continue;
      Value& resources = container["resources"];
      if (!resources.IsObject()) continue;
      for (const char* kind : {"limits", "requests"}) {
        if (!resources.HasMember(kind) || !resources[kind].IsObject()) continue;
        for (auto& amount : resources[kind].GetObject()) {
          // YAML `nvidia.com/gpu: 8` arrives as a JSON number; the API server would have
          // stored a pod's quantities as strings.
          if (amount.value.IsNumber()) {
            std::string text = ToJson(amount.value);
            amount.value.SetString(text.c_str(), static_cast<rapidjson::SizeType>(text.size()),
                                   alloc);
          }
          const std::string name = amount.name.GetString();
          if (!problem.empty() || !amount.value.IsString() ||
              !phalanx::IsExtendedResourceName(name)) {
            continue;
          }
          absl::StatusOr<phalanx::ResourceList> whole = phalanx::ParseResourceList(
              {{name, amount.value.GetString()}},
              absl::StrCat("spec.template.spec.", list, "[", index, "].resources.", kind));
          if (!whole.ok()) problem = std::string(whole.status().message());
        }
      }
      if (problem.empty()) {
        problem = phalanx::NonOvercommitLimitProblem(
            QuantityTexts(resources, "requests"), QuantityTexts(resources, "limits"),
            absl::StrCat("spec.template.spec.", list, "[", index, "].resources.limits"));
      }
      if (!resources.HasMember("limits") || !resources["limits"].IsObject()) continue;
      if (!resources.HasMember("requests") || !resources["requests"].IsObject()) {
        resources.RemoveMember("requests");
        resources.AddMember("requests", Value(rapidjson::kObjectType), alloc);
      }
      Value& requests = resources["requests"];
      for (auto& limit : resources["limits"].GetObject()) {
        if (!requests.HasMember(limit.name)) {
          requests.AddMember(Value(limit.name, alloc), Value(limit.value, alloc), alloc);
        }
      }
    }
  }
  return problem;
}

// From the template's containers (TrainingJob::containers) and overhead: the pods' requests
// (resourcehelper.PodRequests: all of the overhead), limits (PodLimits: overhead only on what
// some container limits), unset cpu/memory limits and requests, and QoS.
void Summarize(TrainingJob& job, bool with_requests) {
  phalanx::PodResourceSum requests_sum, limits_sum;
  std::set<std::string> unset_limits, unset_requests;
  bool qos_resources = false;  // some container requests or limits cpu or memory
  for (const TrainingJob::Container& c : job.containers) {
    for (const char* name : {"cpu", "memory"}) {
      if (!c.limits.contains(name)) unset_limits.insert(name);
      if (!c.requests.contains(name)) unset_requests.insert(name);
      qos_resources |= c.limits.contains(name) || c.requests.contains(name);
    }
    // The requests only when asked for: at decode the pod's decoder has summed them already.
    for (auto [sum, list] : {std::pair{&limits_sum, &c.limits}, {&requests_sum, &c.requests}}) {
      if (sum == &requests_sum && !with_requests) continue;
      switch (c.kind) {
        case TrainingJob::Container::Kind::kContainer:
          sum->AddContainer(*list);
          break;
        case TrainingJob::Container::Kind::kSidecar:
          sum->AddSidecar(*list);
          break;
        case TrainingJob::Container::Kind::kInit:
          sum->AddInit(*list);
          break;
      }
    }
  }
  phalanx::ResourceList limits = std::move(limits_sum).Total();
  for (const auto& [name, amount] : job.overhead) {
    if (auto it = limits.find(name); it != limits.end()) it->second += amount;
  }
  job.pod_limits = std::move(limits);
  job.unset_limits.assign(unset_limits.begin(), unset_limits.end());
  job.unset_requests.assign(unset_requests.begin(), unset_requests.end());
  job.pod_best_effort = !qos_resources;
  if (with_requests) {  // else the pod's decode has them
    phalanx::ResourceList requests = std::move(requests_sum).Total();
    phalanx::AddTo(requests, job.overhead);
    job.pod.requests = std::move(requests);
  }
}

// Whether a pod (anti-)affinity term of the pod spec, required or preferred, names namespaces or
// has a namespaceSelector (even an empty one, which selects every namespace).
bool CrossNamespacePodAffinity(const Value& spec) {
  const Value* affinity = Member(spec, "affinity");
  if (affinity == nullptr || !affinity->IsObject()) return false;
  auto cross = [](const Value* term) {
    if (term == nullptr || !term->IsObject()) return false;
    const Value* namespaces = Member(*term, "namespaces");
    const Value* selector = Member(*term, "namespaceSelector");
    return (namespaces != nullptr && namespaces->IsArray() && !namespaces->Empty()) ||
           (selector != nullptr && !selector->IsNull());
  };
  for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
    const Value* rules = Member(*affinity, kind);
    if (rules == nullptr || !rules->IsObject()) continue;
    const Value* required = Member(*rules, "requiredDuringSchedulingIgnoredDuringExecution");
    if (required != nullptr && required->IsArray()) {
      for (const Value& term : required->GetArray()) {
        if (cross(&term)) return true;
      }
    }
    const Value* preferred = Member(*rules, "preferredDuringSchedulingIgnoredDuringExecution");
    if (preferred != nullptr && preferred->IsArray()) {
      for (const Value& weighted : preferred->GetArray()) {
        if (weighted.IsObject() && cross(Member(weighted, "podAffinityTerm"))) return true;
      }
    }
  }
  return false;
}

// The template's containers and overhead (TrainingJob::containers, overhead) of a template
// whose requests were defaulted to its limits, and what Summarize derives from them. A quantity
// that does not parse is left out: the pod's decode of the same text reports it.
void ReadContainers(const Value& tmpl, TrainingJob* job) {
  const Value* spec = tmpl.IsObject() ? Member(tmpl, "spec") : nullptr;
  if (spec == nullptr || !spec->IsObject()) return;
  auto parsed = [](const Value& resources, const char* kind) {
    absl::StatusOr<phalanx::ResourceList> list =
        phalanx::ParseResourceList(QuantityTexts(resources, kind), kind);
    return list.ok() ? *std::move(list) : phalanx::ResourceList{};
  };
  for (const char* list : {"containers", "initContainers"}) {
    const Value* items = Member(*spec, list);
    if (items == nullptr || !items->IsArray()) continue;
    for (const Value& c : items->GetArray()) {
      if (!c.IsObject()) continue;
      static const Value kNone(rapidjson::kObjectType);
      const Value* resources = Member(c, "resources");
      if (resources == nullptr || !resources->IsObject()) resources = &kNone;
      TrainingJob::Container::Kind kind = TrainingJob::Container::Kind::kInit;
      if (std::string_view(list) == "containers") {
        kind = TrainingJob::Container::Kind::kContainer;
      } else if (StringMember(c, "restartPolicy") == "Always") {
        kind = TrainingJob::Container::Kind::kSidecar;
      }
      job->containers.push_back({.kind = kind,
                                 .requests = parsed(*resources, "requests"),
                                 .limits = parsed(*resources, "limits")});
    }
  }
  if (const Value* overhead = Member(*spec, "overhead"); overhead && overhead->IsObject()) {
    std::map<std::string, std::string> texts;
    for (const auto& m : overhead->GetObject()) {
      if (m.value.IsString()) texts[m.name.GetString()] = m.value.GetString();
    }
    absl::StatusOr<phalanx::ResourceList> extra = phalanx::ParseResourceList(texts, "overhead");
    if (extra.ok()) job->overhead = *std::move(extra);
  }
  Summarize(*job, /*with_requests=*/false);
  job->pod_terminating = Member(*spec, "activeDeadlineSeconds") != nullptr;
  job->pod_cross_namespace_affinity = CrossNamespacePodAffinity(*spec);
}

// status, when it has one: what the operator wrote, readable whatever the spec holds.
absl::Status ReadJobStatus(const Value& doc, TrainingJobStatus* out) {
  *out = {};
  if (const Value* status = Member(doc, "status"); status != nullptr) {
    RETURN_IF_ERROR(ReadString(*status, "phase", "status.phase", &out->phase));
    RETURN_IF_ERROR(ReadInt32(*status, "restarts", "status.restarts", &out->restarts));
    RETURN_IF_ERROR(ReadInt32(*status, "nodeFaultRestarts", "status.nodeFaultRestarts",
                              &out->node_fault_restarts));
    RETURN_IF_ERROR(
        ReadInt32(*status, "ignoredRestarts", "status.ignoredRestarts", &out->ignored_restarts));
    if (const Value* rq = Member(*status, "requeueState"); rq != nullptr && rq->IsObject()) {
      TrainingJobRequeueState& state = out->requeue_state.emplace();
      RETURN_IF_ERROR(ReadInt32(*rq, "count", "status.requeueState.count", &state.count));
      RETURN_IF_ERROR(
          ReadString(*rq, "requeueAt", "status.requeueState.requeueAt", &state.requeue_at));
    }
    RETURN_IF_ERROR(ReadAdmission(*status, out));
    RETURN_IF_ERROR(ReadPlacement(*status, out));
  }
  return absl::OkStatus();
}

}  // namespace

void ApplyContainerDefaults(const phalanx::ResourceList& limits,
                            const phalanx::ResourceList& requests, TrainingJob& job) {
  bool changed = false;
  for (TrainingJob::Container& c : job.containers) {
    for (const auto& [name, amount] : limits) changed |= c.limits.emplace(name, amount).second;
    for (const auto& [name, amount] : requests) changed |= c.requests.emplace(name, amount).second;
  }
  if (changed) Summarize(job, /*with_requests=*/true);
}

const Resource& TrainingJobs() {
  static const Resource* const kResource =
      new Resource{.group = "phalanx.dev",
                   .version = "v1alpha1",
                   .plural = "trainingjobs",
                   .namespaced = true,
                   .kind = std::string(kTrainingJobKind)};
  return *kResource;
}

namespace {

// The document and a job with its metadata only.
absl::Status DecodeEnvelope(std::string_view json, rapidjson::Document* doc, TrainingJob* job) {
  ASSIGN_OR_RETURN(*doc, ParseJson(json));
  if (!doc->IsObject()) return absl::InvalidArgumentError("TrainingJob: not a JSON object");
  // Metadata through the shared decoder, so it matches every other object's.
  ASSIGN_OR_RETURN(RawObject raw, Decode<RawObject>(json));
  job->meta = std::move(raw.meta);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainingJob> DecodeTrainingJob(std::string_view json) {
  rapidjson::Document doc;
  TrainingJob job;
  RETURN_IF_ERROR(DecodeEnvelope(json, &doc, &job));
  const Value* spec = Member(doc, "spec");
  if (spec == nullptr || !spec->IsObject()) {
    return absl::InvalidArgumentError("spec: missing or not an object");
  }
  RETURN_IF_ERROR(ReadString(*spec, "queueName", "spec.queueName", &job.queue_name));
  RETURN_IF_ERROR(ReadString(*spec, "priorityClassName", "spec.priorityClassName",
                             &job.priority_class_name));
  if (Member(*spec, "priority") != nullptr) {
    int32_t priority = 0;
    RETURN_IF_ERROR(ReadInt32(*spec, "priority", "spec.priority", &priority));
    job.priority = priority;
  }
  RETURN_IF_ERROR(ReadInt32(*spec, "replicas", "spec.replicas", &job.replicas));
  if (const Value* elastic = Member(*spec, "elastic"); elastic != nullptr) {
    TrainingJobElastic e;
    RETURN_IF_ERROR(
        ReadInt32(*elastic, "minReplicas", "spec.elastic.minReplicas", &e.min_replicas));
    RETURN_IF_ERROR(
        ReadInt32(*elastic, "maxReplicas", "spec.elastic.maxReplicas", &e.max_replicas));
    RETURN_IF_ERROR(ReadInt32(*elastic, "step", "spec.elastic.step", &e.step));
    job.elastic = e;
  }
  if (const Value* topology = Member(*spec, "topology"); topology != nullptr) {
    TrainingJobTopology& t = job.topology;
    RETURN_IF_ERROR(ReadString(*topology, "required", "spec.topology.required", &t.required));
    RETURN_IF_ERROR(ReadString(*topology, "preferred", "spec.topology.preferred", &t.preferred));
    RETURN_IF_ERROR(
        ReadInt32(*topology, "groupSize", "spec.topology.groupSize", &t.group_size));
    RETURN_IF_ERROR(
        ReadString(*topology, "groupLevel", "spec.topology.groupLevel", &t.group_level));
  }
  if (const Value* failure = Member(*spec, "failurePolicy"); failure != nullptr) {
    RETURN_IF_ERROR(ReadInt32(*failure, "maxRestarts", "spec.failurePolicy.maxRestarts",
                              &job.max_restarts));
    RETURN_IF_ERROR(ReadFailureRules(*failure, &job.failure_rules));
  }
  RETURN_IF_ERROR(
      ReadString(*spec, "successPolicy", "spec.successPolicy", &job.success_policy));
  if (const Value* suspend = Member(*spec, "suspend"); suspend != nullptr) {
    if (!suspend->IsBool()) return absl::InvalidArgumentError("spec.suspend: not a boolean");
    job.suspend = suspend->GetBool();
  }
  if (Member(*spec, "ttlSecondsAfterFinished") != nullptr) {
    int32_t ttl = 0;
    RETURN_IF_ERROR(ReadInt32(*spec, "ttlSecondsAfterFinished", "spec.ttlSecondsAfterFinished",
                              &ttl));
    job.ttl_seconds_after_finished = ttl;
  }
  if (Member(*spec, "activeDeadlineSeconds") != nullptr) {
    int64_t deadline = 0;
    RETURN_IF_ERROR(ReadInt64(*spec, "activeDeadlineSeconds", "spec.activeDeadlineSeconds",
                              &deadline));
    job.active_deadline_seconds = deadline;
  }
  const Value* tmpl = Member(*spec, "template");
  if (tmpl == nullptr || !tmpl->IsObject()) {
    return absl::InvalidArgumentError("spec.template: missing or not an object");
  }
  RETURN_IF_ERROR(CheckTemplateQuantities(*tmpl));
  job.template_json = ToJson(*tmpl);
  rapidjson::Document defaulted;
  defaulted.CopyFrom(*tmpl, defaulted.GetAllocator());
  job.template_problem = DefaultRequestsFromLimits(defaulted, defaulted.GetAllocator());
  if (job.template_problem.empty()) {
    if (const std::string field = UnmodelledSchedulingField(*tmpl, job.meta.name,
                                                          &job.max_pods_per_node);
        !field.empty()) {
      job.template_problem = phalanx::UnmodelledSchedulingProblem(field);
    }
  }
  if (absl::Status affinity = ReadRequiredNodeAffinity(*tmpl, &job.node_affinity);
      !affinity.ok()) {
    job.node_affinity.clear();
    if (job.template_problem.empty()) job.template_problem = std::string(affinity.message());
  }
  absl::StatusOr<Pod> pod = Decode<Pod>(ToJson(defaulted));
  if (!pod.ok()) return phalanx::Annotate(pod.status(), "spec.template");
  job.pod = *std::move(pod);
  ReadContainers(defaulted, &job);

  RETURN_IF_ERROR(ReadJobStatus(doc, &job.status));
  return job;
}

absl::StatusOr<TrainingJob> DecodeTrainingJobWithoutSpec(std::string_view json) {
  rapidjson::Document doc;
  TrainingJob job;
  RETURN_IF_ERROR(DecodeEnvelope(json, &doc, &job));
  RETURN_IF_ERROR(ReadJobStatus(doc, &job.status));
  return job;
}

phalanx::placement::Toleration ToPlacementToleration(const Toleration& t) {
  return {t.key, t.operator_.empty() ? "Equal" : t.operator_.str(), t.value, t.effect};
}

Toleration FromPlacementToleration(const phalanx::placement::Toleration& t) {
  return {.key = t.key, .operator_ = t.op, .value = t.value, .effect = t.effect};
}

std::optional<absl::Time> ActiveDeadline(const TrainingJob& job,
                                         std::optional<absl::Time> admitted_since) {
  if (!job.active_deadline_seconds || !job.status.admission || !admitted_since ||
      FinishedPhase(job.status.phase)) {
    return std::nullopt;
  }
  return *admitted_since + absl::Seconds(*job.active_deadline_seconds);
}

}  // namespace kube
