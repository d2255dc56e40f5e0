// What `phalanx queues|jobs|explain|topology` (and `kubectl phalanx ...`) print: API objects in,
// as the JSON text the API server returns, text out. No I/O here, so every table is unit-tested
// with recorded objects (tests/unit/cli/); cli/cluster_commands.cc reads the cluster and prints.
//
//   ASSIGN_OR_RETURN(kube::ListResult cqs, client.List(ClusterTrainingQueues(), ""));
//   ASSIGN_OR_RETURN(kube::ListResult lqs, client.List(TrainingQueues(), ns));
//   ASSIGN_OR_RETURN(std::string text,
//                    FormatQueues(cqs.items, lqs.items, {.all_namespaces = true, .now = Now()}));
//
// Absent status fields print as "-": the operator may not have written the status yet, and a
// zero would claim something nobody measured. --json output is one JSON document per call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/placement_types.h"
#include "scheduler/snapshot_summary.h"

namespace phalanx::cli {

struct OutputOptions {
  bool json = false;
  // Objects come from every namespace: tables get a NAMESPACE column.
  bool all_namespaces = false;
  // The namespace read otherwise, for "No TrainingJobs in namespace team-a."
  std::string ns;
  // For AGE columns.
  absl::Time now = absl::UnixEpoch();
  // jobs: only these TrainingQueues (spec.queueName) / phases (status.phase, any case; "-" for
  // none yet); empty = all. `wide`: the whole reason, not cut to the column.
  std::vector<std::string> queues;
  std::vector<std::string> phases;
  bool wide = false;
};

// kubectl's age: "45s", "5m30s", "47m", "5h3m", "3d4h", "400d", "2y30d".
std::string HumanAge(absl::Duration age);

// A topology level as people say it: "layer-3" for topology.k8s.aws/network-node-layer-3,
// "gpu.clique" for nvidia.com/gpu.clique, "node" for kubernetes.io/hostname, "cluster" for "".
std::string ShortLevel(std::string_view label);

// ClusterTrainingQueues (NAME, COHORT, PENDING, ADMITTED, GPUS per flavor as
// "p5 96/256 (+0 borrowed)", ACTIVE), then the TrainingQueues. InvalidArgument names an object
// whose JSON is malformed.
absl::StatusOr<std::string> FormatQueues(const std::vector<std::string>& cluster_queues,
                                         const std::vector<std::string>& local_queues,
                                         const OutputOptions& options);

// TrainingJobs: NAME, QUEUE, PHASE, SIZE (admitted/spec replicas), DOMAIN, RESTARTS, AGE and,
// for jobs not admitted, the Queued condition's message as REASON. A Succeeded or Failed job
// holds nothing: its SIZE and DOMAIN are "-" (--json keeps the status fields as they are).
absl::StatusOr<std::string> FormatJobs(const std::vector<std::string>& jobs,
                                       const OutputOptions& options);

// The scheduler's dry run for a job's gang, when a scheduler was asked.
struct PlacementAnswer {
  std::string server;  // the gRPC address asked
  placement::GangRequest request;
  absl::StatusOr<placement::PlacementResult> result;
};

// `explain`: the job's spec and status, its conditions, its pods (the gang's ranks by phase,
// or why they could not be listed,
// and each rank without a running pod with what keeps it: kube-scheduler's Unschedulable
// message, a waiting or failed container, the kubelet's reason), its latest `max_events`
// Events (newest last) and the scheduler's answer if there is one. `queue_json`, the job's
// TrainingQueue ("" if it could not be read), gives a pending job's position in its queue.
// `priority_classes`, the cluster's PriorityClasses (nullopt if they could not be read), give
// the job's priority as phalanx-operator resolves it: its pods' class (the globalDefault one
// for a job that names none) and that class's value.
absl::StatusOr<std::string> FormatExplain(
    std::string_view job, const std::vector<std::string>& events,
    const absl::StatusOr<std::vector<std::string>>& pods,
    const std::optional<PlacementAnswer>& placement, int max_events, const OutputOptions& options,
    std::string_view queue_json = "",
    const std::optional<std::vector<std::string>>& priority_classes = std::nullopt);

// One node under its domain in `topology --nodes`.
struct TopologyNode {
  std::string name;
  placement::DomainId domain;  // hostname-level: the path ends with the node's name
  std::string condition;       // "Schedulable", "NotReady", "Unschedulable", "Unhealthy"
  int64_t gpus = 0;            // allocatable
  int64_t free_gpus = 0;
};

struct TopologyView {
  std::string source;  // where the figures come from, printed first
  std::string levels_source;  // where the levels come from ("preset eks, the default"), or ""
  placement::SnapshotSummary summary;
  std::vector<TopologyNode> nodes;  // empty unless nodes were asked for
  // Deepest level listed (-1 = every label level): a domain above it gets a row for its nodes
  // that lack the next level's label.
  int max_level = -1;
  std::vector<std::string> notes;  // printed as "note: ..." lines under the header
};

// The domain tree, coarsest first, each domain indented under its parent with its nodes and
// free/allocatable GPUs ("layer-3 nn-a   4 nodes  free 24/32 GPUs"), nodes under their domain,
// and under a domain whose nodes do not all carry the next level's label a row for those
// ("(1 node without layer-3)"), which hang there and serve no request needing that level.
std::string FormatTopology(const TopologyView& view, const OutputOptions& options);

}  // namespace phalanx::cli
