#include "sim/cluster.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/object_names.h"
#include "common/status.h"
#include "scheduler/topology.h"
#include "sim/yaml_input.h"

namespace phalanx::sim {

std::vector<std::string> PresetLevels(std::string_view preset) {
  absl::StatusOr<placement::Topology> topology = placement::Topology::Preset(preset);
  return topology.ok() ? topology->levels() : std::vector<std::string>{};
}

namespace {

std::vector<int32_t> DefaultFanout(std::string_view preset) {
  if (preset == "eks-4layer") return {2, 2, 4, 16};
  if (preset == "gb200") return {2, 2, 4, 18};
  return {2, 4, 16};
}

ResourceList Gpus(int64_t n) { return ResourceList{{std::string(kResourceGpu), n}}; }

}  // namespace

ClusterSpec DefaultClusterSpec(int32_t nodes) {
  ClusterSpec spec;
  spec.name = "default";
  spec.groups.push_back(NodeGroupSpec{"p5", "p5.48xlarge", nodes, "eks", DefaultFanout("eks")});
  const int64_t gpus = int64_t{nodes} * 8;
  // Nominal shares 40/35/25 rounded to whole nodes; the remainder goes to the last team so the
  // quotas add up to the cluster exactly.
  const int64_t a = gpus * 40 / 100 / 8 * 8;
  const int64_t b = gpus * 35 / 100 / 8 * 8;
  const int64_t shares[3] = {a, b, gpus - a - b};
  const char* names[3] = {"team-a", "team-b", "team-c"};
  for (int i = 0; i < 3; ++i) {
    QueueSpec queue;
    queue.name = names[i];
    queue.cohort = "research";
    // The built-in scenario exercises preemption; the CRD's defaults would switch it off.
    queue.within_cluster_queue = "LowerPriority";
    queue.reclaim_within_cohort = "Any";
    queue.flavors.push_back(FlavorQuota{"p5", Gpus(shares[i]), std::nullopt, std::nullopt});
    spec.queues.push_back(std::move(queue));
  }
  return spec;
}

namespace {

// The resources a simulated node has (BuildCluster's allocatable). Quotas count only GPUs
// (trace jobs request nothing else); a quota on any of the others is allowed and has no effect,
// one on a name no node has (`nvidia.com/gpus`) can only be a typo.
const std::vector<std::string>& NodeResources() {
  static const auto* names = new std::vector<std::string>{
      std::string(kResourceCpu), std::string(kResourceMemory), std::string(kResourceGpu),
      std::string(kResourcePods), std::string(kResourceEfa)};
  return *names;
}

absl::StatusOr<ResourceList> ParseQuota(const YamlReader& in, const YAML::Node& node,
                                        const std::string& field) {
  if (!node.IsMap()) return in.Error(node, field, "want a map of resource name to quantity");
  std::map<std::string, std::string> text;
  for (const auto& entry : node) {
    const std::string name = entry.first.as<std::string>("");
    const std::vector<std::string>& known = NodeResources();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return in.Error(entry.first, absl::StrCat(field, ".", name),
                      absl::StrCat("unknown resource \"", name, "\": simulated nodes have ",
                                   absl::StrJoin(known, ", "), " (quotas count ",
                                   std::string(kResourceGpu), " only)"));
    }
    ASSIGN_OR_RETURN(std::string value, in.Scalar(entry.second, absl::StrCat(field, ".", name)));
    text[name] = value;
  }
  absl::StatusOr<ResourceList> list = ParseResourceList(text, field);
  if (!list.ok()) return in.Error(node, field, std::string(list.status().message()));
  return list;
}

absl::StatusOr<FlavorQuota> ParseFlavorQuota(const YamlReader& in, const YAML::Node& node,
                                             const std::string& field, std::string flavor) {
  FlavorQuota quota;
  quota.flavor = std::move(flavor);
  const YAML::Node nominal = node["nominalQuota"];
  if (!nominal.IsDefined())
    return in.Error(node, field + ".nominalQuota", "required field is missing");
  ASSIGN_OR_RETURN(quota.nominal, ParseQuota(in, nominal, field + ".nominalQuota"));
  if (node["borrowingLimit"].IsDefined()) {
    ASSIGN_OR_RETURN(quota.borrowing_limit,
                     ParseQuota(in, node["borrowingLimit"], field + ".borrowingLimit"));
  }
  if (node["lendingLimit"].IsDefined()) {
    ASSIGN_OR_RETURN(quota.lending_limit,
                     ParseQuota(in, node["lendingLimit"], field + ".lendingLimit"));
  }
  return quota;
}

absl::Status CheckOneOf(const YamlReader& in, const YAML::Node& node, const std::string& field,
                        const std::string& value, const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (a == value) return absl::OkStatus();
  }
  return in.Error(node, field,
                  absl::StrCat("\"", value, "\" is not one of ", absl::StrJoin(allowed, ", ")));
}

absl::StatusOr<NodeGroupSpec> ParseGroup(const YamlReader& in, const YAML::Node& node,
                                         const std::string& field) {
  RETURN_IF_ERROR(in.OnlyKeys(node, field, {"name", "instanceType", "count", "topology"}));
  NodeGroupSpec group;
  ASSIGN_OR_RETURN(group.instance_type, in.String(node, "instanceType", field + ".instanceType"));
  const InstanceType* type = FindInstanceType(group.instance_type);
  if (type == nullptr) {
    return in.Error(node["instanceType"], field + ".instanceType",
                    absl::StrCat("unknown instance type \"", group.instance_type,
                                 "\" (known: ", InstanceTypeNames(), ")"));
  }
  ASSIGN_OR_RETURN(group.name, in.String(node, "name", field + ".name", group.instance_type));
  ASSIGN_OR_RETURN(int64_t count, in.Int(node, "count", field + ".count"));
  if (count <= 0 || count > 1'000'000) {
    return in.Error(node["count"], field + ".count", "must be between 1 and 1000000");
  }
  group.count = static_cast<int32_t>(count);
  group.preset = type->default_preset;
  ASSIGN_OR_RETURN(YAML::Node topology, in.Map(node, "topology", field + ".topology"));
  if (topology.IsDefined()) {
    RETURN_IF_ERROR(in.OnlyKeys(topology, field + ".topology", {"preset", "fanout"}));
    ASSIGN_OR_RETURN(group.preset,
                     in.String(topology, "preset", field + ".topology.preset", group.preset));
    if (PresetLevels(group.preset).empty()) {
      return in.Error(
          topology["preset"], field + ".topology.preset",
          absl::StrCat("unknown preset \"", group.preset, "\" (known: eks, eks-4layer, gb200)"));
    }
  }
  group.fanout = DefaultFanout(group.preset);
  if (topology.IsDefined() && topology["fanout"].IsDefined()) {
    const std::string f = field + ".topology.fanout";
    ASSIGN_OR_RETURN(YAML::Node fanout, in.Sequence(topology, "fanout", f));
    const size_t levels = PresetLevels(group.preset).size();
    if (fanout.size() != levels) {
      return in.Error(
          fanout, f,
          absl::StrCat("preset ", group.preset, " has ", levels, " levels, so fanout needs ",
                       levels, " entries, got ", fanout.size()));
    }
    group.fanout.clear();
    for (size_t i = 0; i < fanout.size(); ++i) {
      const std::string fi = absl::StrCat(f, "[", i, "]");
      ASSIGN_OR_RETURN(int64_t v, in.IntValue(fanout[i], fi));
      if (v <= 0 || v > 100000) return in.Error(fanout[i], fi, "must be between 1 and 100000");
      group.fanout.push_back(static_cast<int32_t>(v));
    }
  }
  return group;
}

// The ClusterTrainingQueue CRD's message for backfillQuota in a cohort (ClusterTest checks the
// two agree).
constexpr std::string_view kBackfillQuotaCohortMessage =
    "spec.backfillQuota may only be HoldForHead when spec.cohort is not set";

absl::StatusOr<QueueSpec> ParseQueue(const YamlReader& in, const YAML::Node& node,
                                     const std::string& field,
                                     const std::vector<NodeGroupSpec>& groups) {
  RETURN_IF_ERROR(
      in.OnlyKeys(node, field,
                  {"name", "cohort", "nominalQuota", "borrowingLimit", "lendingLimit", "flavors",
                   "queueingStrategy", "preemption", "fairSharing", "localityWaitSeconds",
                   "backfillQuota", "stopPolicy", "namespaceSelector"}));
  QueueSpec queue;
  ASSIGN_OR_RETURN(queue.name, in.String(node, "name", field + ".name"));
  if (const std::string why = DnsSubdomainProblem(queue.name); !why.empty()) {
    return in.Error(node["name"], field + ".name",
                    absl::StrCat(ShownName(queue.name), " ", why,
                                 ": the queue is a ClusterTrainingQueue of that name"));
  }
  ASSIGN_OR_RETURN(queue.cohort, in.String(node, "cohort", field + ".cohort", ""));
  ASSIGN_OR_RETURN(
      queue.queueing_strategy,
      in.String(node, "queueingStrategy", field + ".queueingStrategy", queue.queueing_strategy));
  RETURN_IF_ERROR(CheckOneOf(in, node["queueingStrategy"], field + ".queueingStrategy",
                             queue.queueing_strategy, {"BestEffortFIFO", "StrictFIFO"}));
  if (node["nominalQuota"].IsDefined() == node["flavors"].IsDefined()) {
    return in.Error(node, field, "set exactly one of nominalQuota (one flavor) or flavors");
  }
  if (node["nominalQuota"].IsDefined()) {
    ASSIGN_OR_RETURN(FlavorQuota quota, ParseFlavorQuota(in, node, field, groups[0].name));
    queue.flavors.push_back(std::move(quota));
  } else {
    ASSIGN_OR_RETURN(YAML::Node flavors, in.Sequence(node, "flavors", field + ".flavors"));
    for (size_t i = 0; i < flavors.size(); ++i) {
      const std::string f = absl::StrCat(field, ".flavors[", i, "]");
      RETURN_IF_ERROR(
          in.OnlyKeys(flavors[i], f, {"name", "nominalQuota", "borrowingLimit", "lendingLimit"}));
      ASSIGN_OR_RETURN(std::string name, in.String(flavors[i], "name", f + ".name"));
      const bool known = std::any_of(groups.begin(), groups.end(),
                                     [&](const NodeGroupSpec& g) { return g.name == name; });
      if (!known) {
        return in.Error(flavors[i]["name"], f + ".name",
                        absl::StrCat("no node group named \"", name, "\""));
      }
      ASSIGN_OR_RETURN(FlavorQuota quota, ParseFlavorQuota(in, flavors[i], f, name));
      queue.flavors.push_back(std::move(quota));
    }
  }
  ASSIGN_OR_RETURN(YAML::Node preemption, in.Map(node, "preemption", field + ".preemption"));
  if (preemption.IsDefined()) {
    const std::string f = field + ".preemption";
    RETURN_IF_ERROR(in.OnlyKeys(preemption, f, {"withinClusterQueue", "reclaimWithinCohort",
                                                "borrowWithinCohort"}));
    ASSIGN_OR_RETURN(queue.within_cluster_queue,
                     in.String(preemption, "withinClusterQueue", f + ".withinClusterQueue",
                               queue.within_cluster_queue));
    RETURN_IF_ERROR(CheckOneOf(in, preemption["withinClusterQueue"], f + ".withinClusterQueue",
                               queue.within_cluster_queue,
                               {"Never", "LowerPriority", "LowerOrNewerEqualPriority"}));
    ASSIGN_OR_RETURN(queue.reclaim_within_cohort,
                     in.String(preemption, "reclaimWithinCohort", f + ".reclaimWithinCohort",
                               queue.reclaim_within_cohort));
    RETURN_IF_ERROR(CheckOneOf(in, preemption["reclaimWithinCohort"], f + ".reclaimWithinCohort",
                               queue.reclaim_within_cohort, {"Never", "LowerPriority", "Any"}));
    ASSIGN_OR_RETURN(YAML::Node borrow,
                     in.Map(preemption, "borrowWithinCohort", f + ".borrowWithinCohort"));
    if (borrow.IsDefined()) {
      const std::string bf = f + ".borrowWithinCohort";
      RETURN_IF_ERROR(in.OnlyKeys(borrow, bf, {"policy", "maxPriorityThreshold"}));
      ASSIGN_OR_RETURN(queue.borrow_within_cohort,
                       in.String(borrow, "policy", bf + ".policy", queue.borrow_within_cohort));
      RETURN_IF_ERROR(CheckOneOf(in, borrow["policy"], bf + ".policy", queue.borrow_within_cohort,
                                 {"Never", "LowerPriority"}));
      if (borrow["maxPriorityThreshold"].IsDefined()) {
        const std::string tf = bf + ".maxPriorityThreshold";
        ASSIGN_OR_RETURN(int64_t threshold, in.Int(borrow, "maxPriorityThreshold", tf));
        if (threshold < std::numeric_limits<int32_t>::min() ||
            threshold > std::numeric_limits<int32_t>::max()) {
          return in.Error(borrow["maxPriorityThreshold"], tf, "not a 32-bit integer");
        }
        queue.borrow_max_priority_threshold = static_cast<int32_t>(threshold);
      }
      // The CRD's CEL rule on spec.preemption, with its message.
      if (queue.reclaim_within_cohort == "Never" && queue.borrow_within_cohort != "Never") {
        return in.Error(borrow, bf + ".policy",
                        "spec.preemption.borrowWithinCohort.policy must be Never when "
                        "spec.preemption.reclaimWithinCohort is Never");
      }
    }
  }
  // Accepted so a queue copied from a cluster loads, but not simulated: each simulated queue has
  // its own namespace, so any selector admits it; a held queue would admit nothing at all.
  ASSIGN_OR_RETURN(YAML::Node selector,
                   in.Map(node, "namespaceSelector", field + ".namespaceSelector"));
  (void)selector;
  ASSIGN_OR_RETURN(const std::string stop,
                   in.String(node, "stopPolicy", field + ".stopPolicy", "None"));
  RETURN_IF_ERROR(CheckOneOf(in, node["stopPolicy"], field + ".stopPolicy", stop,
                             {"None", "Hold", "HoldAndDrain"}));
  if (stop != "None") {
    return in.Error(node["stopPolicy"], field + ".stopPolicy",
                    absl::StrCat(stop, " is not simulated (a held queue admits nothing); use None "
                                       "or leave it out"));
  }
  if (node["localityWaitSeconds"].IsDefined()) {
    ASSIGN_OR_RETURN(queue.locality_wait_s,
                     in.Int(node, "localityWaitSeconds", field + ".localityWaitSeconds"));
    if (*queue.locality_wait_s < 0) {
      return in.Error(node["localityWaitSeconds"], field + ".localityWaitSeconds",
                      "must be >= 0");
    }
  }
  ASSIGN_OR_RETURN(queue.backfill_quota,
                   in.String(node, "backfillQuota", field + ".backfillQuota", "Never"));
  RETURN_IF_ERROR(CheckOneOf(in, node["backfillQuota"], field + ".backfillQuota",
                             queue.backfill_quota, {"Never", "HoldForHead"}));
  // The CRD's CEL rule, with its message.
  if (queue.backfill_quota != "Never" && !queue.cohort.empty()) {
    return in.Error(node["backfillQuota"], field + ".backfillQuota",
                    std::string(kBackfillQuotaCohortMessage));
  }
  ASSIGN_OR_RETURN(YAML::Node fair, in.Map(node, "fairSharing", field + ".fairSharing"));
  if (fair.IsDefined()) {
    RETURN_IF_ERROR(in.OnlyKeys(fair, field + ".fairSharing", {"weight"}));
    ASSIGN_OR_RETURN(queue.fair_sharing_weight,
                     in.Double(fair, "weight", field + ".fairSharing.weight", 1.0));
  }
  return queue;
}

}  // namespace

absl::StatusOr<ClusterSpec> ParseClusterSpec(const std::string& text, const std::string& source) {
  ASSIGN_OR_RETURN(YAML::Node root, LoadYamlText(text, source));
  YamlReader in(source);
  if (!root.IsMap()) return in.Error(root, "(document)", "want a map with nodeGroups and queues");
  RETURN_IF_ERROR(in.OnlyKeys(
      root, "",
      {"apiVersion", "kind", "name", "nodeGroups", "queues", "failures", "cycleSeconds"}));
  ClusterSpec spec;
  spec.source = source;
  ASSIGN_OR_RETURN(spec.name, in.String(root, "name", "name", "cluster"));
  ASSIGN_OR_RETURN(spec.cycle_seconds, in.Double(root, "cycleSeconds", "cycleSeconds", 10.0));
  // Kueue and kube-scheduler cycle in well under a second; an hour is already far from any real
  // cluster, and a cycle past the run's safety stop would start nothing at all.
  if (!(spec.cycle_seconds > 0 && spec.cycle_seconds <= 3600)) {
    return in.Error(root["cycleSeconds"], "cycleSeconds", "must be > 0 and at most 3600");
  }
  ASSIGN_OR_RETURN(YAML::Node groups, in.Sequence(root, "nodeGroups", "nodeGroups", true));
  if (groups.size() == 0) return in.Error(groups, "nodeGroups", "needs at least one node group");
  for (size_t i = 0; i < groups.size(); ++i) {
    ASSIGN_OR_RETURN(NodeGroupSpec group,
                     ParseGroup(in, groups[i], absl::StrCat("nodeGroups[", i, "]")));
    for (size_t j = 0; j < spec.groups.size(); ++j) {
      const NodeGroupSpec& other = spec.groups[j];
      if (other.name == group.name) {
        return in.Error(groups[i], absl::StrCat("nodeGroups[", i, "].name"),
                        absl::StrCat("duplicate node group \"", group.name, "\""));
      }
      // One Topology for the whole cluster: the shorter preset's levels must begin the longer's
      // (eks begins eks-4layer and gb200; those two differ at their fourth level).
      const std::vector<std::string> mine = PresetLevels(group.preset);
      const std::vector<std::string> theirs = PresetLevels(other.preset);
      const size_t common = std::min(mine.size(), theirs.size());
      if (!std::equal(mine.begin(), mine.begin() + static_cast<long>(common), theirs.begin())) {
        return in.Error(groups[i], absl::StrCat("nodeGroups[", i, "].topology.preset"),
                        absl::StrCat("preset ", group.preset, " cannot share one Topology with ",
                                     "preset ", other.preset, " of nodeGroups[", j, "] (",
                                     other.name, "): levels ", absl::StrJoin(mine, ", "),
                                     " against ", absl::StrJoin(theirs, ", ")));
      }
    }
    spec.groups.push_back(std::move(group));
  }
  ASSIGN_OR_RETURN(YAML::Node queues, in.Sequence(root, "queues", "queues", true));
  if (queues.size() == 0) return in.Error(queues, "queues", "needs at least one queue");
  for (size_t i = 0; i < queues.size(); ++i) {
    const std::string field = absl::StrCat("queues[", i, "]");
    ASSIGN_OR_RETURN(QueueSpec queue, ParseQueue(in, queues[i], field, spec.groups));
    for (const QueueSpec& other : spec.queues) {
      if (other.name == queue.name) {
        return in.Error(queues[i], field + ".name",
                        absl::StrCat("duplicate queue \"", queue.name, "\""));
      }
    }
    spec.queues.push_back(std::move(queue));
  }
  ASSIGN_OR_RETURN(YAML::Node failures, in.Map(root, "failures", "failures"));
  if (failures.IsDefined()) {
    RETURN_IF_ERROR(in.OnlyKeys(failures, "failures", {"nodeMtbfHours", "repairHours"}));
    ASSIGN_OR_RETURN(spec.failures.node_mtbf_hours,
                     in.Double(failures, "nodeMtbfHours", "failures.nodeMtbfHours", 0.0));
    ASSIGN_OR_RETURN(spec.failures.repair_hours,
                     in.Double(failures, "repairHours", "failures.repairHours", 4.0));
    if (spec.failures.node_mtbf_hours < 0 || spec.failures.repair_hours <= 0) {
      return in.Error(failures, "failures", "nodeMtbfHours must be >= 0 and repairHours > 0");
    }
  }
  return spec;
}

absl::StatusOr<ClusterSpec> LoadClusterSpec(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseClusterSpec(text, path);
}

int32_t ClusterModel::NodeIndex(std::string_view name) const {
  auto it = node_index.find(std::string(name));
  return it == node_index.end() ? -1 : it->second;
}

int32_t ClusterModel::LevelsCrossed(int32_t a, int32_t b) const {
  const SimNode& x = nodes[a];
  const SimNode& y = nodes[b];
  const int32_t depth = static_cast<int32_t>(x.domains.size());
  if (x.group != y.group) return depth;
  int32_t common = 0;
  while (common < depth && x.domains[common] == y.domains[common]) ++common;
  return depth - common;
}

namespace {

int64_t GpusOf(const ResourceList& list) {
  auto it = list.find(kResourceGpu);
  return it == list.end() ? 0 : it->second;
}

const FlavorQuota* FindFlavor(const QueueSpec& queue, std::string_view flavor) {
  for (const FlavorQuota& f : queue.flavors) {
    if (f.flavor == flavor) return &f;
  }
  return nullptr;
}

}  // namespace

int64_t ReachableGpus(const ClusterSpec& spec, const QueueSpec& queue, std::string_view flavor) {
  const FlavorQuota* own = FindFlavor(queue, flavor);
  if (own == nullptr) return 0;
  int64_t lendable = 0;
  if (!queue.cohort.empty()) {
    for (const QueueSpec& other : spec.queues) {
      if (other.name == queue.name || other.cohort != queue.cohort) continue;
      const FlavorQuota* theirs = FindFlavor(other, flavor);
      if (theirs == nullptr) continue;
      lendable += theirs->lending_limit ? std::min(GpusOf(*theirs->lending_limit),
                                                   GpusOf(theirs->nominal))
                                        : GpusOf(theirs->nominal);
    }
  }
  const int64_t borrowable =
      own->borrowing_limit ? std::min(lendable, GpusOf(*own->borrowing_limit)) : lendable;
  return GpusOf(own->nominal) + borrowable;
}

int32_t ClusterModel::LevelIndex(int32_t group, std::string_view level) const {
  const std::vector<std::string>& levels = groups[group].levels;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i] == level) return static_cast<int32_t>(i);
  }
  return -1;
}

absl::StatusOr<ClusterModel> BuildCluster(const ClusterSpec& spec) {
  ClusterModel cluster;
  cluster.spec = spec;
  for (size_t g = 0; g < spec.groups.size(); ++g) {
    const NodeGroupSpec& gs = spec.groups[g];
    NodeGroup group;
    group.spec = gs;
    group.type = FindInstanceType(gs.instance_type);
    group.levels = PresetLevels(gs.preset);
    if (group.type == nullptr || group.levels.empty() || gs.fanout.size() != group.levels.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(spec.source, ": node group ", gs.name, ": bad instance type or topology"));
    }
    const int32_t depth = static_cast<int32_t>(group.levels.size());
    // nodes_per[l] = nodes under one domain of level l.
    std::vector<int64_t> nodes_per(depth, 1);
    for (int32_t l = depth - 1; l >= 0; --l) {
      nodes_per[l] = gs.fanout[l] * (l + 1 < depth ? nodes_per[l + 1] : 1);
    }
    group.level_domains.resize(depth);
    group.begin = static_cast<int32_t>(cluster.nodes.size());
    ResourceList allocatable = {
        {std::string(kResourceGpu), group.type->gpus},
        {std::string(kResourceCpu), int64_t{group.type->vcpus} * 1000},
        {std::string(kResourceMemory), group.type->memory_gib << 30},
        {std::string(kResourcePods), kMaxPodsPerNode},
    };
    if (group.type->efa_devices > 0)
      allocatable[std::string(kResourceEfa)] = group.type->efa_devices;
    std::vector<int32_t> open(depth, -1);  // the domain currently being filled at each level
    for (int32_t i = 0; i < gs.count; ++i) {
      const int32_t index = static_cast<int32_t>(cluster.nodes.size());
      SimNode node;
      node.name = absl::StrFormat("%s-%04d", gs.name, i);
      node.group = static_cast<int32_t>(g);
      node.type = group.type;
      node.allocatable = allocatable;
      node.labels[std::string(kHostnameLabel)] = node.name;
      node.labels[std::string(kInstanceTypeLabel)] = gs.instance_type;
      node.labels[std::string(kNodeGroupLabel)] = gs.name;
      for (int32_t l = 0; l < depth; ++l) {
        if (i % nodes_per[l] == 0) {
          Domain domain;
          domain.group = static_cast<int32_t>(g);
          domain.level = l;
          domain.parent = l == 0 ? -1 : open[l - 1];
          domain.begin = index;
          domain.end = index;
          const int64_t ordinal = group.level_domains[l].size();
          const bool clique = group.levels[l] == "nvidia.com/gpu.clique";
          domain.value = clique ? absl::StrFormat("%s-clique-%d", gs.name, ordinal)
                                : absl::StrFormat("nn-%s-l%d-%d", gs.name, l + 1, ordinal);
          open[l] = static_cast<int32_t>(cluster.domains.size());
          group.level_domains[l].push_back(open[l]);
          if (domain.parent >= 0) cluster.domains[domain.parent].children.push_back(open[l]);
          cluster.domains.push_back(std::move(domain));
        }
        cluster.domains[open[l]].end = index + 1;
        node.domains.push_back(open[l]);
        node.labels[group.levels[l]] = cluster.domains[open[l]].value;
      }
      cluster.total_gpus += group.type->gpus;
      cluster.node_index[node.name] = index;
      cluster.nodes.push_back(std::move(node));
    }
    group.end = static_cast<int32_t>(cluster.nodes.size());
    cluster.groups.push_back(std::move(group));
  }
  return cluster;
}

std::string DescribeCluster(const ClusterModel& cluster) {
  std::vector<std::string> parts;
  for (const NodeGroup& group : cluster.groups) {
    parts.push_back(absl::StrCat(group.spec.count, " x ", group.spec.instance_type, " (",
                                 group.spec.preset, " ", absl::StrJoin(group.spec.fanout, "/"),
                                 ")"));
  }
  return absl::StrJoin(parts, " + ");
}

}  // namespace phalanx::sim
