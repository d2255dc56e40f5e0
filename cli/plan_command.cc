// `phalanx plan -f job.yaml`: the TrainingJob checked by the CRD's schema (sim/training_job.h),
// then a dry-run placement on a modelled cluster (a built-in scenario's, or --cluster FILE),
// through the real placement core: where the gang would land, rank by rank, or why it cannot,
// in the placement core's own words.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "common/counted_noun.h"
#include "common/resources.h"
#include "scheduler/in_process_placement_service.h"
#include "sim/cluster.h"
#include "sim/comm_model.h"
#include "sim/phalanx_policy.h"
#include "sim/scenario.h"
#include "sim/trace.h"
#include "sim/training_job.h"

namespace phalanx::cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: phalanx plan -f JOB.yaml [--cluster CLUSTER.yaml | --scenario NAME] [--queue NAME]

Checks a TrainingJob (apiVersion phalanx.dev/v1alpha1) as the API server would, by the CRD's own
schema and rules (unknown fields, types, limits, enums, patterns, CEL rules; docs/simulator.md
lists what it cannot check), then dry-runs its placement on an empty modelled cluster with
Phalanx's placement core, and explains where each rank lands or why the gang cannot be placed.
Nothing is reserved.

  -f, --file FILE   the TrainingJob manifest, or - for standard input (named <stdin> in
                    messages); in a multi-document file every TrainingJob is checked, then
                    each is planned alone on the empty cluster
  --cluster FILE    cluster spec YAML as for `phalanx simulate`
  --scenario NAME   a built-in cluster as for `phalanx simulate`: default (128 p5.48xlarge, EKS
                    3-layer topology), gb200 (144 p6e-gb200.36xlarge in NVL72 cliques), mixed
                    (64 p5.48xlarge + 64 p6-b200.48xlarge) (default: default)
  --queue NAME      a queue of the cluster (the built-in ones: team-a, team-b, team-c): the
                    ClusterTrainingQueue the job's TrainingQueue points to. Placement then
                    keeps to the node groups whose flavor that queue can give the whole gang
                    (nominal quota plus what its cohort lends), as admission would; without it
                    quota is not checked

Exit codes: 0 an answer was given (placed or not), 1 runtime failure, 2 bad input.)";

constexpr char kCommand[] = "plan";

// Every node group's topology levels, in order, then the implicit hostname.
std::vector<std::string> LevelsOf(const sim::ClusterModel& cluster) {
  std::vector<std::string> levels;
  for (const sim::NodeGroup& group : cluster.groups) {
    for (const std::string& level : group.levels) {
      if (std::find(levels.begin(), levels.end(), level) == levels.end()) {
        levels.push_back(level);
      }
    }
  }
  levels.emplace_back(sim::kHostnameLabel);
  return levels;
}

// For a job planned on a built-in cluster: the other built-in scenarios that have `level`, as a
// hint ("; built-in scenario gb200 has it: --scenario gb200"), or "".
std::string ScenariosWithLevel(const std::string& level, const std::string& current) {
  std::vector<std::string> having;
  for (const std::string& name : sim::BuiltInScenarioNames()) {
    if (name == current) continue;
    absl::StatusOr<sim::BuiltInScenario> scenario = sim::MakeBuiltInScenario(name, 0);
    if (!scenario.ok()) continue;
    absl::StatusOr<sim::ClusterModel> cluster = sim::BuildCluster(scenario->cluster);
    if (!cluster.ok()) continue;
    const std::vector<std::string> levels = LevelsOf(*cluster);
    if (std::find(levels.begin(), levels.end(), level) != levels.end()) having.push_back(name);
  }
  if (having.empty()) return "";
  return absl::StrCat("; built-in scenario ", absl::StrJoin(having, " and "),
                      having.size() == 1 ? " has" : " have", " it: --scenario ", having.front());
}

// The first topology level `job` names that no node group of `cluster` has, in the manifest's
// terms (its file, line and field), rather than the placement core's request field: that is
// the job file not matching the cluster, or a trace's short name (layer-3) in a TrainingJob.
// `scenario`: the built-in scenario `cluster` is, "" for a cluster file.
absl::Status CheckLevels(const sim::PlannedJob& job, const sim::ClusterModel& cluster,
                         const std::string& scenario) {
  const std::vector<std::string> levels = LevelsOf(cluster);
  const std::pair<const char*, const std::string*> fields[] = {
      {"spec.topology.required", &job.request.required_level},
      {"spec.topology.preferred", &job.request.preferred_level},
      {"spec.topology.groupLevel", &job.request.group_level}};
  for (const auto& [field, value] : fields) {
    if (value->empty() || std::find(levels.begin(), levels.end(), *value) != levels.end()) {
      continue;
    }
    const std::string expanded = sim::ExpandLevel(*value);
    const auto origin = job.level_origins.find(field);
    return absl::InvalidArgumentError(absl::StrCat(
        origin == job.level_origins.end() ? "" : origin->second + ": ", field,
        ": does not fit cluster ", cluster.spec.source, ": \"", *value,
        "\" is not one of its levels (", absl::StrJoin(levels, ", "), ")",
        expanded == *value ? "" : absl::StrCat("; a TrainingJob names the label key, ", expanded),
        scenario.empty() || expanded != *value ? "" : ScenariosWithLevel(*value, scenario)));
  }
  return absl::OkStatus();
}

// Appends the dry-run placement of `job` to `out`: where each rank lands, or why it cannot.
absl::Status PlanOne(const sim::PlannedJob& job, const sim::ClusterModel& cluster,
                     const placement::InProcessPlacementService& service, std::string& out) {
  const placement::GangRequest& request = job.request;
  const std::string size =
      request.elastic ? absl::StrFormat("%d-%d pods (elastic, step %d)", request.elastic->min,
                                        request.elastic->max, request.elastic->step)
                      : CountedNoun(request.count, "pod");
  absl::StrAppendFormat(&out, "TrainingJob %s: %s of {%s}\n", request.job.c_str(), size.c_str(),
              FormatResources(request.per_pod).c_str());
  absl::StrAppendFormat(&out, "cluster: %s, %lld GPUs (%s, empty)\n",
                        sim::DescribeCluster(cluster).c_str(),
                        static_cast<long long>(cluster.total_gpus), cluster.spec.source.c_str());
  absl::StrAppendFormat(&out, "topology: required %s, preferred %s",
              request.required_level.empty() ? "(none)" : request.required_level.c_str(),
              request.preferred_level.empty() ? "(none)" : request.preferred_level.c_str());
  if (request.group_size > 0) {
    absl::StrAppendFormat(&out, ", groups of %d ranks per %s", request.group_size, request.group_level.c_str());
  }
  if (request.max_pods_per_node > 0) {
    absl::StrAppendFormat(&out, ", at most %d rank per node (pod anti-affinity)",
                          request.max_pods_per_node);
  }
  absl::StrAppendFormat(&out, "\n\n");

  absl::StatusOr<placement::PlacementResult> result = service.Place(request);
  if (!result.ok()) {
    // The placement core rejects requests this cluster cannot interpret (a topology level its
    // nodes do not have): that is the job file not matching the cluster.
    return absl::Status(result.status().code(),
                        absl::StrCat(job.source, ": does not fit cluster ", cluster.spec.source,
                                     ": ", result.status().message()));
  }
  if (!result->placed) {
    const placement::Explanation& why = result->explanation;
    absl::StrAppendFormat(&out, "cannot be placed: %s\n", why.summary.c_str());
    if (why.best_domain) {
      absl::StrAppendFormat(&out, "  closest domain: %s holds %d of %d pods\n", why.best_domain->ToString().c_str(),
                  why.fit_in_best, why.wanted);
    }
    for (const auto& [reason, nodes] : why.nodes_rejected) {
      absl::StrAppendFormat(&out, "  %d nodes rejected: %s\n", nodes, reason.c_str());
    }
    return absl::OkStatus();
  }
  const placement::Placement& p = result->placement;
  absl::StrAppendFormat(&out, "placed %s inside %s\n",
                        CountedNoun(static_cast<int64_t>(p.nodes.size()), "pod").c_str(),
                        p.domain.ToString().c_str());
  std::vector<int32_t> indices;
  for (size_t rank = 0; rank < p.nodes.size(); ++rank) {
    const int32_t index = cluster.NodeIndex(p.nodes[rank]);
    indices.push_back(index);
    std::string where;
    if (index >= 0) {
      const sim::SimNode& node = cluster.nodes[index];
      for (const std::string& level : cluster.groups[node.group].levels) {
        absl::StrAppend(&where, where.empty() ? "" : " / ", node.labels.at(level));
      }
    }
    absl::StrAppendFormat(&out, "  rank %-4zu %-12s %s\n", rank, p.nodes[rank].c_str(), where.c_str());
  }
  if (request.per_pod.count(std::string(kResourceGpu)) && !indices.empty() && indices[0] >= 0) {
    const int32_t gpus = static_cast<int32_t>(request.per_pod.at(std::string(kResourceGpu)));
    absl::StrAppendFormat(&out, 
        "\nmodelled all-reduce: %.1f ms per GiB, %.2fx the ideal placement "
        "(docs/simulator.md)\n",
        1000 * sim::AllReduceSeconds(cluster, indices, gpus),
        sim::CommSlowdown(cluster, indices, gpus));
  }
  return absl::OkStatus();
}

// With --queue: keeps `request` to the node groups where `queue` can hold the whole gang's GPUs
// (ReachableGpus, as `simulate` refuses a trace job), by a node-group requirement ANDed into
// every affinity term. Returns whether some group is left; `note` says which groups the queue
// allows and why the others are not (or, none left, why).
bool KeepToQueue(const sim::ClusterModel& cluster, const sim::QueueSpec& queue,
                 placement::GangRequest& request, std::string& note) {
  const auto gpu = request.per_pod.find(std::string(kResourceGpu));
  const int64_t per_pod = gpu == request.per_pod.end() ? 0 : gpu->second;
  const int64_t pods = request.elastic ? request.elastic->min : request.count;
  std::vector<std::string> allowed, refused;
  for (const sim::NodeGroup& group : cluster.groups) {
    const int64_t reachable = sim::ReachableGpus(cluster.spec, queue, group.spec.name);
    if (per_pod == 0 || reachable >= pods * per_pod) {
      allowed.push_back(group.spec.name);
    } else {
      refused.push_back(absl::StrCat(group.spec.name, " (at most ", reachable, " of the ",
                                     pods * per_pod, " GPUs it needs)"));
    }
  }
  if (allowed.empty()) {
    note = absl::StrCat("ClusterTrainingQueue ", queue.name, " can never admit it: in no node ",
                        "group can its nominal quota plus what its cohort lends hold the gang: ",
                        absl::StrJoin(refused, ", "));
    return false;
  }
  note = absl::StrCat("quota: ClusterTrainingQueue ", queue.name, " can hold the gang in node ",
                      allowed.size() == 1 ? "group " : "groups ", absl::StrJoin(allowed, ", "),
                      refused.empty() ? ""
                                      : absl::StrCat("; not in ", absl::StrJoin(refused, ", ")),
                      "\n");
  const placement::NodeSelectorRequirement in_groups{std::string(sim::kNodeGroupLabel), "In",
                                                     allowed};
  if (request.node_affinity.empty()) request.node_affinity.emplace_back();
  for (placement::NodeSelectorTerm& term : request.node_affinity) {
    term.match_expressions.push_back(in_groups);
  }
  return true;
}

int RunPlan(const std::vector<std::string>& args) {
  std::string job_file, cluster_file, queue_name, scenario = "default";
  FlagSet flags;
  flags.String({"-f", "--file"}, &job_file)
      .String({"--cluster"}, &cluster_file)
      .String({"--scenario"}, &scenario)
      .String({"--queue"}, &queue_name);
  if (absl::Status parsed = flags.Parse(args); !parsed.ok()) return BadInput(kCommand, parsed);
  if (job_file.empty()) return BadInput(kCommand, "-f JOB.yaml is required");
  if (absl::Status chosen =
          sim::CheckScenarioFlag(scenario, flags.Seen("--scenario"), !cluster_file.empty());
      !chosen.ok()) {
    return BadInput(kCommand, chosen);
  }
  absl::StatusOr<sim::BuiltInScenario> built_in = sim::MakeBuiltInScenario(scenario, 0);
  if (!built_in.ok()) return Fail(kCommand, built_in.status());
  if (!cluster_file.empty()) scenario.clear();
  absl::StatusOr<std::vector<sim::PlannedJob>> jobs = sim::LoadTrainingJobs(job_file);
  if (!jobs.ok()) return Fail(kCommand, jobs.status());
  absl::StatusOr<sim::ClusterSpec> spec = cluster_file.empty()
                                              ? absl::StatusOr<sim::ClusterSpec>(built_in->cluster)
                                              : sim::LoadClusterSpec(cluster_file);
  if (!spec.ok()) return Fail(kCommand, spec.status());
  if (scenario != "default" && cluster_file.empty()) {
    spec->source = absl::StrCat("built-in scenario ", scenario);
  }
  absl::StatusOr<sim::ClusterModel> cluster = sim::BuildCluster(*spec);
  if (!cluster.ok()) return Fail(kCommand, cluster.status());
  if (absl::Status queues = sim::CheckQueues(*cluster); !queues.ok()) {
    return Fail(kCommand, queues);
  }
  for (const sim::PlannedJob& job : *jobs) {
    if (absl::Status levels = CheckLevels(job, *cluster, scenario); !levels.ok()) {
      return Fail(kCommand, levels);
    }
  }
  const sim::QueueSpec* queue = nullptr;
  if (!queue_name.empty()) {
    std::vector<std::string> names;
    for (const sim::QueueSpec& q : cluster->spec.queues) {
      names.push_back(q.name);
      if (q.name == queue_name) queue = &q;
    }
    if (queue == nullptr) {
      return BadInput(kCommand, absl::StrCat("--queue: cluster ", cluster->spec.source,
                                             " has no queue \"", queue_name, "\" (it has ",
                                             absl::StrJoin(names, ", "), ")"));
    }
  }
  absl::StatusOr<placement::ClusterSnapshot> snapshot = sim::BuildSnapshot(*cluster);
  if (!snapshot.ok()) return Fail(kCommand, snapshot.status());
  // Place is a dry run (nothing is reserved): every job is planned on the same empty cluster.
  placement::InProcessPlacementService service(*std::move(snapshot));
  // Printed at the end through PrintOut: it carries names and labels from the user's files.
  std::string out;
  for (size_t i = 0; i < jobs->size(); ++i) {
    if (i > 0) out += "\n";
    sim::PlannedJob job = (*jobs)[i];
    std::string note;
    if (queue != nullptr && !KeepToQueue(*cluster, *queue, job.request, note)) {
      absl::StrAppend(&out, "TrainingJob ", job.request.job, ": cannot be admitted: ", note, "\n");
      continue;
    }
    absl::Status planned = PlanOne(job, *cluster, service, out);
    out += note;
    if (!planned.ok()) {
      PrintOut(out);
      return Fail(kCommand, planned);
    }
  }
  PrintOut(out);
  return kExitOk;
}

PHALANX_COMMAND("plan", "dry-run the placement of a TrainingJob and explain it", kUsage, RunPlan);

}  // namespace
}  // namespace phalanx::cli
