#include "scheduler/topology.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/placement_types.h"

namespace phalanx::placement {
namespace {

std::string EksLayer(int n) { return absl::StrCat(std::string(kEksLayerPrefix), n); }

}  // namespace

absl::StatusOr<Topology> Topology::Create(std::vector<std::string> levels) {
  std::set<std::string> seen;
  for (size_t i = 0; i < levels.size(); ++i) {
    const std::string& level = levels[i];
    std::string field = absl::StrCat("topology.levels[", i, "]");
    if (level.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is empty"));
    if (level == kHostnameLabel) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " is ", level, ", which is the implicit finest level"));
    }
    if (!seen.insert(level).second) {
      return absl::InvalidArgumentError(absl::StrCat(field, " (", level, ") is repeated"));
    }
  }
  return Topology(std::move(levels));
}

absl::StatusOr<Topology> Topology::Preset(std::string_view name) {
  if (name == "eks") return Create({EksLayer(1), EksLayer(2), EksLayer(3)});
  if (name == "eks-4layer") return Create({EksLayer(1), EksLayer(2), EksLayer(3), EksLayer(4)});
  if (name == "gb200") {
    return Create({EksLayer(1), EksLayer(2), EksLayer(3), std::string(kGpuCliqueLabel)});
  }
  return absl::InvalidArgumentError(absl::StrCat("topology preset \"",
                                                 absl::string_view(name.data(), name.size()),
                                                 "\" is unknown; known presets: ",
                                                 absl::StrJoin(PresetNames(), ", ")));
}

std::vector<std::string> Topology::PresetNames() { return {"eks", "eks-4layer", "gb200"}; }

std::optional<int> Topology::LevelIndex(std::string_view label) const {
  if (label.empty()) return 0;
  if (label == kHostnameLabel) return node_level();
  for (int i = 0; i < depth(); ++i) {
    if (levels_[i] == label) return i + 1;
  }
  return std::nullopt;
}

std::string Topology::LevelLabel(int index) const {
  if (index <= 0) return "";
  if (index > depth()) return std::string(kHostnameLabel);
  return levels_[index - 1];
}

std::optional<Topology::LabelGap> Topology::FindLabelGap(
    const std::map<std::string, std::string>& labels) const {
  std::optional<LabelGap> gap;
  for (const std::string& level : levels_) {
    const bool carried = labels.contains(level);
    if (!carried && !gap) gap = LabelGap{.missing = level, .ignored = {}};
    if (carried && gap) gap->ignored.push_back(level);
  }
  if (gap && gap->ignored.empty()) return std::nullopt;
  return gap;
}

}  // namespace phalanx::placement
