#include "operator/server/namespace_quota.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/quantity.h"
#include "common/status.h"
#include "kube/decode.h"
#include "kube/json.h"

namespace phalanx::operator_server {
namespace {

using kube::Member;
using rapidjson::Value;

absl::Status Invalid(const std::string& title, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(title, ": ", message));
}

// The resource a hard limit charges pod creations on ("pods", or the requested resource's
// name), "" for one this check leaves alone (limits, object counts, storage classes).
std::string ChargedResource(std::string_view key) {
  if (key == "pods" || key == "count/pods") return "pods";
  if (key.substr(0, 9) == "requests.") return std::string(key.substr(9));
  if (key == "cpu" || key == "memory" || key == "ephemeral-storage") return std::string(key);
  return "";
}

// Whether one scope (spec.scopes, or a requirement of the selector) matches the job's pods.
bool ScopeMatches(const ScopeRequirement& r, const kube::TrainingJob& job) {
  // The pods' class: the job's, else the template's own (which the pods then keep).
  const std::string pc =
      job.priority_class_name.empty() ? job.pod.priority_class_name.str() : job.priority_class_name;
  if (r.scope == "PriorityClass") {
    const bool listed = std::find(r.values.begin(), r.values.end(), pc) != r.values.end();
    if (r.op == "In") return !pc.empty() && listed;
    if (r.op == "NotIn") return pc.empty() || !listed;
    if (r.op == "Exists") return !pc.empty();
    if (r.op == "DoesNotExist") return pc.empty();
    return false;
  }
  const bool requests = !job.pod.requests.empty();
  // The operator sets no activeDeadlineSeconds on pods (the job's deadline is its own), and
  // its pods carry no cross-namespace pod affinity (placement does not model pod affinity).
  if (r.scope == "BestEffort") return r.op == "DoesNotExist" ? requests : !requests;
  if (r.scope == "NotBestEffort") return r.op == "DoesNotExist" ? !requests : requests;
  if (r.scope == "Terminating") return r.op == "DoesNotExist";
  if (r.scope == "NotTerminating") return r.op != "DoesNotExist";
  if (r.scope == "CrossNamespacePodAffinity") return r.op == "DoesNotExist";
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
  const Value* spec = Member(*doc, "spec");
  if (spec == nullptr) return q;
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
  if (const Value* hard = Member(*spec, "hard"); hard != nullptr && hard->IsObject()) {
    for (const auto& m : hard->GetObject()) {
      const std::string key(m.name.GetString(), m.name.GetStringLength());
      const std::string resource = ChargedResource(key);
      if (resource.empty() || !m.value.IsString()) continue;
      const std::string field = absl::StrCat("spec.hard[", key, "]");
      absl::StatusOr<Quantity> quantity = Quantity::Parse(m.value.GetString());
      if (!quantity.ok()) {
        return Invalid(title, absl::StrCat(field, ": ", quantity.status().message()));
      }
      absl::StatusOr<int64_t> amount = CanonicalAmount(resource, *quantity);
      if (!amount.ok()) return Invalid(title, absl::StrCat(field, ": ", amount.status().message()));
      // "pods" and "count/pods" are one limit: the lower holds.
      auto [it, inserted] = q.hard_per_pods.emplace(resource, *amount);
      if (!inserted) it->second = std::min(it->second, *amount);
    }
  }
  return q;
}

std::string QuotaRefusal(const kube::TrainingJob& job, int32_t pods,
                         const std::vector<NamespaceQuota>& quotas) {
  for (const NamespaceQuota& q : quotas) {
    if (q.namespace_name != job.meta.namespace_) continue;
    bool applies = true;
    for (const std::string& scope : q.scopes) {
      applies = applies && ScopeMatches({.scope = scope, .op = "Exists", .values = {}}, job);
    }
    for (const ScopeRequirement& r : q.selector) applies = applies && ScopeMatches(r, job);
    if (!applies) continue;
    for (const auto& [resource, limit] : q.hard_per_pods) {
      int64_t per_pod = 1;
      if (resource != "pods") {
        auto it = job.pod.requests.find(resource);
        if (it == job.pod.requests.end()) continue;
        per_pod = it->second;
      }
      const int64_t needed = per_pod * pods;
      if (needed <= limit) continue;
      const bool count = resource == "pods";
      return absl::StrCat("ResourceQuota ", q.namespace_name, "/", q.name, ScopeText(q),
                          " allows at most ",
                          count ? absl::StrCat(limit, " pods")
                                : absl::StrCat(FormatQuantity(resource, limit), " ", resource),
                          " in namespace ", q.namespace_name, ", and the gang needs ",
                          count ? absl::StrCat(needed)
                                : absl::StrCat(FormatQuantity(resource, needed), " (", pods,
                                               " pods of ", FormatQuantity(resource, per_pod), ")"),
                          ": the API server would refuse its pods, so it is not admitted");
    }
  }
  return "";
}

}  // namespace phalanx::operator_server
