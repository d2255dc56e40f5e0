// The discrete-event engine: a simulated clock driving one Policy through a job trace on a
// modelled cluster — arrivals, scheduling cycles, starts, completions, elastic grow/shrink,
// preemptions, node failures and repairs — while keeping its own ledger of GPUs in use to check
// every decision independently.
//
//   Engine engine(cluster, jobs, {.seed = 1});
//   ASSIGN_OR_RETURN(RunResult result, engine.Run(policy));
//   result.summary.partial_gang_events;  // measured, not assumed
//
// Job model: a job needs pods x duration pod-seconds of work and progresses at `count` pod-seconds
// per second while running (elastic jobs run faster or slower with their size). Preempted or
// interrupted jobs pay `restart_overhead_s` on restart, and keep their progress up to their last
// checkpoint: all of it with `checkpoint_interval_s` 0 (a checkpoint at the eviction itself),
// else what they had at the last multiple of the interval of productive time since they
// (re)started, the rest lost and run again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/cluster.h"
#include "sim/policy.h"
#include "sim/trace.h"

namespace phalanx::sim {

struct EngineOptions {
  uint64_t seed = 1;                // node failure times
  double restart_overhead_s = 120;  // checkpoint reload after a preemption or failure
  // Every job checkpoints after each this many seconds of productive run time; an interrupted
  // job loses what it did since its last checkpoint. 0: nothing is lost.
  double checkpoint_interval_s = 0;
  // Called now and then with the fraction of jobs finished, for progress bars.
  std::function<void(double)> progress;
  // End a run once the policy provably only repeats itself with nothing running (a livelock,
  // Policy::RestState) rather than at the safety horizon a year after the last submit. Every
  // figure is the same either way (FirstFitPropertyTest, EngineRepeatTest); off only to
  // show that.
  bool stop_repeating = true;
};

// What happened to one job.
struct JobOutcome {
  double submit_s = 0;
  double first_start_s = -1;  // -1 = never started
  double finish_s = -1;       // -1 = not finished
  int32_t pods = 0;
  int32_t gpus_per_pod = 0;
  int32_t nodes_needed = 0;  // nodes the gang needs when packed (as first placed)
  // Nodes the trace's full size needs when packed (an elastic job's maximum): the same for every
  // policy, so the locality buckets (LocalityBySize) compare the same jobs.
  int32_t nodes_requested = 0;
  bool multi_node = false;
  // The trace marked it as never placeable (--allow-unplaceable): left out of every per-job
  // figure whatever a policy did with it.
  bool unplaceable = false;
  // Still holding GPUs when the run ended, which only the safety stop leaves (every other end
  // comes with nothing running).
  bool running_at_end = false;
  // The first placement: pods and distinct nodes, and the tightest domain holding all of them
  // (its level's label key, "kubernetes.io/hostname" for one node, "" = spans node groups or
  // top-level domains; domain "cluster" then).
  int32_t first_pods = 0;
  int32_t first_nodes = 0;
  std::string placed_level;
  std::string placed_domain;
  // Locality of the first placement (multi-node jobs whose lowest holding level exists).
  bool locality_applicable = false;
  bool locality_ok = false;
  double comm_slowdown = 1.0;  // of the first placement
  int32_t preemptions = 0;
  int32_t interruptions = 0;
  int32_t restarts = 0;  // starts after the first (each after a preemption or failure)
  double gpu_seconds = 0;  // GPU-seconds allocated to the job, restart overhead included
  double restart_gpu_seconds = 0;
  // GPU-seconds of work done and lost at interruptions, since the last checkpoint
  // (EngineOptions::checkpoint_interval_s), and run again: in gpu_seconds, not progress.
  double lost_gpu_seconds = 0;
  double queued_s = 0;  // time spent pending in all: the first wait and each after an eviction
  // Never started: why it was still pending when the run ended, as the policy said
  // (Policy::PendingReason); "" for a job that started, or when the policy gave no reason.
  std::string pending_reason;
};

struct Summary {
  std::string policy;
  int32_t jobs = 0;
  int32_t jobs_started = 0;    // placeable jobs that started (the wait figures' population)
  int32_t jobs_completed = 0;  // every completed job, unplaceable ones included
  int32_t jobs_measured_completed = 0;  // placeable completed jobs (the JCT's population)
  // Never started by the end of the run: left out of every per-job figure below, and reported.
  int32_t jobs_never_started = 0;
  // Started but not finished when the run ended: evicted and pending again (any end but
  // "completed"), or still running (only at the safety stop). Not in the JCT or queued figures.
  int32_t jobs_unfinished = 0;
  int32_t jobs_running_at_end = 0;  // of jobs_unfinished: those still holding GPUs
  // What ended the run: "completed" (every job finished), "stalled" (jobs pending, none running,
  // nothing left that could change that), "livelock" (the policy only repeated itself,
  // EngineOptions::stop_repeating) or "safety_stop" (kSafetyStopSeconds after the last submit).
  std::string ended_by;
  // Marked by the trace check as never placeable (TraceJob::unplaceable): left out of every
  // per-job figure below even if a policy started them (which the checks then count).
  int32_t jobs_unplaceable = 0;
  // The horizon the run is measured over: from the first submit to the moment the last GPU was
  // released (a run that ends with jobs pending does not count the idle time after that).
  double horizon_start_s = 0;
  double horizon_end_s = 0;
  double makespan_s = 0;       // horizon_end_s - horizon_start_s
  double gpu_utilization = 0;  // busy GPU-seconds / (cluster GPUs x makespan); 0 if makespan 0
  double wait_p50_s = 0;
  double wait_p99_s = 0;
  double queued_p50_s = 0;
  double queued_p99_s = 0;
  double jct_mean_s = 0;
  // Figures over an empty set (no job started, none completed, no gang to judge) keep these
  // neutral values; the report prints them as "-" / null using the counts below.
  double locality_lowest_level = 0;
  int64_t locality_jobs = 0;      // started multi-node jobs whose locality was judged
  double comm_slowdown_mean = 1;  // over started multi-node jobs
  int64_t multi_node_jobs = 0;
  int64_t preemptions = 0;        // evictions decided by the policy
  int64_t shrinks = 0;
  int64_t grows = 0;
  int64_t interruptions = 0;  // gangs killed by node failures
  // Work lost at evictions and interruptions (EngineOptions::checkpoint_interval_s), in
  // GPU-hours: held and busy, so in gpu_utilization, but run again.
  double lost_gpu_hours = 0;
  // gpu_utilization less what was not work: checkpoint reloads and lost work. What a policy
  // that evicts more does not gain from its evictions.
  double goodput = 0;
  int64_t node_failures = 0;
  // The engine's own checks of every start and resize, whatever the policy believes:
  int64_t partial_gang_events = 0;  // pod count outside the gang's sizes
  // a node's GPUs or pods (kMaxPodsPerNode) over capacity, or a pod on a failed node
  int64_t overcommit_events = 0;
  // a block of groupSize consecutive ranks not inside one groupLevel domain (or a last block
  // shorter than groupSize)
  int64_t group_violation_events = 0;
  // ranks not all inside one domain of the job's required level
  int64_t required_level_violation_events = 0;
  int64_t invalid_actions = 0;  // e.g. starting a job that is not pending
  // Sum of the five counters above: any of them means a policy broke a rule.
  int64_t violations() const {
    return partial_gang_events + overcommit_events + group_violation_events +
           required_level_violation_events + invalid_actions;
  }
  int64_t cycles = 0;
  double wall_seconds = 0;
};

struct RunResult {
  Summary summary;
  std::vector<JobOutcome> outcomes;  // by job id (trace order)
  double busy_gpu_seconds = 0;       // integral of the engine's ledger
  // (time, GPUs in use) at every change of the ledger.
  std::vector<std::pair<double, int64_t>> usage;
  // The same per queue (index into the cluster spec's queues): the queue's GPUs in use after
  // each change, for the per-queue share chart.
  struct QueueUsage {
    double t = 0;
    int32_t queue = 0;
    int64_t gpus = 0;
  };
  std::vector<QueueUsage> queue_usage;
  std::vector<double> preemption_times;  // one entry per eviction, in time order
  std::vector<std::string> violations;  // the first few check failures, for debugging
  // The simulated time at which the run ended because the policy only repeated itself
  // (EngineOptions::stop_repeating); -1 if it did not.
  double stopped_repeating_at = -1;
};

class Engine {
 public:
  Engine(const ClusterModel& cluster, const std::vector<TraceJob>& jobs, EngineOptions options);
  absl::StatusOr<RunResult> Run(Policy& policy);

 private:
  const ClusterModel& cluster_;
  const std::vector<TraceJob>& jobs_;
  EngineOptions options_;
};

// Fills the summary statistics from outcomes (used by Engine::Run; exposed for tests).
void Summarize(const ClusterModel& cluster, RunResult& result);

// Nodes a gang of `pods` x `gpus_per_pod` needs when packed, on nodes of `node_gpus` GPUs.
int32_t NodesNeeded(int32_t pods, int32_t gpus_per_pod, int32_t node_gpus);

}  // namespace phalanx::sim
