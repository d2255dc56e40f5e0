#include "sim/trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/object_names.h"
#include "common/status.h"
#include "sim/csv.h"
#include "sim/random.h"
#include "sim/yaml_input.h"

namespace phalanx::sim {

std::string ExpandLevel(const std::string& level) {
  if (absl::StartsWith(level, "layer-")) {
    return absl::StrCat("topology.k8s.aws/network-node-", level);
  }
  if (level == "clique") return "nvidia.com/gpu.clique";
  if (level == "hostname" || level == "node") return std::string(kHostnameLabel);
  return level;
}

JobShape TraceJobShape(const TraceJob& job) {
  JobShape shape;
  shape.replicas = job.pods;
  if (job.elastic_min != 0 || job.elastic_max != 0) {
    shape.elastic = placement::ElasticRange{job.elastic_min, job.elastic_max, job.elastic_step};
  }
  shape.required_level = job.required_level;
  shape.preferred_level = job.preferred_level;
  if (job.group_size != 0) shape.group_size = job.group_size;
  shape.group_level = job.group_level;
  return shape;
}

namespace {

void SortBySubmit(std::vector<TraceJob>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
}

// Field checks shared by both formats; `field` prefixes messages.
absl::Status CheckJob(const TraceJob& job, const std::string& where) {
  auto bad = [&](const std::string& field, const std::string& message) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", field, ": ", message));
  };
  if (job.queue.empty()) return bad("queue", "required field is missing");
  // Each job is a Workload (a TrainingJob) named after it, submitted to a TrainingQueue and a
  // ClusterTrainingQueue of its queue's name: Kubernetes names both.
  for (const auto& [field, name, what] :
       {std::tuple{"name", &job.name, "the job is a Workload of that name"},
        std::tuple{"queue", &job.queue, "the queue is a ClusterTrainingQueue of that name"}}) {
    const std::string why = DnsSubdomainProblem(*name);
    if (!why.empty()) return bad(field, absl::StrCat(ShownName(*name), " ", why, ": ", what));
  }
  // Seconds from any origin, Unix time included (1.7e9 today), up to the year 5138; a run
  // lasts at most a year past the last submission (the safety stop), so a longer duration could
  // never finish.
  if (!(job.submit_s >= 0 && job.submit_s <= kMaxSubmitSeconds)) {
    return bad("submit", "must be 0 to 100000000000 seconds");
  }
  if (job.pods <= 0) return bad("pods", "must be >= 1");
  if (job.gpus_per_pod < 0) return bad("gpusPerPod", "must be >= 0");
  if (!(job.duration_s > 0 && job.duration_s <= kSafetyStopSeconds)) {
    return bad("duration", "must be > 0 and at most 31536000 seconds (365 days)");
  }
  // The TrainingJob's own rules (sim/job_shape.h), then the trace's: the duration is measured
  // at `pods`, which an elastic job's maximum must therefore be.
  const absl::Status shape = ValidateJobShape(TraceJobShape(job), kTraceJobFields);
  if (!shape.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", shape.message()));
  if (job.elastic() && job.pods != job.elastic_max) return bad("elastic.max", "must equal pods");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<TraceJob>> ParseYamlTrace(const std::string& text,
                                                     const std::string& source) {
  ASSIGN_OR_RETURN(YAML::Node root, LoadYamlText(text, source));
  YamlReader in(source);
  if (!root.IsMap()) return in.Error(root, "(document)", "want a map with a jobs list");
  RETURN_IF_ERROR(in.OnlyKeys(root, "", {"jobs"}));
  ASSIGN_OR_RETURN(YAML::Node list, in.Sequence(root, "jobs", "jobs", true));
  std::vector<TraceJob> jobs;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node node = list[i];
    const std::string f = absl::StrCat("jobs[", i, "]");
    RETURN_IF_ERROR(in.OnlyKeys(node, f,
                                {"name", "submit", "queue", "priority", "pods", "gpusPerPod",
                                 "duration", "elastic", "topology", "nodeGroup"}));
    TraceJob job;
    job.origin = absl::StrCat(source, ":", node.Mark().line + 1);
    ASSIGN_OR_RETURN(job.name, in.String(node, "name", f + ".name", absl::StrCat("job-", i)));
    ASSIGN_OR_RETURN(job.submit_s, in.Double(node, "submit", f + ".submit", 0.0));
    ASSIGN_OR_RETURN(job.queue, in.String(node, "queue", f + ".queue"));
    ASSIGN_OR_RETURN(int64_t priority, in.Int(node, "priority", f + ".priority", 0));
    ASSIGN_OR_RETURN(int64_t pods, in.Int(node, "pods", f + ".pods", 1));
    ASSIGN_OR_RETURN(int64_t gpus, in.Int(node, "gpusPerPod", f + ".gpusPerPod", 8));
    job.gpus_per_pod_from_node = !node["gpusPerPod"].IsDefined() || node["gpusPerPod"].IsNull();
    ASSIGN_OR_RETURN(job.duration_s, in.Double(node, "duration", f + ".duration"));
    job.priority = static_cast<int32_t>(priority);
    job.pods = static_cast<int32_t>(pods);
    job.gpus_per_pod = static_cast<int32_t>(gpus);
    ASSIGN_OR_RETURN(YAML::Node elastic, in.Map(node, "elastic", f + ".elastic"));
    if (elastic.IsDefined()) {
      RETURN_IF_ERROR(in.OnlyKeys(elastic, f + ".elastic", {"min", "max", "step"}));
      ASSIGN_OR_RETURN(int64_t min, in.Int(elastic, "min", f + ".elastic.min"));
      ASSIGN_OR_RETURN(int64_t max, in.Int(elastic, "max", f + ".elastic.max", pods));
      job.elastic_min = static_cast<int32_t>(min);
      job.elastic_max = static_cast<int32_t>(max);
      ASSIGN_OR_RETURN(int64_t step, in.Int(elastic, "step", f + ".elastic.step", 1));
      job.elastic_step = static_cast<int32_t>(step);
    }
    ASSIGN_OR_RETURN(YAML::Node topology, in.Map(node, "topology", f + ".topology"));
    if (topology.IsDefined()) {
      const std::string t = f + ".topology";
      RETURN_IF_ERROR(
          in.OnlyKeys(topology, t, {"required", "preferred", "groupSize", "groupLevel"}));
      ASSIGN_OR_RETURN(std::string required, in.String(topology, "required", t + ".required", ""));
      ASSIGN_OR_RETURN(std::string preferred,
                       in.String(topology, "preferred", t + ".preferred", ""));
      ASSIGN_OR_RETURN(int64_t group_size, in.Int(topology, "groupSize", t + ".groupSize", 0));
      ASSIGN_OR_RETURN(std::string group_level,
                       in.String(topology, "groupLevel", t + ".groupLevel", ""));
      job.required_level = ExpandLevel(required);
      job.preferred_level = ExpandLevel(preferred);
      job.group_size = static_cast<int32_t>(group_size);
      job.group_level = ExpandLevel(group_level);
    }
    ASSIGN_OR_RETURN(job.node_group, in.String(node, "nodeGroup", f + ".nodeGroup", ""));
    RETURN_IF_ERROR(CheckJob(job, absl::StrCat(job.origin, ": ", f)));
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return in.Error(root, "jobs", "the trace has no jobs");
  SortBySubmit(jobs);
  return jobs;
}

absl::StatusOr<std::vector<TraceJob>> ParseCsvTrace(const std::string& text,
                                                    const std::string& source) {
  ASSIGN_OR_RETURN(std::vector<CsvRecord> records, ReadCsv(text, source));
  std::vector<std::string> header;
  std::vector<TraceJob> jobs;
  static const std::vector<std::string> kColumns = {
      "name",           "submit_s",        "queue",       "priority",    "pods",
      "gpus_per_pod",   "duration_s",      "elastic_min", "elastic_max", "elastic_step",
      "required_level", "preferred_level", "group_size",  "group_level", "node_group"};
  for (CsvRecord& record : records) {
    const std::string where = absl::StrCat(source, ":", record.line);
    const std::vector<std::string>& cells = record.cells;
    if (record.comment) {
      // A whole-line comment, unless it has a row's cells: then it may be a job whose name
      // starts with '#' (a comment marker in the middle of a trace), and dropping it unseen
      // would lose a job.
      if (header.empty() || cells.size() != header.size()) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": a comment line with a row's ", header.size(),
          " cells: a job name may not start with '#'; remove the line or its commas"));
    }
    if (header.empty()) {
      header = cells;
      for (size_t c = 0; c < header.size(); ++c) {
        const std::string& column = header[c];
        if (std::find(kColumns.begin(), kColumns.end(), column) == kColumns.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": header: unknown column \"", column, "\""));
        }
        if (std::find(header.begin(), header.begin() + c, column) != header.begin() + c) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": header: column \"", column, "\" appears twice"));
        }
      }
      for (const char* must : {"submit_s", "queue", "pods", "duration_s"}) {
        if (std::find(header.begin(), header.end(), must) == header.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": header: missing column \"", must, "\""));
        }
      }
      continue;
    }
    if (cells.size() != header.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": want ", header.size(), " columns, got ", cells.size()));
    }
    TraceJob job;
    job.origin = where;
    job.name = absl::StrCat("job-", jobs.size());
    job.gpus_per_pod_from_node = true;  // unless its cell says
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string& column = header[c];
      const std::string& cell = cells[c];
      if (cell.empty()) continue;
      auto bad = [&](const std::string& want) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": ", column, ": want ", want, ", got \"", cell, "\""));
      };
      auto as_int = [&](int32_t& out) -> absl::Status {
        if (!absl::SimpleAtoi(cell, &out)) return bad("an integer");
        return absl::OkStatus();
      };
      auto as_double = [&](double& out) -> absl::Status {
        if (!absl::SimpleAtod(cell, &out) || !std::isfinite(out)) return bad("a number");
        return absl::OkStatus();
      };
      if (column == "name")
        job.name = cell;
      else if (column == "submit_s")
        RETURN_IF_ERROR(as_double(job.submit_s));
      else if (column == "queue")
        job.queue = cell;
      else if (column == "priority")
        RETURN_IF_ERROR(as_int(job.priority));
      else if (column == "pods")
        RETURN_IF_ERROR(as_int(job.pods));
      else if (column == "gpus_per_pod") {
        RETURN_IF_ERROR(as_int(job.gpus_per_pod));
        job.gpus_per_pod_from_node = false;
      }
      else if (column == "duration_s")
        RETURN_IF_ERROR(as_double(job.duration_s));
      else if (column == "elastic_min")
        RETURN_IF_ERROR(as_int(job.elastic_min));
      else if (column == "elastic_max")
        RETURN_IF_ERROR(as_int(job.elastic_max));
      else if (column == "elastic_step")
        RETURN_IF_ERROR(as_int(job.elastic_step));
      else if (column == "required_level")
        job.required_level = ExpandLevel(cell);
      else if (column == "preferred_level")
        job.preferred_level = ExpandLevel(cell);
      else if (column == "group_size")
        RETURN_IF_ERROR(as_int(job.group_size));
      else if (column == "group_level")
        job.group_level = ExpandLevel(cell);
      else if (column == "node_group")
        job.node_group = cell;
    }
    if (job.elastic_min > 0 && job.elastic_max == 0) job.elastic_max = job.pods;
    RETURN_IF_ERROR(CheckJob(job, where));
    jobs.push_back(std::move(job));
  }
  if (header.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": empty trace"));
  if (jobs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": the trace has a header but no jobs"));
  }
  SortBySubmit(jobs);
  return jobs;
}

absl::StatusOr<std::vector<TraceJob>> LoadTrace(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  if (absl::EndsWithIgnoreCase(path, ".csv")) return ParseCsvTrace(text, path);
  return ParseYamlTrace(text, path);
}

namespace {

int32_t PodsPerNode(const TraceJob& job, const NodeGroup& group) {
  return sim::PodsPerNode(job.gpus_per_pod, group.type->gpus);
}

struct NodeRange {
  int32_t begin = 0;
  int32_t end = 0;
};

// The node ranges of the domains of `level` in group `g`, in node order: the whole group for
// "", each node for the hostname level.
std::vector<NodeRange> DomainRanges(const ClusterModel& cluster, int32_t g,
                                    const std::string& level) {
  const NodeGroup& group = cluster.groups[g];
  std::vector<NodeRange> ranges;
  if (level.empty()) return {{group.begin, group.end}};
  if (level == kHostnameLabel) {
    for (int32_t n = group.begin; n < group.end; ++n) ranges.push_back({n, n + 1});
    return ranges;
  }
  const int32_t l = cluster.LevelIndex(g, level);
  if (l < 0) return ranges;
  for (int32_t d : group.level_domains[l]) {
    ranges.push_back({cluster.domains[d].begin, cluster.domains[d].end});
  }
  return ranges;
}

// The most pods of the job's shape that one domain of its required level can hold on the empty
// cluster, counting whole TP groups only (each inside one groupLevel domain).
int64_t ComputeMostPodsInOneDomain(const TraceJob& job, const ClusterModel& cluster, int32_t g) {
  const int64_t per_node = PodsPerNode(job, cluster.groups[g]);
  const std::vector<NodeRange> required = DomainRanges(cluster, g, job.required_level);
  std::vector<NodeRange> groups;
  if (job.group_size > 0 && job.group_level != kHostnameLabel) {
    groups = DomainRanges(cluster, g, job.group_level);
  }
  int64_t best = 0;
  for (const NodeRange& r : required) {
    int64_t pods = per_node * (r.end - r.begin);
    if (job.group_size > 0 && job.group_level == kHostnameLabel) {
      pods = (per_node / job.group_size) * job.group_size * (r.end - r.begin);
    } else if (job.group_size > 0) {
      // Domains are contiguous node ranges in node order: walk the group-level domains that
      // overlap this one.
      auto it = std::upper_bound(groups.begin(), groups.end(), r.begin,
                                 [](int32_t at, const NodeRange& e) { return at < e.end; });
      int64_t whole_groups = 0;
      for (; it != groups.end() && it->begin < r.end; ++it) {
        const int64_t overlap = std::min(it->end, r.end) - std::max(it->begin, r.begin);
        whole_groups += per_node * overlap / job.group_size;
      }
      pods = whole_groups * job.group_size;
    }
    best = std::max(best, pods);
  }
  return best;
}

// The same, remembered per shape: a trace of millions of jobs has a few dozen shapes, and each
// computation walks every domain of the required level.
class PlaceabilityCache {
 public:
  int64_t MostPodsInOneDomain(const TraceJob& job, const ClusterModel& cluster, int32_t g) {
    auto key = std::make_tuple(g, PodsPerNode(job, cluster.groups[g]), job.required_level,
                               job.group_size, job.group_level);
    auto it = most_.find(key);
    if (it == most_.end()) {
      it = most_.emplace(std::move(key), ComputeMostPodsInOneDomain(job, cluster, g)).first;
    }
    return it->second;
  }

 private:
  std::map<std::tuple<int32_t, int32_t, std::string, int32_t, std::string>, int64_t> most_;
};

// Why the job cannot run in node group g, or "".
std::string GroupUnplaceableReason(const TraceJob& job, const ClusterModel& cluster, int32_t g,
                                   const QueueSpec* queue, PlaceabilityCache& cache) {
  const NodeGroup& group = cluster.groups[g];
  const int64_t pods = job.min_pods();
  if (PodsPerNode(job, group) == 0) {
    return absl::StrCat("a pod of ", job.gpus_per_pod, " GPUs does not fit a node of ",
                        group.type->gpus);
  }
  const int64_t most = cache.MostPodsInOneDomain(job, cluster, g);
  if (most < pods) {
    std::string where = job.required_level.empty()
                            ? absl::StrCat("its ", group.spec.count, " nodes")
                            : absl::StrCat("one ", job.required_level, " domain (required)");
    if (job.group_size > 0) {
      return absl::StrCat(pods, " pods in groups of ", job.group_size, ", each inside one ",
                          job.group_level, " domain: at most ", most, " fit in ", where);
    }
    return absl::StrCat(pods, " pods of ", job.gpus_per_pod, " GPUs: at most ", most,
                        " fit in ", where);
  }
  const int64_t gpus = pods * job.gpus_per_pod;
  if (gpus == 0 || queue == nullptr) return "";
  const int64_t reachable = ReachableGpus(cluster.spec, *queue, group.spec.name);
  if (reachable >= gpus) return "";
  if (reachable == 0) {
    return absl::StrCat("queue ", queue->name, " has no GPU quota for it (nominal, or borrowable",
                        " in its cohort)");
  }
  return absl::StrCat("queue ", queue->name, " can hold at most ", reachable,
                      " GPUs of it (nominal quota plus what its cohort lends), the job needs ",
                      gpus);
}

std::string UnplaceableReason(const TraceJob& job, const ClusterModel& cluster,
                              PlaceabilityCache& cache) {
  const QueueSpec* queue = nullptr;
  for (const QueueSpec& q : cluster.spec.queues) {
    if (q.name == job.queue) queue = &q;
  }
  std::vector<std::string> reasons;
  for (size_t g = 0; g < cluster.groups.size(); ++g) {
    const NodeGroup& group = cluster.groups[g];
    if (!job.node_group.empty() && group.spec.name != job.node_group) continue;
    const std::string reason =
        GroupUnplaceableReason(job, cluster, static_cast<int32_t>(g), queue, cache);
    if (reason.empty()) return "";
    reasons.push_back(cluster.groups.size() > 1
                          ? absl::StrCat("node group ", group.spec.name, ": ", reason)
                          : reason);
  }
  return absl::StrJoin(reasons, "; ");
}

}  // namespace

std::string UnplaceableReason(const TraceJob& job, const ClusterModel& cluster) {
  PlaceabilityCache cache;
  return UnplaceableReason(job, cluster, cache);
}

namespace {

// Whether some node group's topology has `level`.
bool PreferredLevelSomewhere(const ClusterModel& cluster, const std::string& level) {
  for (size_t g = 0; g < cluster.groups.size(); ++g) {
    if (cluster.LevelIndex(static_cast<int32_t>(g), level) >= 0) return true;
  }
  return false;
}

// The line of a job's origin ("trace.csv:12" -> 12); 0 for one without ("generated[3]").
int64_t OriginLine(const std::string& origin) {
  int64_t line = 0;
  const size_t colon = origin.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(origin.substr(colon + 1), &line)) return 0;
  return line;
}

}  // namespace

absl::Status ValidateTrace(std::vector<TraceJob>& jobs, const ClusterModel& cluster,
                           bool allow_unplaceable) {
  PlaceabilityCache cache;
  std::set<std::pair<std::string, std::string>> names;  // (queue, name): a job's key
  // In the file's order, not the submit order the loaders sorted them in: the first bad row
  // named is the first in the file, and of two rows with one name the later is refused.
  std::vector<TraceJob*> in_file_order;
  for (TraceJob& job : jobs) in_file_order.push_back(&job);
  std::stable_sort(in_file_order.begin(), in_file_order.end(),
                   [](const TraceJob* a, const TraceJob* b) {
                     return OriginLine(a->origin) < OriginLine(b->origin);
                   });
  for (TraceJob* job_in_file : in_file_order) {
    TraceJob& job = *job_in_file;
    auto bad = [&](const std::string& field, const std::string& message) {
      return absl::InvalidArgumentError(
          absl::StrCat(job.origin, ": ", field, ": job ", job.name, ": ", message));
    };
    if (job.gpus_per_pod_from_node) {
      // Not given: a whole node's GPUs, of its node group or of every group alike.
      std::set<int32_t> gpus;
      for (const NodeGroup& group : cluster.groups) {
        if (job.node_group.empty() || group.spec.name == job.node_group) {
          gpus.insert(group.type->gpus);
        }
      }
      if (gpus.size() > 1) {
        return bad("gpusPerPod", absl::StrCat("not given, and its nodes do not all have the same "
                                              "GPUs (", absl::StrJoin(gpus, ", "),
                                              "): give it, or the job's node group"));
      }
      if (gpus.size() == 1) job.gpus_per_pod = *gpus.begin();
      job.gpus_per_pod_from_node = false;
    }
    // The loaders checked these already; a generated job is checked here, by the same rules.
    RETURN_IF_ERROR(CheckJob(job, absl::StrCat(job.origin, ": job ", job.name)));
    if (!names.emplace(job.queue, job.name).second) {
      return bad("name", absl::StrCat("another job of queue \"", job.queue, "\" has this name"));
    }
    const bool queue_known = std::any_of(cluster.spec.queues.begin(), cluster.spec.queues.end(),
                                         [&](const QueueSpec& q) { return q.name == job.queue; });
    if (!queue_known) return bad("queue", absl::StrCat("no queue named \"", job.queue, "\""));
    bool group_known = job.node_group.empty();
    // A preference a group cannot honour is no reason to refuse a job that may run in another
    // group (as Kueue TAS skips such a flavor): only a job pinned to the group is.
    const bool preference_elsewhere =
        job.node_group.empty() && PreferredLevelSomewhere(cluster, job.preferred_level);
    for (size_t g = 0; g < cluster.groups.size(); ++g) {
      const NodeGroup& group = cluster.groups[g];
      if (!job.node_group.empty() && group.spec.name != job.node_group) continue;
      group_known = true;
      for (const std::string* level :
           {&job.required_level, &job.preferred_level, &job.group_level}) {
        if (level == &job.preferred_level && preference_elsewhere) continue;
        if (!level->empty() && *level != kHostnameLabel &&
            cluster.LevelIndex(static_cast<int32_t>(g), *level) < 0) {
          return bad("topology", absl::StrCat("node group ", group.spec.name,
                                              " has no topology level \"", *level, "\""));
        }
      }
      // Level order by this group's own topology (the loader only knew the well-known keys).
      const absl::Status shape =
          ValidateJobShape(TraceJobShape(job), kTraceJobFields, group.levels);
      if (!shape.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(job.origin, ": job ", job.name, ": ", shape.message()));
      }
    }
    if (!group_known)
      return bad("nodeGroup", absl::StrCat("no node group \"", job.node_group, "\""));
    job.unplaceable = UnplaceableReason(job, cluster, cache);
    if (!job.unplaceable.empty() && !allow_unplaceable) {
      return absl::InvalidArgumentError(
          absl::StrCat(job.origin, ": job ", job.name, " can never be placed: ", job.unplaceable,
                       " (--allow-unplaceable runs it anyway, counted apart)"));
    }
  }
  return absl::OkStatus();
}

std::vector<TraceJob> GenerateTrace(const ClusterModel& cluster, const TraceOptions& options) {
  Rng rng(options.seed);
  // Team mix follows the nominal quotas, so each team's demand roughly matches its share.
  std::vector<double> team_weights;
  for (const QueueSpec& queue : cluster.spec.queues) {
    int64_t gpus = 0;
    for (const FlavorQuota& f : queue.flavors) {
      auto it = f.nominal.find(kResourceGpu);
      if (it != f.nominal.end()) gpus += it->second;
    }
    team_weights.push_back(static_cast<double>(std::max<int64_t>(gpus, 1)));
  }
  // Node groups in proportion to their GPUs, among those the team's queue can ever hold a node
  // of (ReachableGpus): a team without quota for a group never submits to it, or its jobs could
  // never start.
  std::vector<std::vector<double>> group_weights(cluster.spec.queues.size());
  std::vector<std::vector<int64_t>> reachable_nodes(cluster.spec.queues.size());
  for (size_t q = 0; q < cluster.spec.queues.size(); ++q) {
    for (const NodeGroup& group : cluster.groups) {
      const int64_t nodes =
          ReachableGpus(cluster.spec, cluster.spec.queues[q], group.spec.name) / group.type->gpus;
      reachable_nodes[q].push_back(nodes);
      group_weights[q].push_back(
          nodes > 0 ? static_cast<double>(group.spec.count) * group.type->gpus : 0.0);
    }
  }
  // A team that can never hold a whole node anywhere submits nothing (unless no team can; the
  // trace check then names the jobs).
  std::vector<double> usable_teams = team_weights;
  for (size_t q = 0; q < usable_teams.size(); ++q) {
    if (std::all_of(group_weights[q].begin(), group_weights[q].end(),
                    [](double w) { return w == 0; })) {
      usable_teams[q] = 0;
      group_weights[q].assign(group_weights[q].size(), 1.0);
    }
  }
  if (std::any_of(usable_teams.begin(), usable_teams.end(), [](double w) { return w > 0; })) {
    team_weights = usable_teams;
  }
  // Size classes: single pod with 1/2/4/full-node GPUs, then gangs of whole nodes. Weights
  // follow Philly/Helios (most jobs small); durations grow with size so that most GPU-time
  // is in multi-node jobs.
  static const std::vector<double> kSingleWeights = {0.30, 0.08, 0.10, 0.17};
  static const std::vector<int32_t> kGangNodes = {2, 4, 8, 16, 32, 64};
  static const std::vector<double> kGangWeights = {0.12, 0.09, 0.06, 0.045, 0.025, 0.01};
  std::vector<double> size_weights = kSingleWeights;
  size_weights.insert(size_weights.end(), kGangWeights.begin(), kGangWeights.end());
  static const std::vector<int32_t> kPriorities = {10, 100, 1000};
  static const std::vector<double> kPriorityWeights = {0.2, 0.7, 0.1};

  std::vector<TraceJob> jobs;
  jobs.reserve(options.jobs);
  double gpu_seconds = 0;
  for (int32_t i = 0; i < options.jobs; ++i) {
    TraceJob job;
    job.name = absl::StrFormat("job-%06d", i);
    job.origin = absl::StrCat("generated[", i, "]");
    const int team = rng.WeightedIndex(team_weights);
    job.queue = cluster.spec.queues[team].name;
    const int g = rng.WeightedIndex(group_weights[team]);
    const NodeGroup& group = cluster.groups[g];
    if (cluster.groups.size() > 1) job.node_group = group.spec.name;
    job.priority = kPriorities[rng.WeightedIndex(kPriorityWeights)];
    const int size = rng.WeightedIndex(size_weights);
    const int32_t node_gpus = group.type->gpus;
    if (size < static_cast<int>(kSingleWeights.size())) {
      job.pods = 1;
      job.gpus_per_pod = std::min(node_gpus, 1 << size);
      if (size == 3) job.gpus_per_pod = node_gpus;
      job.duration_s = rng.LogUniform(120, 6 * 3600);
    } else {
      // Gangs never ask for more than half of their node group, nor for more nodes than their
      // queue can ever hold there, so every job can run.
      const int32_t nodes = static_cast<int32_t>(std::max<int64_t>(
          1, std::min<int64_t>({kGangNodes[size - kSingleWeights.size()],
                                std::max(2, group.spec.count / 2), reachable_nodes[team][g]})));
      job.pods = nodes;
      job.gpus_per_pod = node_gpus;
      job.duration_s = rng.LogUniform(600, 24 * 3600);
      // Topology: prefer the lowest level whose domains can hold the gang; most users also set
      // a hard ceiling one level up (or the top level).
      int32_t fit_level = -1;  // lowest level (deepest index) whose domain size >= nodes
      int64_t size_at = 1;
      for (int32_t l = static_cast<int32_t>(group.levels.size()) - 1; l >= 0; --l) {
        size_at *= group.spec.fanout[l];
        if (size_at >= nodes) {
          fit_level = l;
          break;
        }
      }
      if (fit_level >= 0) {
        job.preferred_level = group.levels[fit_level];
        if (rng.Bernoulli(0.7)) job.required_level = group.levels[std::max(0, fit_level - 1)];
      }
      // Elastic training scales in whole data-parallel replicas: here half or all of the gang,
      // so only an even gang can be elastic (the caps above are often odd: half a group of 50,
      // a queue's 25 reachable nodes). The draw comes first so every other job, and every trace
      // that was valid before, stays the same for a seed.
      if (nodes >= 4 && rng.Bernoulli(0.3) && nodes % 2 == 0) {
        job.elastic_min = nodes / 2;
        job.elastic_max = nodes;
        job.elastic_step = nodes / 2;
      }
      if (group.spec.preset == "gb200") {
        // Tensor-parallel groups inside one NVL72 clique: the largest power of two that fits a
        // clique and divides every size the gang can run at (the elastic minimum and step, not
        // only the full size), as the TrainingJob rules require.
        const int32_t sizes = job.elastic() ? std::gcd(job.elastic_min, job.elastic_step) : nodes;
        int32_t group_size = 1;
        if (options.group_sizes.empty()) {
          while (group_size * 2 <= std::min(sizes, group.spec.fanout.back()) &&
                 sizes % (group_size * 2) == 0) {
            group_size *= 2;
          }
        } else {
          std::vector<int32_t> fitting;
          for (int32_t g : options.group_sizes) {
            if (g <= group.spec.fanout.back() && sizes % g == 0) fitting.push_back(g);
          }
          if (!fitting.empty()) {
            group_size = fitting[rng.UniformInt(0, static_cast<int64_t>(fitting.size()) - 1)];
          }
        }
        if (group_size > 1) {
          job.group_size = group_size;
          job.group_level = group.levels.back();
        }
      }
    }
    gpu_seconds += job.duration_s * static_cast<double>(job.gpus());
    jobs.push_back(std::move(job));
  }
  // Poisson arrivals at the rate that offers `load` of the cluster's GPUs.
  const double mean_gpu_seconds = jobs.empty() ? 0 : gpu_seconds / jobs.size();
  const double mean_gap =
      mean_gpu_seconds /
      (options.load * static_cast<double>(std::max<int64_t>(cluster.total_gpus, 1)));
  double t = 0;
  for (TraceJob& job : jobs) {
    job.submit_s = std::round(t);
    t += rng.Exponential(mean_gap);
  }
  return jobs;
}

}  // namespace phalanx::sim
