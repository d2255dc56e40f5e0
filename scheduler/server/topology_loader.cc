#include "scheduler/server/topology_loader.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "kube/api/resources.h"
#include "kube/json.h"
#include "scheduler/placement_types.h"

namespace phalanx::scheduler {

absl::StatusOr<placement::Topology> TopologyFromObject(std::string_view json,
                                                       const std::string& name) {
  const std::string what = absl::StrCat("NetworkTopology ", name);
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(json);
  if (!doc.ok()) return Annotate(doc.status(), what);
  std::vector<std::string> levels;
  if (doc->IsObject() && doc->HasMember("spec") && (*doc)["spec"].IsObject() &&
      (*doc)["spec"].HasMember("levels") && (*doc)["spec"]["levels"].IsArray()) {
    for (const auto& level : (*doc)["spec"]["levels"].GetArray()) {
      std::string_view label = level.IsObject() ? kube::StringMember(level, "nodeLabel") : "";
      if (label.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": spec.levels[].nodeLabel missing"));
      }
      // kubernetes.io/hostname is implicit as the last level.
      if (label != placement::kHostnameLabel) levels.emplace_back(label);
    }
  }
  absl::StatusOr<placement::Topology> topology = placement::Topology::Create(std::move(levels));
  if (!topology.ok()) return Annotate(topology.status(), what);
  return topology;
}

absl::StatusOr<placement::Topology> LoadTopology(kube::Client& client, const std::string& name,
                                                 std::string_view preset) {
  if (name.empty()) return placement::Topology::Preset(preset);
  absl::StatusOr<std::string> json = client.Get(kube::NetworkTopologies(), "", name);
  if (!json.ok()) return Annotate(json.status(), absl::StrCat("NetworkTopology ", name));
  return TopologyFromObject(*json, name);
}

}  // namespace phalanx::scheduler
