// The `phalanx` policy: the simulator driving Phalanx's real admission core
// (operator/admission, RunAdmissionCycle) and real placement core (scheduler/,
// InProcessPlacementService over a ClusterSnapshot) — the same code the operator and the
// scheduler run, not a model of it.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Policy> phalanx, MakePhalanxPolicy());
//   Engine(cluster, jobs, {}).Run(*phalanx);
//
// Mapping: each node group is a ResourceFlavor (nodes carry sim.phalanx.dev/node-group); each
// queue of the cluster spec is a ClusterQueue with a LocalQueue of the same name in a namespace
// of the same name; each trace job is a Workload "<queue>/<job>". Elastic jobs grow toward their
// maximum through the admission cycle's growth step (CycleResult::growths), quota-checked there.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "scheduler/cluster_snapshot.h"
#include "scheduler/placement_types.h"
#include "sim/cluster.h"
#include "sim/policy.h"

namespace phalanx::sim {

// Switches for measuring what each mechanism does (docs/simulator.md, ablation); the defaults
// are what the operator runs.
struct PhalanxPolicyOptions {
  // Backfill with start-time reservations (docs/admission.md "Backfill"). The simulator gives
  // every workload its trace duration as its expected run time (at its smallest size).
  bool backfill = true;
  // Each workload's expected run time is this many times its real run time at its smallest
  // size: 1 is an exact time limit; users' limits are longer (Slurm sites see requested times
  // several times the real ones), which makes reservations later and backfill looser. At least
  // 1: the operator enforces limits (spec.activeDeadlineSeconds), so no job outlives its own.
  double time_limit_factor = 1.0;
  // Overrides every queue's localityWaitSeconds when set.
  std::optional<int64_t> locality_wait_s;
  // Kueue's fairSharing.enable, the operator's --fair-sharing: order admissions and preempt
  // across a cohort by weighted share (docs/admission.md "Fair sharing"). Off, as there.
  bool fair_sharing = false;
};

std::unique_ptr<Policy> MakePhalanxPolicy(const PhalanxPolicyOptions& options = {});

// The cluster spec's queues as the admission core reads them (Kueue's rules: quotas, limits only
// with a cohort, weights, ...), checked when the spec is loaded so that a spec is valid or not
// whichever policies run: InvalidArgument "<file>: queues: ClusterTrainingQueue a: ..." naming
// the first problem.
absl::Status CheckQueues(const ClusterModel& cluster);

// The node-label Topology shared by all node groups of the cluster (the deepest preset; the
// others must be its prefix), for the placement core.
absl::StatusOr<std::vector<std::string>> ClusterTopologyLevels(const ClusterModel& cluster);

// The placement core's snapshot of the modelled cluster, empty and every node Ready.
absl::StatusOr<placement::ClusterSnapshot> BuildSnapshot(const ClusterModel& cluster);
placement::NodeInfo SnapshotNode(const SimNode& node, bool ready);

// The placement core's view of a trace job.
placement::GangRequest GangRequestFor(const TraceJob& job, const std::string& key);

}  // namespace phalanx::sim
