#include "common/resources.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"

namespace phalanx {

absl::StatusOr<int64_t> CanonicalAmount(std::string_view name, const Quantity& quantity) {
  if (name != kResourceCpu) return quantity.Value();
  std::optional<int64_t> milli = quantity.MilliValue();
  if (!milli.has_value()) {
    return absl::OutOfRangeError(absl::StrCat("cpu quantity \"", quantity.ToString(),
                                              "\" is too large: its millicores exceed 64 bits"));
  }
  return *milli;
}

std::string FormatQuantity(std::string_view name, int64_t amount) {
  if (name == kResourceCpu) return Quantity::FromMilli(amount).ToString();
  // Devices are counted: "1000 nvidia.com/gpu", not "1k".
  if (IsExtendedResourceName(name)) return std::to_string(amount);
  Quantity::Format format = Quantity::Format::kDecimalSI;
  const absl::string_view n(name.data(), name.size());
  if (name == kResourceMemory || absl::StrContains(n, "storage") ||
      IsHugePagesResourceName(name)) {
    format = Quantity::Format::kBinarySI;  // "1000Gi", not "1073741824k"
  }
  return Quantity::FromValue(amount, format).ToString();
}

bool IsExtendedResourceName(std::string_view name) {
  const absl::string_view n(name.data(), name.size());
  return absl::StrContains(n, "/") && !absl::StrContains(n, "kubernetes.io/") &&
         !absl::StartsWith(n, "requests.");
}

bool IsHugePagesResourceName(std::string_view name) {
  return absl::StartsWith(absl::string_view(name.data(), name.size()), "hugepages-");
}

absl::StatusOr<ResourceList> ParseResourceList(const std::map<std::string, std::string>& text,
                                               std::string_view field) {
  ResourceList out;
  for (const auto& [name, value] : text) {
    std::string where = absl::StrCat(absl::string_view(field.data(), field.size()), "[", name, "]");
    if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": empty resource name"));
    absl::StatusOr<Quantity> quantity = Quantity::Parse(value);
    if (!quantity.ok()) return Annotate(quantity.status(), where);
    if (quantity->IsNegative()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": must not be negative, got \"", value, "\""));
    }
    if (IsExtendedResourceName(name)) {
      const std::optional<int64_t> milli = quantity->MilliValue();
      if (milli.has_value() && *milli % 1000 != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": must be a whole number, got \"", value,
            "\" (an extended resource: Kubernetes counts it in whole units)"));
      }
    }
    absl::StatusOr<int64_t> amount = CanonicalAmount(name, *quantity);
    if (!amount.ok()) return Annotate(amount.status(), where);
    out[name] = *amount;
  }
  return out;
}

std::string NonOvercommitLimitProblem(const std::map<std::string, std::string>& requests,
                                      const std::map<std::string, std::string>& limits,
                                      std::string_view limits_field) {
  for (const auto& [name, request] : requests) {
    if (!IsExtendedResourceName(name) && !IsHugePagesResourceName(name)) continue;
    const std::string field = absl::StrCat(std::string(limits_field), "[", name, "]");
    auto limit = limits.find(name);
    if (limit == limits.end()) {
      return absl::StrCat(field, ": must be set, equal to the request (\"", request,
                          "\"): the API server refuses a pod that requests ", name,
                          " without an equal limit (it cannot be overcommitted)");
    }
    absl::StatusOr<ResourceList> a = ParseResourceList({{name, request}}, field);
    absl::StatusOr<ResourceList> b = ParseResourceList({{name, limit->second}}, field);
    if (a.ok() && b.ok() && *a != *b) {
      return absl::StrCat(field, ": must equal the request (\"", request, "\"), got \"",
                          limit->second, "\": the API server refuses a pod whose ", name,
                          " request and limit differ (it cannot be overcommitted)");
    }
  }
  return "";
}

std::string UnmodelledSchedulingProblem(std::string_view field) {
  const bool spread = field.find("topologySpreadConstraints") != std::string_view::npos;
  return absl::StrCat(
      std::string(field),
      ": not modelled by gang placement, which reserves every rank's node before the pods "
      "exist, so the rule could leave ranks unschedulable on their reserved nodes; ",
      spread ? "use spec.topology to place the gang, or whenUnsatisfiable: ScheduleAnyway"
             : "the one pod anti-affinity modelled keeps the job's own pods one per node "
               "(topologyKey kubernetes.io/hostname, a labelSelector the template's own labels "
               "match, no other namespaces); pod affinity is not modelled");
}

bool OneRankPerNode(const AntiAffinityTermView& term,
                    const std::map<std::string, std::string>& pod_labels) {
  if (term.topology_key != "kubernetes.io/hostname" || term.beyond_own_namespace ||
      term.label_keys || !term.has_selector) {
    return false;
  }
  for (const auto& [key, value] : term.match_labels) {
    auto it = pod_labels.find(key);
    if (it == pod_labels.end() || it->second != value) return false;
  }
  for (const AntiAffinityTermView::Expression& e : term.match_expressions) {
    auto it = pod_labels.find(e.key);
    const bool has = it != pod_labels.end();
    const bool in = has && std::find(e.values.begin(), e.values.end(), it->second) !=
                               e.values.end();
    const bool holds = e.op == "In"             ? in
                       : e.op == "NotIn"        ? !in
                       : e.op == "Exists"       ? has
                       : e.op == "DoesNotExist" ? !has
                                                : false;
    if (!holds) return false;
  }
  return true;
}

void AddTo(ResourceList& a, const ResourceList& b) {
  for (const auto& [name, amount] : b) a[name] += amount;
}

namespace {
void MaxInto(ResourceList& a, const ResourceList& b) {
  for (const auto& [name, amount] : b) {
    int64_t& slot = a[name];
    slot = std::max(slot, amount);
  }
}
}  // namespace

void PodResourceSum::AddContainer(const ResourceList& r) { AddTo(containers_, r); }

void PodResourceSum::AddSidecar(const ResourceList& r) {
  AddTo(sidecars_, r);
  MaxInto(init_max_, sidecars_);
}

void PodResourceSum::AddInit(ResourceList r) {
  AddTo(r, sidecars_);
  MaxInto(init_max_, r);
}

ResourceList PodResourceSum::Total() && {
  ResourceList total = std::move(containers_);
  AddTo(total, sidecars_);
  MaxInto(total, init_max_);
  return total;
}

void SubtractFrom(ResourceList& a, const ResourceList& b) {
  for (const auto& [name, amount] : b) a[name] -= amount;
}

ResourceList Scaled(const ResourceList& a, int64_t factor) {
  ResourceList out;
  for (const auto& [name, amount] : a) out[name] = amount * factor;
  return out;
}

bool FitsIn(const ResourceList& request, const ResourceList& available) {
  for (const auto& [name, amount] : request) {
    if (amount <= 0) continue;
    auto it = available.find(name);
    if (it == available.end() || it->second < amount) return false;
  }
  return true;
}

std::string FormatResources(const ResourceList& list) {
  return absl::StrJoin(list, ", ", [](std::string* out, const auto& entry) {
    absl::StrAppend(out, entry.first, "=", FormatQuantity(entry.first, entry.second));
  });
}

}  // namespace phalanx
