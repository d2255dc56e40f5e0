#include "operator/server/namespace_quota.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/counted_noun.h"
#include "common/quantity.h"
#include "common/status.h"
#include "kube/decode.h"
#include "kube/json.h"
#include "operator/server/queue_objects.h"

namespace phalanx::operator_server {
namespace {

using kube::Member;
using rapidjson::Value;

absl::Status Invalid(const std::string& title, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(title, ": ", message));
}

constexpr std::string_view kLimits = "limits.";

// The resource a hard limit charges pod creations on ("pods", the requested resource's name, or
// "limits.<name>"), "" for one this check leaves alone (object counts, storage classes). Of
// limits the API server's pod evaluator charges cpu, memory and ephemeral-storage only: an
// extended resource is quota'd by its requests alone ("limits.nvidia.com/gpu" is charged no pod).
std::string ChargedResource(std::string_view key) {
  if (key == "pods" || key == "count/pods") return "pods";
  if (key.substr(0, 9) == "requests.") return std::string(key.substr(9));
  if (key == "cpu" || key == "memory" || key == "ephemeral-storage") return std::string(key);
  if (key == "limits.cpu" || key == "limits.memory" || key == "limits.ephemeral-storage") {
    return std::string(key);
  }
  return "";
}

// The resource whose units a charged resource is counted in: "limits.cpu" in cpu's.
std::string_view Unit(std::string_view resource) {
  return resource.substr(0, kLimits.size()) == kLimits ? resource.substr(kLimits.size()) : resource;
}

// How messages name a charged resource: as a quota's key, "requests.nvidia.com/gpu" or
// "limits.cpu" (a quota may hold both requests.cpu and limits.cpu; the bare "cpu" a quota may
// also use for requests is named by the same "requests.cpu"), and "pods".
std::string KeyName(std::string_view resource) {
  if (resource == "pods" || resource.starts_with(kLimits)) return std::string(resource);
  return "requests." + std::string(resource);
}

// Whether one scope (spec.scopes, or a requirement of the selector) matches the job's pods,
// whose PriorityClass is `pc` (PodPriorityClass: the globalDefault's for a job that names none,
// as the API server charges its pods).
bool ScopeMatches(const ScopeRequirement& r, const kube::TrainingJob& job, std::string_view pc) {
  if (r.scope == "PriorityClass") {
    const bool listed = std::find(r.values.begin(), r.values.end(), pc) != r.values.end();
    if (r.op == "In") return !pc.empty() && listed;
    if (r.op == "NotIn") return pc.empty() || !listed;
    if (r.op == "Exists") return !pc.empty();
    if (r.op == "DoesNotExist") return pc.empty();
    return false;
  }
  // BestEffort is the pods' QoS class (cpu and memory only: a GPU-only pod is BestEffort);
  // Terminating, whether the template's activeDeadlineSeconds (which the pods keep) is set.
  // The job's own spec.activeDeadlineSeconds is enforced by the operator and not on its pods.
  // CrossNamespacePodAffinity, whether a pod (anti-)affinity term of the template names other
  // namespaces (the operator copies the template's terms into the pods).
  const bool best_effort = job.pod_best_effort;
  const bool terminating = job.pod_terminating;
  const bool cross = job.pod_cross_namespace_affinity;
  if (r.scope == "BestEffort") return r.op == "DoesNotExist" ? !best_effort : best_effort;
  if (r.scope == "NotBestEffort") return r.op == "DoesNotExist" ? best_effort : !best_effort;
  if (r.scope == "Terminating") return r.op == "DoesNotExist" ? !terminating : terminating;
  if (r.scope == "NotTerminating") return r.op == "DoesNotExist" ? terminating : !terminating;
  if (r.scope == "CrossNamespacePodAffinity") return r.op == "DoesNotExist" ? !cross : cross;
  return false;  // a scope this check does not know: assume it does not apply
}

std::string ScopeText(const NamespaceQuota& q) {
  std::vector<std::string> parts = q.scopes;
  for (const ScopeRequirement& r : q.selector) {
    parts.push_back(r.values.empty() ? absl::StrCat(r.scope, " ", r.op)
                                     : absl::StrCat(r.scope, " ", r.op, " [",
                                                    absl::StrJoin(r.values, ", "), "]"));
  }
  return parts.empty() ? "" : absl::StrCat(" (scope ", absl::StrJoin(parts, ", "), ")");
}

// The charged entries of one ResourceList field (spec.hard, status.hard or status.used) into
// `out`, in canonical units. "pods" and "count/pods" charge the same pods: of two limits the
// lower holds, of two uses the higher is kept (each is counted on its own).
enum class Fold { kLower, kHigher };
absl::Status DecodeCharged(const Value* list, const std::string& title, std::string_view field,
                           Fold fold, ResourceList& out) {
  if (list == nullptr || !list->IsObject()) return absl::OkStatus();
  for (const auto& m : list->GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    const std::string resource = ChargedResource(key);
    if (resource.empty() || !m.value.IsString()) continue;
    const std::string where = absl::StrCat(std::string(field), "[", key, "]");
    absl::StatusOr<Quantity> quantity = Quantity::Parse(m.value.GetString());
    if (!quantity.ok()) {
      return Invalid(title, absl::StrCat(where, ": ", quantity.status().message()));
    }
    absl::StatusOr<int64_t> amount = CanonicalAmount(Unit(resource), *quantity);
    if (!amount.ok()) return Invalid(title, absl::StrCat(where, ": ", amount.status().message()));
    auto [it, inserted] = out.emplace(resource, *amount);
    if (!inserted) {
      it->second =
          fold == Fold::kLower ? std::min(it->second, *amount) : std::max(it->second, *amount);
    }
  }
  return absl::OkStatus();
}

// Whether the quota counts the job's pods: its namespace, and every scope and scope requirement
// matching them.
bool Applies(const NamespaceQuota& q, const kube::TrainingJob& job, std::string_view pc) {
  if (q.namespace_name != job.meta.namespace_) return false;
  for (const std::string& scope : q.scopes) {
    if (!ScopeMatches({.scope = scope, .op = "Exists", .values = {}}, job, pc)) return false;
  }
  for (const ScopeRequirement& r : q.selector) {
    if (!ScopeMatches(r, job, pc)) return false;
  }
  return true;
}

// What one of the job's pods is charged on a quota's resource (1 for "pods"), nullopt if its
// pods do not request (or limit, for "limits.<name>") it.
std::optional<int64_t> PerPod(const kube::TrainingJob& job, const std::string& resource) {
  if (resource == "pods") return 1;
  const ResourceList& requests = job.pod.requests;  // a kube::Shared: converted here
  const ResourceList& charged = resource.starts_with(kLimits) ? job.pod_limits : requests;
  auto it = charged.find(std::string(Unit(resource)));
  if (it == charged.end()) return std::nullopt;
  return it->second;
}

// The hard limit of a quota that makes the API server refuse the job's pods whatever the room,
// because a container of theirs leaves cpu or memory unset (the pod evaluator's Constraints:
// a quota tracking cpu or memory requests or limits wants every container to set them), "" if
// none does. Only cpu and memory are so constrained; a pod that leaves ephemeral-storage
// unlimited is charged nothing on limits.ephemeral-storage.
std::string UnsetConstraint(const NamespaceQuota& q, const kube::TrainingJob& job) {
  for (const auto& [resource, limit] : q.hard_per_pods) {
    const bool is_limit = resource.starts_with(kLimits);
    const std::string unit(Unit(resource));
    if (unit != "cpu" && unit != "memory") continue;
    const std::vector<std::string>& unset = is_limit ? job.unset_limits : job.unset_requests;
    if (std::find(unset.begin(), unset.end(), unit) == unset.end()) continue;
    return absl::StrCat("ResourceQuota ", q.namespace_name, "/", q.name, ScopeText(q), " tracks ",
                        KeyName(resource), " in namespace ", q.namespace_name,
                        ", and a container of the gang's "
                        "pods sets no ",
                        unit, is_limit ? " limit" : " request",
                        ": the API server would refuse its pods (must specify ", KeyName(resource),
                        "), so it is not admitted");
  }
  return "";
}

// Over the quotas that apply to the job's pods, and each of their `limits` its pods are charged
// on, the first message `why(quota, resource, limit, per_pod)` gives; "" if none gives one.
// `pc` is the pods' PriorityClass (PodPriorityClass).
template <typename Why>
std::string FirstShort(const kube::TrainingJob& job, std::string_view pc,
                       const std::vector<NamespaceQuota>& quotas,
                       ResourceList NamespaceQuota::*limits, Why why) {
  for (const NamespaceQuota& q : quotas) {
    if (!Applies(q, job, pc)) continue;
    for (const auto& [resource, limit] : q.*limits) {
      const std::optional<int64_t> per_pod = PerPod(job, resource);
      if (!per_pod) continue;
      if (std::string message = why(q, resource, limit, *per_pod); !message.empty()) {
        return message;
      }
    }
  }
  return "";
}

// A list's amount of `resource`, 0 if absent.
int64_t Amount(const ResourceList& list, const std::string& resource) {
  auto it = list.find(resource);
  return it == list.end() ? 0 : it->second;
}

// What a quota's current use, and the pods admitted jobs are owed (ChargeJobPods), leave of
// `limit` on `resource` (status.hard less status.used less owed). Everything the namespace's
// pods are charged now counts, a job's own included: pods left from its eviction that are still
// terminating count until they are gone, as the API server would refuse its new pods until
// then. A limit lowered below the use leaves no room, not a negative one.
int64_t Room(const NamespaceQuota& q, const std::string& resource, int64_t limit) {
  return std::max<int64_t>(0, limit - Amount(q.used, resource) - Amount(q.owed, resource));
}

// "2" pods, or "16 (2 pods of 8)" of a resource: what `pods` pods need.
std::string Needed(const std::string& resource, int64_t per_pod, int32_t pods) {
  if (resource == "pods") return absl::StrCat(pods);
  const std::string_view unit = Unit(resource);
  return absl::StrCat(FormatQuantity(unit, per_pod * pods), " (", CountedNoun(pods, "pod"), " of ",
                      FormatQuantity(unit, per_pod), ")");
}

// A quota's budget name for the admission core: "<namespace>/<quota>/<resource>".
std::string BudgetName(const NamespaceQuota& q, const std::string& resource) {
  return absl::StrCat(q.namespace_name, "/", q.name, "/", resource);
}

}  // namespace

absl::StatusOr<NamespaceQuota> DecodeResourceQuota(std::string_view json) {
  absl::StatusOr<kube::RawObject> raw = kube::Decode<kube::RawObject>(json);
  if (!raw.ok()) return Annotate(raw.status(), "ResourceQuota");
  NamespaceQuota q;
  q.namespace_name = raw->meta.namespace_;
  q.name = raw->meta.name;
  const std::string title = absl::StrCat("ResourceQuota ", raw->meta.Key());
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(json);
  if (!doc.ok()) return Annotate(doc.status(), title);
  if (const Value* status = Member(*doc, "status"); status != nullptr) {
    RETURN_IF_ERROR(
        DecodeCharged(Member(*status, "hard"), title, "status.hard", Fold::kLower, q.status_hard));
    RETURN_IF_ERROR(
        DecodeCharged(Member(*status, "used"), title, "status.used", Fold::kHigher, q.used));
  }
  const Value* spec = Member(*doc, "spec");
  if (spec == nullptr) return q;
  RETURN_IF_ERROR(
      DecodeCharged(Member(*spec, "hard"), title, "spec.hard", Fold::kLower, q.hard_per_pods));
  if (const Value* scopes = Member(*spec, "scopes"); scopes != nullptr && scopes->IsArray()) {
    for (const Value& s : scopes->GetArray()) {
      if (s.IsString()) q.scopes.emplace_back(s.GetString(), s.GetStringLength());
    }
  }
  if (const Value* selector = Member(*spec, "scopeSelector"); selector != nullptr) {
    const Value* exprs = Member(*selector, "matchExpressions");
    if (exprs != nullptr && exprs->IsArray()) {
      for (const Value& e : exprs->GetArray()) {
        ScopeRequirement r{.scope = std::string(kube::StringMember(e, "scopeName")),
                           .op = std::string(kube::StringMember(e, "operator")),
                           .values = {}};
        if (const Value* values = Member(e, "values"); values != nullptr && values->IsArray()) {
          for (const Value& v : values->GetArray()) {
            if (v.IsString()) r.values.emplace_back(v.GetString(), v.GetStringLength());
          }
        }
        q.selector.push_back(std::move(r));
      }
    }
  }
  return q;
}

std::string QuotaRefusal(const kube::TrainingJob& job, int32_t pods,
                         const std::vector<NamespaceQuota>& quotas,
                         std::string_view global_default) {
  const std::string pc = PodPriorityClass(job, global_default);
  for (const NamespaceQuota& q : quotas) {
    if (!Applies(q, job, pc)) continue;
    if (std::string unset = UnsetConstraint(q, job); !unset.empty()) return unset;
  }
  return FirstShort(job, pc, quotas, &NamespaceQuota::hard_per_pods,
                    [&](const NamespaceQuota& q, const std::string& resource, int64_t limit,
                        int64_t per_pod) -> std::string {
                      if (per_pod * pods <= limit) return "";
                      const bool count = resource == "pods";
                      return absl::StrCat(
                          "ResourceQuota ", q.namespace_name, "/", q.name, ScopeText(q),
                          " allows at most ",
                          count ? absl::StrCat(limit, " pods")
                                : absl::StrCat(FormatQuantity(Unit(resource), limit), " ",
                                               KeyName(resource)),
                          " in namespace ", q.namespace_name, ", and the gang needs ",
                          Needed(resource, per_pod, pods),
                          ": the API server would refuse its pods, so it is not admitted");
                    });
}

std::string QuotaShortfall(const kube::TrainingJob& job, int32_t pods,
                           const std::vector<NamespaceQuota>& quotas,
                           std::string_view global_default) {
  return FirstShort(
      job, PodPriorityClass(job, global_default), quotas, &NamespaceQuota::status_hard,
      [&](const NamespaceQuota& q, const std::string& resource, int64_t limit,
          int64_t per_pod) -> std::string {
        const int64_t room = Room(q, resource, limit);
        if (per_pod * pods <= room) return "";
        const int64_t owed = Amount(q.owed, resource);
        const int64_t in_use = Amount(q.used, resource) + owed;
        const bool count = resource == "pods";
        auto amount = [&](int64_t a) {
          return count ? absl::StrCat(a) : FormatQuantity(Unit(resource), a);
        };
        return absl::StrCat(
            "ResourceQuota ", q.namespace_name, "/", q.name, ScopeText(q), " has room for ",
            count ? CountedNoun(room, "more pod")
                  : absl::StrCat(amount(room), " more ", KeyName(resource)),
            " in namespace ", q.namespace_name, " (", amount(in_use), " of ", amount(limit),
            " used",
            owed > 0 ? absl::StrCat(", ", amount(owed),
                                    " of it by pods admitted gangs have yet "
                                    "to create")
                     : "",
            "), and ", job.elastic ? "its smallest gang" : "the gang", " needs ",
            Needed(resource, per_pod, pods), ": it waits until the namespace uses less");
      });
}

int32_t ElasticSizeWithRoom(const kube::TrainingJob& job, const placement::ElasticRange& range,
                            int32_t running, const std::vector<NamespaceQuota>& quotas,
                            std::string_view global_default) {
  // How many more of its pods every quota that applies has room for, as QuotaShortfall judges
  // each (per_pod * pods <= room), computed once instead of asking it about every size.
  std::optional<int64_t> more;  // nullopt: no quota limits them
  const std::string pc = PodPriorityClass(job, global_default);
  for (const NamespaceQuota& q : quotas) {
    if (!Applies(q, job, pc)) continue;
    for (const auto& [resource, limit] : q.status_hard) {
      const std::optional<int64_t> per_pod = PerPod(job, resource);
      if (!per_pod || *per_pod <= 0) continue;
      const int64_t fit = Room(q, resource, limit) / *per_pod;
      more = more ? std::min(*more, fit) : fit;
    }
  }
  const int32_t step = std::max(1, range.step);
  for (int32_t size = range.min + (range.max - range.min) / step * step; size > running;
       size -= step) {
    if (!more || size - running <= *more) return size;
  }
  // No room for more: the size it has (a job shrunk by an edit of maxReplicas keeps the new
  // maximum), and for a job not admitted its minimum, which QuotaShortfall checks first.
  return std::clamp(running, range.min, range.max);
}

int32_t LivePods(const std::vector<std::shared_ptr<const kube::Pod>>& pods) {
  return static_cast<int32_t>(std::count_if(pods.begin(), pods.end(), [](const auto& p) {
    return p->meta.deletion_timestamp.empty() && p->phase != "Succeeded" && p->phase != "Failed";
  }));
}

int32_t SucceededPods(const std::vector<std::shared_ptr<const kube::Pod>>& pods) {
  return static_cast<int32_t>(std::count_if(pods.begin(), pods.end(), [](const auto& p) {
    return p->meta.deletion_timestamp.empty() && p->phase == "Succeeded";
  }));
}

void ChargeJobPods(const std::vector<JobPods>& jobs, std::vector<NamespaceQuota>& quotas,
                   std::string_view global_default) {
  std::vector<std::string> classes;
  classes.reserve(jobs.size());
  for (const JobPods& j : jobs) classes.push_back(PodPriorityClass(*j.job, global_default));
  for (NamespaceQuota& q : quotas) {
    ResourceList existing;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const JobPods& j = jobs[i];
      if (!Applies(q, *j.job, classes[i])) continue;
      for (const auto& [resource, limit] : q.status_hard) {
        const std::optional<int64_t> per_pod = PerPod(*j.job, resource);
        if (!per_pod) continue;
        existing[resource] += *per_pod * j.existing;
        if (j.owed > 0) q.owed[resource] += *per_pod * j.owed;
      }
    }
    for (const auto& [resource, amount] : existing) {
      int64_t& used = q.used[resource];
      used = std::max(used, amount);
    }
  }
}

void AddQuotaBudgets(const std::vector<NamespaceQuota>& quotas,
                     std::map<std::string, admission::Budget>& budgets) {
  for (const NamespaceQuota& q : quotas) {
    for (const auto& [resource, limit] : q.status_hard) {
      budgets[BudgetName(q, resource)] = {
          .name = absl::StrCat("ResourceQuota ", q.namespace_name, "/", q.name, ScopeText(q)),
          .resource = KeyName(resource),
          .unit = std::string(Unit(resource)),
          .left = Room(q, resource, limit)};
    }
  }
}

std::map<std::string, int64_t> BudgetPerPod(const kube::TrainingJob& job,
                                            const std::vector<NamespaceQuota>& quotas,
                                            std::string_view global_default) {
  std::map<std::string, int64_t> out;
  const std::string pc = PodPriorityClass(job, global_default);
  for (const NamespaceQuota& q : quotas) {
    if (!Applies(q, job, pc)) continue;
    for (const auto& [resource, limit] : q.status_hard) {
      if (const std::optional<int64_t> per_pod = PerPod(job, resource); per_pod) {
        out[BudgetName(q, resource)] = *per_pod;
      }
    }
  }
  return out;
}

// A LimitRange item's quantity in canonical units; InvalidArgument naming `field`[name].
absl::StatusOr<int64_t> ItemAmount(const std::string& title, const std::string& field,
                                   const std::string& name, std::string_view text) {
  const std::string where = absl::StrCat(field, "[", name, "]");
  absl::StatusOr<Quantity> quantity = Quantity::Parse(text);
  if (!quantity.ok()) return Invalid(title, absl::StrCat(where, ": ", quantity.status().message()));
  absl::StatusOr<int64_t> amount = CanonicalAmount(name, *quantity);
  if (!amount.ok()) return Invalid(title, absl::StrCat(where, ": ", amount.status().message()));
  return *amount;
}

absl::StatusOr<LimitRangeDefaults> DecodeLimitRange(std::string_view json) {
  absl::StatusOr<kube::RawObject> raw = kube::Decode<kube::RawObject>(json);
  if (!raw.ok()) return Annotate(raw.status(), "LimitRange");
  const std::string title = absl::StrCat("LimitRange ", raw->meta.Key());
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(json);
  if (!doc.ok()) return Annotate(doc.status(), title);
  LimitRangeDefaults out{.namespace_name = raw->meta.namespace_, .name = raw->meta.name};
  const Value* spec = Member(*doc, "spec");
  const Value* limits = spec == nullptr ? nullptr : Member(*spec, "limits");
  if (limits == nullptr || !limits->IsArray()) return out;
  for (rapidjson::SizeType i = 0; i < limits->Size(); ++i) {
    const Value& item = (*limits)[i];
    if (!item.IsObject()) continue;
    const std::string_view type = kube::StringMember(item, "type");
    if (type != "Container" && type != "Pod") continue;
    std::map<std::string, ResourceList> lists;  // max, min, default, defaultRequest
    for (const char* field : {"max", "min", "default", "defaultRequest"}) {
      const Value* list = Member(item, field);
      if (list == nullptr || !list->IsObject()) continue;
      for (const auto& m : list->GetObject()) {
        if (!m.value.IsString()) continue;
        const std::string name(m.name.GetString(), m.name.GetStringLength());
        ASSIGN_OR_RETURN(int64_t amount,
                         ItemAmount(title, absl::StrCat("spec.limits[", i, "].", field), name,
                                    m.value.GetString()));
        lists[field].emplace(name, amount);
      }
    }
    // The bounds: of two items the lower max and the higher min.
    const bool container = type == "Container";
    for (const auto& [field, into, lower] :
         {std::tuple{"max", container ? &out.container_max : &out.pod_max, true},
          std::tuple{"min", container ? &out.container_min : &out.pod_min, false}}) {
      for (const auto& [name, amount] : lists[field]) {
        auto [it, added] = into->emplace(name, amount);
        if (!added)
          it->second = lower ? std::min(it->second, amount) : std::max(it->second, amount);
      }
    }
    if (!container) continue;
    // The defaults as the API server stores the item (SetDefaults_LimitRangeItem): `default`
    // falls back to `max`, `defaultRequest` to `default`, then to `min`. Of two items naming
    // one resource the first holds.
    ResourceList& item_limits = lists["default"];
    ResourceList& item_requests = lists["defaultRequest"];
    for (const auto& [name, amount] : lists["max"]) item_limits.emplace(name, amount);
    for (const auto& [name, amount] : item_limits) item_requests.emplace(name, amount);
    for (const auto& [name, amount] : lists["min"]) item_requests.emplace(name, amount);
    for (const auto& [name, amount] : item_limits) out.limits.emplace(name, amount);
    for (const auto& [name, amount] : item_requests) out.requests.emplace(name, amount);
  }
  return out;
}

void ApplyLimitRanges(const std::vector<LimitRangeDefaults>& ranges, kube::TrainingJob& job) {
  for (const LimitRangeDefaults& r : ranges) {
    if (r.namespace_name == job.meta.namespace_) {
      kube::ApplyContainerDefaults(r.limits, r.requests, job);
    }
  }
}

std::string LimitRangeRefusal(const std::vector<LimitRangeDefaults>& ranges,
                              const kube::TrainingJob& job) {
  using Kind = kube::TrainingJob::Container::Kind;
  for (const LimitRangeDefaults& r : ranges) {
    if (r.namespace_name != job.meta.namespace_) continue;
    // The first resource of `bounds` whose amount (`amount_of`, nullopt for unset) is out of
    // it: unset cannot exceed a max, and is below any min.
    auto first_out = [&r](const ResourceList& bounds, bool max, const std::string& where,
                          const char* per, auto&& amount_of) -> std::string {
      for (const auto& [resource, bound] : bounds) {
        const std::optional<int64_t> have = amount_of(resource);
        if (max ? (!have || *have <= bound) : (have && *have >= bound)) continue;
        return absl::StrCat(where, ": ", resource, " ",
                            have ? FormatQuantity(resource, *have) : "none", " is ",
                            max ? "above the maximum" : "below the minimum", " per ", per, " (",
                            FormatQuantity(resource, bound), ") of LimitRange ", r.namespace_name,
                            "/", r.name, ": the API server would refuse every pod");
      }
      return "";
    };
    int index[2] = {0, 0};  // containers, initContainers
    for (const kube::TrainingJob::Container& c : job.containers) {
      const bool init = c.kind != Kind::kContainer;
      const std::string where =
          absl::StrCat("spec.template.spec.", init ? "initContainers[" : "containers[",
                       index[init ? 1 : 0]++, "]");
      for (const bool max : {true, false}) {
        // Against a max the larger of request and limit, against a min the smaller.
        auto amount_of = [&](const std::string& resource) {
          std::optional<int64_t> out;
          for (const ResourceList* list : {&c.requests, &c.limits}) {
            auto it = list->find(resource);
            if (it == list->end()) continue;
            out = !out ? it->second : max ? std::max(*out, it->second) : std::min(*out, it->second);
          }
          return out;
        };
        std::string m =
            first_out(max ? r.container_max : r.container_min, max, where, "Container", amount_of);
        if (!m.empty()) return m;
      }
    }
    auto pod_amount = [&](const std::string& resource) -> std::optional<int64_t> {
      auto it = job.pod.requests.find(resource);
      return it == job.pod.requests.end() ? std::nullopt : std::optional<int64_t>(it->second);
    };
    for (const bool max : {true, false}) {
      std::string m =
          first_out(max ? r.pod_max : r.pod_min, max, "spec.template.spec", "Pod", pod_amount);
      if (!m.empty()) return m;
    }
  }
  return "";
}

bool QuotaChangeMatters(const NamespaceQuota& before, const NamespaceQuota& after) {
  if (before.namespace_name != after.namespace_name || before.name != after.name ||
      before.scopes != after.scopes || before.selector != after.selector ||
      before.hard_per_pods != after.hard_per_pods || before.status_hard != after.status_hard) {
    return true;
  }
  // Use that went down (or is no longer reported) is room for a job held back; use that went
  // up, at every pod create in the namespace, only holds back more, which the next cycle sees.
  for (const auto& [resource, was] : before.used) {
    auto now = after.used.find(resource);
    if (now == after.used.end() || now->second < was) return true;
  }
  return false;
}

}  // namespace phalanx::operator_server
