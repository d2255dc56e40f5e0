#include "cli/topology_view.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "common/status.h"
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
  scheduler::LiveSnapshot live(service);
  live.Build(nodes, jobs, pods);

  TopologyView view;
  view.source =
      "the API server's nodes, bound pods and TrainingJob reservations (without --server, "
      "reservations not yet in a job's status are not seen)";
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
