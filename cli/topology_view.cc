#include "cli/topology_view.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/resources.h"
#include "common/status.h"
#include "kube/api/training_job.h"
#include "kube/decode.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/server/live_snapshot.h"

namespace phalanx::cli {
namespace {

template <typename T>
absl::StatusOr<std::vector<std::shared_ptr<const T>>> DecodeAll(
    kube::Decoder& decoder, const std::vector<std::string>& items, const std::string& kind) {
  std::vector<std::shared_ptr<const T>> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StatusOr<T> object = decoder.Decode<T>(items[i]);
    if (!object.ok()) return Annotate(object.status(), absl::StrCat(kind, " #", i));
    out.push_back(std::make_shared<const T>(*std::move(object)));
  }
  return out;
}

int64_t Gpus(const ResourceList& list) {
  auto it = list.find(kResourceGpu);
  return it == list.end() ? 0 : it->second;
}

// "2 nodes carry ...: gby-0000 without topology.k8s.aws/network-node-layer-1, ...".
std::string LabelGapNote(
    const std::vector<std::pair<std::string, placement::Topology::LabelGap>>& gaps) {
  constexpr size_t kShown = 3;
  std::vector<std::string> named;
  for (size_t i = 0; i < gaps.size() && i < kShown; ++i) {
    named.push_back(absl::StrCat(gaps[i].first, " without ", gaps[i].second.missing));
  }
  if (gaps.size() > kShown) named.push_back(absl::StrCat("... (", gaps.size() - kShown, " more)"));
  const bool one = gaps.size() == 1;
  return absl::StrCat(gaps.size(), one ? " node carries" : " nodes carry",
                      " a topology label but ", one ? "lacks" : "lack", " a coarser level's, so ",
                      one ? "its" : "their", " deeper labels are ignored: ",
                      absl::StrJoin(named, ", "));
}

// Level labels of the presets that the nodes carry, or that TrainingJobs holding a reservation
// use (phalanx-scheduler placed them by it), and that `topology` lacks: the sign that
// phalanx-scheduler runs with other levels than these.
std::optional<std::string> ForeignLevelsNote(
    const placement::Topology& topology, const std::string& levels_source,
    const std::vector<std::shared_ptr<const kube::Node>>& nodes,
    const std::vector<std::shared_ptr<const kube::RawObject>>& jobs) {
  std::vector<std::pair<std::string, placement::Topology>> presets;
  for (const std::string& name : placement::Topology::PresetNames()) {
    absl::StatusOr<placement::Topology> preset = placement::Topology::Preset(name);
    if (preset.ok()) presets.emplace_back(name, *std::move(preset));
  }
  std::set<std::string> known;
  for (const auto& [name, preset] : presets) {
    for (const std::string& level : preset.levels()) {
      if (!topology.LevelIndex(level)) known.insert(level);
    }
  }
  std::map<std::string, int> on_nodes;  // label -> nodes carrying it
  for (const auto& node : nodes) {
    for (const std::string& label : known) {
      if (node->meta.labels.contains(label)) ++on_nodes[label];
    }
  }
  std::set<std::string> in_jobs;
  int placed_jobs = 0;
  for (const auto& raw : jobs) {
    absl::StatusOr<kube::TrainingJob> job = kube::DecodeTrainingJob(raw->json);
    if (!job.ok() || !scheduler::RestorableFrom(*job)) continue;
    bool foreign = false;
    for (const std::string* level : {&job->topology.required, &job->topology.preferred,
                                     &job->topology.group_level}) {
      if (!level->empty() && !topology.LevelIndex(*level)) {
        in_jobs.insert(*level);
        foreign = true;
      }
    }
    placed_jobs += foreign ? 1 : 0;
  }
  if (on_nodes.empty() && in_jobs.empty()) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& [label, count] : on_nodes) {
    parts.push_back(absl::StrCat(count, count == 1 ? " node carries " : " nodes carry ", label));
  }
  if (!in_jobs.empty()) {
    parts.push_back(absl::StrCat(placed_jobs, placed_jobs == 1 ? " placed TrainingJob uses "
                                                               : " placed TrainingJobs use ",
                                 absl::StrJoin(in_jobs, ", ")));
  }
  // The first preset that has every level seen.
  std::string advice = "--topology NAME (a NetworkTopology with those levels)";
  for (const auto& [name, preset] : presets) {
    auto has = [&](const std::string& level) { return preset.LevelIndex(level).has_value(); };
    if (std::all_of(on_nodes.begin(), on_nodes.end(), [&](const auto& l) { return has(l.first); })
        && std::all_of(in_jobs.begin(), in_jobs.end(), has)) {
      advice = absl::StrCat("--topology-preset ", name, " or --topology NAME");
      break;
    }
  }
  return absl::StrCat(absl::StrJoin(parts, ", "), ", which the levels used here",
                      levels_source.empty() ? "" : absl::StrCat(" (", levels_source, ")"),
                      " lack: phalanx-scheduler may use other levels; pass --server to use its "
                      "levels, or ", advice);
}

}  // namespace

placement::SummaryOptions TopologySummaryOptions(int max_level) {
  // A tree for people: every domain, however many (the wire allows 100,000).
  return {.max_level = max_level, .max_domains = 100000};
}

absl::StatusOr<TopologyView> TopologyFromObjects(const placement::Topology& topology,
                                                 const ClusterObjects& objects,
                                                 const TopologyViewOptions& options) {
  kube::Decoder decoder;
  ASSIGN_OR_RETURN(auto nodes, DecodeAll<kube::Node>(decoder, objects.nodes, "Node"));
  ASSIGN_OR_RETURN(auto pods, DecodeAll<kube::Pod>(decoder, objects.pods, "Pod"));
  ASSIGN_OR_RETURN(auto jobs, DecodeAll<kube::RawObject>(decoder, objects.jobs, "TrainingJob"));

  placement::InProcessPlacementService service{placement::ClusterSnapshot(topology)};
  scheduler::LiveSnapshot live(service, {.log_label_gaps = false});  // a note says it once
  live.Build(nodes, jobs, pods);

  TopologyView view;
  view.source =
      "the API server's nodes, bound pods and TrainingJob reservations (without --server, "
      "reservations not yet in a job's status are not seen)";
  view.levels_source = options.levels_source;
  view.max_level = options.max_level;
  if (!options.levels_from_scheduler) {
    if (std::optional<std::string> note =
            ForeignLevelsNote(topology, options.levels_source, nodes, jobs)) {
      view.notes.push_back(*std::move(note));
    }
  }
  if (auto gaps = live.LabelGapNodes(); !gaps.empty()) view.notes.push_back(LabelGapNote(gaps));
  service.Read([&](const placement::ClusterSnapshot& snapshot) {
    view.summary = placement::Summarize(snapshot, TopologySummaryOptions(options.max_level));
    if (!options.nodes) return;
    for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
      const placement::ClusterSnapshot::Node& node = snapshot.nodes()[i];
      if (node.removed) continue;
      view.nodes.push_back(
          {.name = node.info.name,
           .domain = snapshot.NodeDomainId(static_cast<int>(i)),
           .condition = std::string(placement::NodeConditionName(node.condition)),
           .gpus = Gpus(node.info.allocatable),
           .free_gpus = Gpus(snapshot.NodeFree(node.info.name).value_or(ResourceList{}))});
    }
  });
  return view;
}

}  // namespace phalanx::cli
