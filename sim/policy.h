// The interface between the simulator's engine and a scheduling policy under test: Phalanx's
// real admission + placement cores (sim/phalanx_policy.h) or a baseline (sim/baselines.h).
//
//   class MyPolicy : public Policy { ... };
//   Engine engine(cluster, jobs, options);
//   ASSIGN_OR_RETURN(RunResult result, engine.Run(policy));
//
// The engine owns the clock, the jobs' lifecycle and the ground truth of which GPUs are in use;
// a policy only decides. The engine applies decisions in order and checks them independently
// (gang sizes, node capacity), so a buggy policy shows up as partial-gang or over-commit events
// instead of silently corrupting the metrics.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/cluster.h"
#include "sim/trace.h"

namespace phalanx::sim {

enum class JobState { kNotSubmitted, kPending, kRunning, kDone };

// The engine's record of one job; policies read it, only the engine writes it.
struct JobStatus {
  int32_t id = 0;
  const TraceJob* spec = nullptr;
  JobState state = JobState::kNotSubmitted;
  std::vector<int32_t> nodes;  // rank -> node index while running
  double first_start_s = -1;
  double run_start_s = 0;  // start of the current run (after the last start/resize)
  double finish_s = -1;
  int32_t preemptions = 0;
  int32_t interruptions = 0;  // node failures
};

struct CycleView {
  double now = 0;
  const std::vector<JobStatus>* jobs = nullptr;
  std::vector<int32_t> pending;  // job ids in submit order
  std::vector<int32_t> running;  // job ids in start order
  const std::vector<char>* node_up = nullptr;
};

struct Action {
  enum class Kind { kStart, kResize, kEvict };
  Kind kind = Kind::kStart;
  int32_t job = 0;
  std::vector<int32_t> nodes;  // kStart / kResize: the complete rank -> node list afterwards
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Called once before the first cycle.
  virtual absl::Status Init(const ClusterModel& cluster, const std::vector<JobStatus>& jobs) = 0;
  // One scheduling cycle at view.now. The returned actions are applied in order.
  virtual absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) = 0;
  // Events the policy did not decide: a job finished, or a node failure killed its gang. The
  // policy must drop whatever it holds for the job.
  virtual absl::Status JobFinished(int32_t job) = 0;
  virtual absl::Status JobInterrupted(int32_t job) = 0;
  virtual absl::Status NodeChanged(int32_t node, bool up) = 0;
  // Why `job`, pending, has not started, in the policy's words, or "" if it keeps no reason.
  // The engine asks at the end of a run for each job that never started (--jobs-out's
  // pending_reason).
  virtual std::string PendingReason(int32_t job) const {
    (void)job;
    return "";
  }
  // A time at which the policy wants a cycle even if nothing else happens (a timeout).
  virtual double NextWakeup() const { return std::numeric_limits<double>::infinity(); }
  // Asked at the start of a cycle in which no job runs, every job has arrived and every node
  // is up: everything the policy's decisions from here on depend on, as bytes, with times
  // relative to view.now (pending jobs, what it holds, its timers). Two equal answers with no
  // start between them tell the engine the policy only repeats itself and will never start a
  // job again (a livelock), so the run can end. nullopt: the policy cannot tell.
  virtual std::optional<std::string> RestState(const CycleView& view) const {
    (void)view;
    return std::nullopt;
  }
};

}  // namespace phalanx::sim
