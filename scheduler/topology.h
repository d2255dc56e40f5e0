// Topology: the ordered node-label keys that describe a cluster's network hierarchy, coarsest
// first; `kubernetes.io/hostname` is the implicit finest level. Levels are numbered
//   0 = the whole cluster, 1..depth() = the label levels, depth()+1 = the node (hostname),
// which is how the rest of the placement core refers to them.
//
//   ASSIGN_OR_RETURN(Topology topology, Topology::Preset("eks"));
//   topology.LevelIndex("topology.k8s.aws/network-node-layer-3");  // 3
//   topology.LevelIndex("kubernetes.io/hostname");                  // 4
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace phalanx::placement {

inline constexpr std::string_view kEksLayerPrefix = "topology.k8s.aws/network-node-layer-";
inline constexpr std::string_view kGpuCliqueLabel = "nvidia.com/gpu.clique";

class Topology {
 public:
  // Label keys coarsest first. They must be non-empty, unique, and not the hostname label.
  static absl::StatusOr<Topology> Create(std::vector<std::string> levels);
  // "eks" (layer-1..3), "eks-4layer" (layer-1..4), "gb200" (layer-1..3 + nvidia.com/gpu.clique).
  static absl::StatusOr<Topology> Preset(std::string_view name);
  static std::vector<std::string> PresetNames();

  const std::vector<std::string>& levels() const { return levels_; }
  // Number of label levels (excluding the cluster root and the hostname level).
  int depth() const { return static_cast<int>(levels_.size()); }
  int node_level() const { return depth() + 1; }

  // 0 for "" (the whole cluster), 1..depth() for a label level, node_level() for the hostname
  // label; nullopt for anything else.
  std::optional<int> LevelIndex(std::string_view label) const;
  // The label key of a level index: "" for 0, the hostname label for node_level().
  std::string LevelLabel(int index) const;

  // A node that carries a level's label but lacks a coarser one: it counts only down to the
  // level above `missing`, and its labels in `ignored` (deeper, present) place it nowhere.
  struct LabelGap {
    std::string missing;               // the first level label the node lacks
    std::vector<std::string> ignored;  // deeper level labels it carries, coarsest first

    friend bool operator==(const LabelGap&, const LabelGap&) = default;
  };
  // nullopt when the node's level labels are a prefix of the levels (none, some, or all).
  std::optional<LabelGap> FindLabelGap(const std::map<std::string, std::string>& labels) const;

 private:
  explicit Topology(std::vector<std::string> levels) : levels_(std::move(levels)) {}
  std::vector<std::string> levels_;
};

}  // namespace phalanx::placement
