#include "scheduler/resource_vector.h"

#include "absl/strings/str_cat.h"

namespace phalanx::placement {

ResourceTable::ResourceTable()
    : names_{std::string(kResourceCpu), std::string(kResourceMemory), std::string(kResourceGpu),
             std::string(kResourceEfa), std::string(kResourcePods)} {}

int ResourceTable::Find(std::string_view name) const {
  for (int i = 0; i < size(); ++i) {
    if (names_[i] == name) return i;
  }
  return -1;
}

absl::StatusOr<int> ResourceTable::Intern(std::string_view name) {
  int index = Find(name);
  if (index >= 0) return index;
  if (size() >= kMaxResources) {
    return absl::ResourceExhaustedError(
        absl::StrCat("more than ", kMaxResources, " distinct resource names; cannot track \"",
                     absl::string_view(name.data(), name.size()), "\""));
  }
  names_.emplace_back(name);
  return size() - 1;
}

absl::StatusOr<ResourceVector> ResourceTable::ToVector(const ResourceList& list,
                                                       std::string_view kind,
                                                       std::string_view owner,
                                                       std::string_view field) {
  ResourceVector out;
  for (const auto& [name, amount] : list) {
    if (name.empty() || amount < 0) {
      auto view = [](std::string_view v) { return absl::string_view(v.data(), v.size()); };
      std::string where =
          absl::StrCat(view(kind), "[", view(owner), "].", view(field), "[", name, "]");
      if (name.empty()) return absl::InvalidArgumentError(where + " has an empty name");
      return absl::InvalidArgumentError(absl::StrCat(where, " must not be negative, got ", amount));
    }
    absl::StatusOr<int> index = Intern(name);
    if (!index.ok()) return index.status();
    out[*index] = amount;
  }
  return out;
}

ResourceList ResourceTable::ToList(const ResourceVector& vector) const {
  ResourceList out;
  for (int i = 0; i < size(); ++i) {
    if (vector[i] != 0) out[names_[i]] = vector[i];
  }
  return out;
}

}  // namespace phalanx::placement
