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
// interrupted jobs keep their progress (checkpointing) but pay `restart_overhead_s` on restart.
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
  // Called now and then with the fraction of jobs finished, for progress bars.
  std::function<void(double)> progress;
};

// What happened to one job.
struct JobOutcome {
  double submit_s = 0;
  double first_start_s = -1;  // -1 = never started
  double finish_s = -1;       // -1 = not finished
  int32_t pods = 0;
  int32_t gpus_per_pod = 0;
  int32_t nodes_needed = 0;  // nodes the gang needs when packed (as first placed)
  bool multi_node = false;
  // Locality of the first placement (multi-node jobs whose lowest holding level exists).
  bool locality_applicable = false;
  bool locality_ok = false;
  double comm_slowdown = 1.0;  // of the first placement
  int32_t preemptions = 0;
  int32_t interruptions = 0;
  double gpu_seconds = 0;  // GPU-seconds allocated to the job, restart overhead included
  double restart_gpu_seconds = 0;
};

struct Summary {
  std::string policy;
  int32_t jobs = 0;
  int32_t jobs_started = 0;
  int32_t jobs_completed = 0;
  // Never started by the end of the run: left out of every per-job figure below, and reported.
  int32_t jobs_never_started = 0;
  double makespan_s = 0;
  double gpu_utilization = 0;  // busy GPU-seconds / (cluster GPUs x makespan)
  double wait_p50_s = 0;
  double wait_p99_s = 0;
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
  int64_t node_failures = 0;
  int64_t partial_gang_events = 0;
  int64_t overcommit_events = 0;
  int64_t invalid_actions = 0;  // e.g. starting a job that is not pending
  int64_t cycles = 0;
  double wall_seconds = 0;
};

struct RunResult {
  Summary summary;
  std::vector<JobOutcome> outcomes;  // by job id (trace order)
  double busy_gpu_seconds = 0;       // integral of the engine's ledger
  // (time, GPUs in use) at every change of the ledger.
  std::vector<std::pair<double, int64_t>> usage;
  std::vector<std::string> violations;  // the first few check failures, for debugging
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
