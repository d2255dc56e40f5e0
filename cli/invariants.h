// The cluster-wide invariants Phalanx must keep through every fault (issue #12), checked over one
// read of the cluster: TrainingJobs, pods, nodes and, when phalanx-scheduler was asked, its
// reservations. Pure: `phalanx check` does the reading and the settling (cli/check_command.cc),
// unit tests feed recorded JSON.
//
//   ASSIGN_OR_RETURN(ClusterState state, DecodeClusterState(job_items, pod_items, node_items));
//   state.reservations = summary.reservation_list;          // optional
//   for (const Violation& v : CheckInvariants(state, {.expected_jobs = created})) ...
//
// The invariants, in words:
//   job_lost            every TrainingJob that was created still exists (it may have finished).
//   admitted_twice      a job runs once: never more live pods than admitted replicas, one pod
//                       per rank, each bound pod on its rank's node in status.placement (no job
//                       with pods on two placements), and no live bound pods for a job that is
//                       not admitted.
//   partial_gang        an admitted, unfinished gang has all its ranks' pods bound or none.
//   node_overcommitted  the GPUs requested by the bound pods that have not finished (terminating
//                       ones included: they still hold the device) fit in the node's allocatable.
//   reservation_orphan  every phalanx-scheduler reservation belongs to an admitted, unfinished
//                       job.
//   reservation_mismatch  ... on exactly the nodes of its status.placement, rank by rank.
//   reservation_missing   every admitted, unfinished, placed job holds a reservation.
// node_overcommitted is wrong the moment it is seen; the others pass through harmless transient
// states while a gang binds, finishes or is moved (the operator reserves before it writes
// status.placement), so `phalanx check --settle` reports them only when they persist.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kube/api/training_job.h"
#include "kube/objects.h"
#include "scheduler/snapshot_summary.h"

namespace phalanx::cli {

struct ClusterState {
  std::vector<kube::TrainingJob> jobs;
  std::vector<kube::Pod> pods;  // every pod: over-commit counts pods of any owner
  std::vector<kube::Node> nodes;
  // phalanx-scheduler's reservations; absent when it was not asked.
  std::optional<std::vector<placement::ReservationSummary>> reservations;
};

// Decodes the items of three lists (TrainingJobs, pods, nodes). InvalidArgument names the item.
// Of a TrainingJob only metadata and status are read.
absl::StatusOr<ClusterState> DecodeClusterState(const std::vector<std::string>& jobs,
                                                const std::vector<std::string>& pods,
                                                const std::vector<std::string>& nodes);

struct Violation {
  std::string invariant;  // job_lost, admitted_twice, ... (above)
  std::string object;     // "namespace/name" of the job, or the node's name
  std::string message;

  // Identity across reads: the same invariant broken on the same object.
  std::string Key() const { return invariant + " " + object; }
  friend bool operator==(const Violation&, const Violation&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Violation& v) {
    return os << v.invariant << " " << v.object << ": " << v.message;
  }
};

struct InvariantOptions {
  // Keys ("namespace/name") of every job created; missing ones are job_lost.
  std::vector<std::string> expected_jobs;
};

// Every broken invariant, ordered by invariant then object.
std::vector<Violation> CheckInvariants(const ClusterState& state,
                                       const InvariantOptions& options = {});

// True for the invariants that are wrong the moment they are seen (node_overcommitted, job_lost).
bool IsImmediate(const Violation& violation);

// Jobs per status.phase ("" for a job with none yet).
std::map<std::string, int> PhaseCounts(const ClusterState& state);

// What `phalanx check` found over one or more reads of the cluster.
struct CheckReport {
  std::vector<Violation> violations;
  // Of the last read:
  std::map<std::string, int> phases;
  int jobs = 0;
  int pods = 0;
  int nodes = 0;
  std::optional<int> reservations;  // absent when phalanx-scheduler was not asked
  int reads = 0;
  double seconds = 0;  // from the first read to the last
};

// One JSON object ({"ok":..,"violations":[{"invariant","object","message"}],"jobs":..,...}) or
// text: one line per violation, then a summary line.
std::string FormatCheck(const CheckReport& report, bool json);

}  // namespace phalanx::cli
