// Job traces: what arrives when. Read from YAML or CSV files, or generated from a seed with
// distributions modelled on published GPU-cluster traces.
//
//   ASSIGN_OR_RETURN(std::vector<TraceJob> jobs, LoadTrace("trace.csv"));
//   std::vector<TraceJob> generated = GenerateTrace(cluster, {.jobs = 3000, .seed = 1});
//
// File formats (docs/simulator.md has examples):
//   YAML: {jobs: [{name, submit, queue, priority, pods, gpusPerPod, duration,
//                  elastic: {min, max, step}, topology: {required, preferred, groupSize,
//                  groupLevel}, nodeGroup}]}
//   CSV:  a header row naming columns among name, submit_s, queue, priority, pods, gpus_per_pod,
//         duration_s, elastic_min, elastic_max, elastic_step, required_level, preferred_level,
//         group_size, group_level, node_group; then one job per row; cells may be quoted as
//         RFC 4180 quotes them (sim/csv.h).
// Levels may be full label keys or short names: layer-1 .. layer-4, clique, hostname. Job and
// queue names are DNS-1123 subdomains (common/object_names.h): a Workload and a queue of that name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/cluster.h"
#include "sim/job_shape.h"

namespace phalanx::sim {

// A run stops at the latest this long after the last submission (the engine's safety stop, for a
// policy that never stalls cleanly), so a trace job may not run longer.
inline constexpr double kSafetyStopSeconds = 365.0 * 86400;
// The latest submit time a trace job may have: seconds from any origin, Unix time included, up
// to the year 5138.
inline constexpr double kMaxSubmitSeconds = 1e11;

struct TraceJob {
  std::string name;
  double submit_s = 0;
  std::string queue;
  int32_t priority = 0;
  int32_t pods = 1;  // elastic jobs: the count the duration was measured at (= max)
  int32_t gpus_per_pod = 8;
  // The trace file did not give gpus_per_pod: ValidateTrace sets a whole node's GPUs (its node
  // group's, or the cluster's when every group has the same). Jobs built in code keep theirs.
  bool gpus_per_pod_from_node = false;
  double duration_s = 0;    // run time at `pods` pods
  int32_t elastic_min = 0;  // 0 = not elastic
  int32_t elastic_max = 0;
  int32_t elastic_step = 1;  // sizes min, min+step, ... (whole data-parallel replicas)
  std::string required_level;
  std::string preferred_level;
  int32_t group_size = 0;
  std::string group_level;
  std::string node_group;  // "" = any node group
  std::string origin;      // "trace.csv:12", for messages
  // Why no policy could ever place it (UnplaceableReason), kept when the run allows such jobs
  // (--allow-unplaceable); "" = placeable.
  std::string unplaceable;

  bool elastic() const { return elastic_min > 0; }
  int32_t min_pods() const { return elastic() ? elastic_min : pods; }
  int64_t gpus() const { return int64_t{pods} * gpus_per_pod; }
};

// The job's gang shape, for the TrainingJob rules (sim/job_shape.h); group_size 0 = no groups.
JobShape TraceJobShape(const TraceJob& job);

// "layer-3" -> "topology.k8s.aws/network-node-layer-3", "clique" -> "nvidia.com/gpu.clique",
// "hostname" -> "kubernetes.io/hostname"; anything else unchanged.
std::string ExpandLevel(const std::string& level);

// Loads by extension (.csv, else YAML). Jobs come back sorted by submit time (stable). Each
// job's shape is checked by the TrainingJob rules (sim/job_shape.h: group size divides every
// size, elastic range, level order): a job the CRD would reject is bad input, its line named.
absl::StatusOr<std::vector<TraceJob>> LoadTrace(const std::string& path);
absl::StatusOr<std::vector<TraceJob>> ParseYamlTrace(const std::string& text,
                                                     const std::string& source);
absl::StatusOr<std::vector<TraceJob>> ParseCsvTrace(const std::string& text,
                                                    const std::string& source);

// Checks jobs against the cluster: known queue, node group and levels, the level order of each
// node group's topology. InvalidArgument naming the job's origin and field. A job that no policy
// could ever place (UnplaceableReason) is bad input too, unless `allow_unplaceable`: then the
// reason is kept in the job's `unplaceable` field and the run counts it.
absl::Status ValidateTrace(std::vector<TraceJob>& jobs, const ClusterModel& cluster,
                           bool allow_unplaceable = false);

// Why `job` can never run on `cluster`, even alone on the empty cluster, or "" if it can: for
// every node group it may use, either its smallest size does not fit (pods per node, the
// required level's largest domain, whole TP groups inside groupLevel domains) or its queue can
// never hold that many GPUs of the group (ReachableGpus). The job's levels must exist in the
// groups it may use (ValidateTrace checks that first).
std::string UnplaceableReason(const TraceJob& job, const ClusterModel& cluster);

struct TraceOptions {
  int32_t jobs = 3000;
  uint64_t seed = 1;
  double load = 0.9;  // offered GPU-seconds per second as a fraction of the cluster's GPUs
  // gb200 node groups: tensor-parallel group sizes (pods) to draw from, uniformly among those
  // that fit a clique and divide every size the gang can run at (no groups if none does).
  // Empty = the largest power of two that does.
  std::vector<int32_t> group_sizes;
};

// The generator's model (docs/simulator.md): most jobs are one pod of 1-8 GPUs, while most
// GPU-time goes to multi-node jobs (Philly, Helios); durations are log-uniform; arrivals are
// Poisson at the rate that offers `load`; priorities and elastic ranges mix teams' habits.
std::vector<TraceJob> GenerateTrace(const ClusterModel& cluster, const TraceOptions& options);

}  // namespace phalanx::sim
