#include "sim/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"
#include "sim/comm_model.h"
#include "sim/random.h"

namespace phalanx::sim {

int32_t NodesNeeded(int32_t pods, int32_t gpus_per_pod, int32_t node_gpus) {
  const int32_t per_node = std::max(1, PodsPerNode(gpus_per_pod, node_gpus));
  return (pods + per_node - 1) / per_node;
}

namespace {

// A job's work in pod-seconds: its pods for its duration.
double TotalWork(const TraceJob& spec) { return static_cast<double>(spec.pods) * spec.duration_s; }

// Job ids in increasing order; a sorted vector because cycles copy the whole set far more often
// than jobs change state, and arrivals append at the end.
class SortedIds {
 public:
  void insert(int32_t id) {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    if (it == ids_.end() || *it != id) ids_.insert(it, id);
  }
  void erase(int32_t id) {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    if (it != ids_.end() && *it == id) ids_.erase(it);
  }
  const std::vector<int32_t>& ids() const { return ids_; }

 private:
  std::vector<int32_t> ids_;
};

enum class EventType { kArrival, kCompletion, kNodeFailure, kNodeRepair, kCycle };

struct Event {
  double t = 0;
  int64_t seq = 0;
  EventType type = EventType::kCycle;
  int32_t subject = 0;  // job or node
  int64_t epoch = 0;    // completion events are stale once the job's epoch moved on
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

constexpr size_t kMaxViolations = 20;

class Simulation {
 public:
  Simulation(const ClusterModel& cluster, const std::vector<TraceJob>& jobs,
             const EngineOptions& options, Policy& policy)
      : cluster_(cluster),
        trace_(jobs),
        options_(options),
        policy_(policy),
        failure_rng_(options.seed ^ 0x6a09e667f3bcc909ULL) {}

  absl::StatusOr<RunResult> Go() {
    const auto wall_start = std::chrono::steady_clock::now();
    Setup();
    RETURN_IF_ERROR(policy_.Init(cluster_, jobs_));
    int64_t last_reported = -1;
    while (!events_.empty() && finished_ < static_cast<int32_t>(jobs_.size())) {
      Event event = events_.top();
      events_.pop();
      if (event.t > horizon_) {
        StopAtHorizon();
        result_.summary.ended_by = "safety_stop";
        break;
      }
      Advance(event.t);
      switch (event.type) {
        case EventType::kArrival:
          ++arrived_;
          SetState(event.subject, JobState::kPending);
          RequestCycle(now_);
          break;
        case EventType::kCompletion:
          if (event.epoch == epoch_[event.subject]) RETURN_IF_ERROR(Complete(event.subject));
          break;
        case EventType::kNodeFailure:
          RETURN_IF_ERROR(FailNode());
          break;
        case EventType::kNodeRepair:
          node_up_[event.subject] = 1;
          --nodes_down_;
          RETURN_IF_ERROR(policy_.NodeChanged(event.subject, true));
          RequestCycle(now_);
          break;
        case EventType::kCycle:
          // A request for an earlier grid point supersedes a pending later one, whose event
          // stays queued: run only the cycle still requested, or the copies multiply.
          if (event.t != next_cycle_) break;
          next_cycle_ = std::numeric_limits<double>::infinity();
          RETURN_IF_ERROR(DoCycle());
          break;
      }
      if (Stalled() || repeating_) break;
      if (options_.progress && finished_ / 100 != last_reported) {
        last_reported = finished_ / 100;
        options_.progress(static_cast<double>(finished_) / std::max<size_t>(jobs_.size(), 1));
      }
    }
    result_.summary.policy = policy_.name();
    for (const JobStatus& job : jobs_) {
      if (job.state == JobState::kPending && job.first_start_s < 0) {
        result_.outcomes[job.id].pending_reason = policy_.PendingReason(job.id);
      }
    }
    if (result_.summary.ended_by.empty()) {
      // Without the safety stop, the loop ends with every job finished or with nothing running
      // and nothing left to happen (Stalled, no events) or the policy repeating itself.
      result_.summary.ended_by = finished_ == static_cast<int32_t>(jobs_.size()) ? "completed"
                                 : repeating_                                    ? "livelock"
                                                                                 : "stalled";
    }
    result_.summary.horizon_start_s = first_submit_;
    result_.summary.horizon_end_s = std::max(first_submit_, last_busy_);
    result_.summary.makespan_s = result_.summary.horizon_end_s - first_submit_;
    result_.busy_gpu_seconds = busy_gpu_seconds_;
    Summarize(cluster_, result_);
    result_.summary.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return std::move(result_);
  }

 private:
  void Setup() {
    const size_t n = trace_.size();
    jobs_.resize(n);
    epoch_.assign(n, 0);
    pending_since_.assign(n, 0);
    work_left_.assign(n, 0);
    progress_from_.assign(n, 0);
    segment_from_.assign(n, 0);
    restart_pending_.assign(n, 0);
    result_.outcomes.resize(n);
    double last_submit = 0;
    first_submit_ = n == 0 ? 0 : std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < n; ++i) {
      const TraceJob& spec = trace_[i];
      JobStatus& job = jobs_[i];
      job.id = static_cast<int32_t>(i);
      job.spec = &spec;
      work_left_[i] = TotalWork(spec);
      JobOutcome& out = result_.outcomes[i];
      out.submit_s = spec.submit_s;
      out.pods = spec.pods;
      out.gpus_per_pod = spec.gpus_per_pod;
      out.nodes_needed = NodesNeeded(spec.pods, spec.gpus_per_pod, NodeGpusFor(spec));
      out.nodes_requested = out.nodes_needed;
      out.multi_node = out.nodes_needed > 1;
      out.unplaceable = !spec.unplaceable.empty();
      Push(spec.submit_s, EventType::kArrival, job.id);
      last_submit = std::max(last_submit, spec.submit_s);
      first_submit_ = std::min(first_submit_, spec.submit_s);
    }
    queue_of_.assign(n, -1);
    queue_used_.assign(cluster_.spec.queues.size(), 0);
    for (size_t i = 0; i < n; ++i) {
      for (size_t q = 0; q < cluster_.spec.queues.size(); ++q) {
        if (cluster_.spec.queues[q].name == trace_[i].queue) queue_of_[i] = static_cast<int32_t>(q);
      }
    }
    node_up_.assign(cluster_.nodes.size(), 1);
    used_.assign(cluster_.nodes.size(), 0);
    pods_.assign(cluster_.nodes.size(), 0);
    // Generous: a policy that leaves jobs pending forever must not loop forever on failures.
    horizon_ = last_submit + kSafetyStopSeconds;
    const FailureSpec& failures = cluster_.spec.failures;
    if (failures.node_mtbf_hours > 0 && !cluster_.nodes.empty()) ScheduleFailure();
    result_.usage.push_back({0.0, 0});
  }

  // Nothing can change any more: every job has arrived, none runs, every node is up, and the
  // last cycle, which came after the last change, did nothing and asked for no wakeup. Only
  // failures and repairs could follow, and they cannot make room that a whole healthy, idle
  // cluster lacks, so the run ends here rather than at the safety horizon.
  bool Stalled() const {
    return arrived_ == static_cast<int32_t>(jobs_.size()) && running_.ids().empty() &&
           nodes_down_ == 0 && last_cycle_idle_ && !std::isfinite(next_cycle_);
  }

  // The policy's livelock, proven: every job has arrived, none runs, every node is up and no
  // failures are modelled, so only the policy's own wakeups (first-fit's Permit timeouts) bring
  // cycles, and the policy is a function of its state and of times relative to now. If its
  // state (Policy::RestState) at this cycle equals its state at an earlier cycle with no start
  // in between, the same cycles repeat forever and no job starts again: the run ends here, with
  // the figures it would have at the safety horizon. Times must be whole seconds (they are
  // then exact, and so are differences between them); otherwise the check stays off.
  bool Repeating(const CycleView& view) {
    const bool rest = options_.stop_repeating && arrived_ == static_cast<int32_t>(jobs_.size()) &&
                      running_.ids().empty() && nodes_down_ == 0 &&
                      !(cluster_.spec.failures.node_mtbf_hours > 0) &&
                      now_ == std::floor(now_) && now_ < 0x1p52 &&
                      cluster_.spec.cycle_seconds == std::floor(cluster_.spec.cycle_seconds);
    if (!rest || starts_ != rest_starts_ || rest_states_.size() >= kMaxRestStates) {
      rest_states_.clear();
      rest_starts_ = starts_;
      if (!rest) return false;
    }
    std::optional<std::string> state = policy_.RestState(view);
    return state.has_value() && !rest_states_.insert(*std::move(state)).second;
  }

  int32_t NodeGpusFor(const TraceJob& spec) const {
    for (const NodeGroup& group : cluster_.groups) {
      if (spec.node_group.empty() || group.spec.name == spec.node_group) return group.type->gpus;
    }
    return 8;
  }

  // Keeps the pending and running sets (what a cycle looks at) in step with job states.
  void SetState(int32_t id, JobState state) {
    JobState& current = jobs_[id].state;
    // Queued time: every interval spent pending, the first wait and each one after a
    // preemption or failure.
    if (current == JobState::kPending && state != JobState::kPending) {
      result_.outcomes[id].queued_s += now_ - pending_since_[id];
    }
    if (state == JobState::kPending && current != JobState::kPending) pending_since_[id] = now_;
    if (current == JobState::kPending) pending_.erase(id);
    if (current == JobState::kRunning) running_.erase(id);
    current = state;
    if (state == JobState::kPending) pending_.insert(id);
    if (state == JobState::kRunning) running_.insert(id);
  }

  void Push(double t, EventType type, int32_t subject, int64_t epoch = 0) {
    events_.push(Event{t, seq_++, type, subject, epoch});
  }

  void ScheduleFailure() {
    const double mean_gap =
        cluster_.spec.failures.node_mtbf_hours * 3600 / static_cast<double>(cluster_.nodes.size());
    Push(now_ + failure_rng_.Exponential(mean_gap), EventType::kNodeFailure, 0);
  }

  // Cycles run on a grid of cluster.spec.cycle_seconds, at most one per grid point.
  void RequestCycle(double t) {
    const double step = cluster_.spec.cycle_seconds;
    const double at = std::ceil(t / step - 1e-9) * step;
    if (at >= next_cycle_) return;
    next_cycle_ = at;
    Push(at, EventType::kCycle, 0);
  }

  void Advance(double t) {
    if (t > now_) {
      busy_gpu_seconds_ += static_cast<double>(used_total_) * (t - now_);
      if (used_total_ > 0) last_busy_ = t;
      now_ = t;
    }
  }

  void Violation(int64_t& counter, std::string message) {
    ++counter;
    if (result_.violations.size() < kMaxViolations) {
      result_.violations.push_back(absl::StrFormat("t=%.0fs %s", now_, message));
    }
  }

  void RecordUsage() {
    if (!result_.usage.empty() && result_.usage.back().first == now_) {
      result_.usage.back().second = used_total_;
    } else {
      result_.usage.push_back({now_, used_total_});
    }
  }

  void RecordQueueUsage(int32_t id, int64_t delta) {
    const int32_t queue = queue_of_[id];
    if (queue < 0 || delta == 0) return;
    queue_used_[queue] += delta;
    auto& usage = result_.queue_usage;
    if (!usage.empty() && usage.back().t == now_ && usage.back().queue == queue) {
      usage.back().gpus = queue_used_[queue];
    } else {
      usage.push_back({now_, queue, queue_used_[queue]});
    }
  }

  // Charges (sign +1) or frees (-1) the job's pods on the ledger, checking capacity.
  void Charge(int32_t id, const std::vector<int32_t>& nodes, int sign) {
    const int32_t gpus = trace_[id].gpus_per_pod;
    RecordQueueUsage(id, int64_t{sign} * gpus * static_cast<int64_t>(nodes.size()));
    for (int32_t node : nodes) {
      used_[node] += sign * gpus;
      used_total_ += sign * gpus;
      pods_[node] += sign;
      if (sign > 0) {
        const int32_t capacity = cluster_.nodes[node].type->gpus;
        if (!node_up_[node]) {
          Violation(
              result_.summary.overcommit_events,
              absl::StrCat(trace_[id].name, " placed on failed node ", cluster_.nodes[node].name));
        } else if (used_[node] > capacity) {
          Violation(result_.summary.overcommit_events,
                    absl::StrCat(cluster_.nodes[node].name, " over-committed: ", used_[node],
                                 " of ", capacity, " GPUs after ", trace_[id].name));
        } else if (pods_[node] > kMaxPodsPerNode) {
          Violation(result_.summary.overcommit_events,
                    absl::StrCat(cluster_.nodes[node].name, " over-committed: ", pods_[node],
                                 " of ", kMaxPodsPerNode, " pods after ", trace_[id].name));
        }
      }
    }
    RecordUsage();
  }

  void CheckGang(int32_t id, size_t count) {
    const TraceJob& spec = trace_[id];
    const bool ok = spec.elastic() ? (count >= static_cast<size_t>(spec.elastic_min) &&
                                      count <= static_cast<size_t>(spec.elastic_max))
                                   : count == static_cast<size_t>(spec.pods);
    if (!ok) {
      Violation(result_.summary.partial_gang_events,
                absl::StrCat(spec.name, " running with ", count, " pods, gang needs ",
                             spec.min_pods(), spec.elastic() ? "+" : ""));
    }
  }

  // The domain of `level` (a label key) holding `node`: a domain index, the node itself as
  // -2 - node for the hostname level, or -1 if the node's group has no such level.
  int64_t DomainOf(int32_t node, const std::string& level) const {
    if (level == kHostnameLabel) return -2 - int64_t{node};
    const SimNode& n = cluster_.nodes[node];
    const int32_t l = cluster_.LevelIndex(n.group, level);
    return l < 0 ? -1 : n.domains[l];
  }

  // Whether ranks [begin, end) all lie inside one domain of `level`.
  bool InOneDomain(const std::vector<int32_t>& nodes, size_t begin, size_t end,
                   const std::string& level) const {
    const int64_t first = DomainOf(nodes[begin], level);
    if (first == -1) return false;
    for (size_t r = begin + 1; r < end; ++r) {
      if (DomainOf(nodes[r], level) != first) return false;
    }
    return true;
  }

  // The topology rules of the TrainingJob, checked on the ranks the policy chose: each block of
  // groupSize consecutive ranks inside one groupLevel domain (as the placement core defines
  // groups, scheduler/placement_types.h), every rank inside one domain of the required level.
  void CheckTopology(int32_t id, const std::vector<int32_t>& nodes) {
    const TraceJob& spec = trace_[id];
    if (spec.group_size > 0) {
      const size_t size = static_cast<size_t>(spec.group_size);
      for (size_t begin = 0; begin < nodes.size(); begin += size) {
        const size_t end = std::min(nodes.size(), begin + size);
        if (end - begin < size || !InOneDomain(nodes, begin, end, spec.group_level)) {
          Violation(result_.summary.group_violation_events,
                    absl::StrCat(spec.name, ": ranks ", begin, "-", end - 1, " of ", nodes.size(),
                                 " are not a group of ", spec.group_size, " inside one ",
                                 spec.group_level, " domain"));
          break;  // one event per decision
        }
      }
    }
    if (!spec.required_level.empty() && !InOneDomain(nodes, 0, nodes.size(), spec.required_level)) {
      Violation(result_.summary.required_level_violation_events,
                absl::StrCat(spec.name, ": ", nodes.size(), " ranks span more than one ",
                             spec.required_level, " domain (required)"));
    }
  }

  // The safety stop: the GPUs still held count as busy up to it, and the jobs holding them book
  // their GPU-seconds; they stay started and unfinished (Summary::jobs_unfinished).
  void StopAtHorizon() {
    Advance(horizon_);
    for (int32_t id : running_.ids()) {
      Settle(id);
      result_.outcomes[id].running_at_end = true;
    }
  }

  // Credits progress of a running job up to now and books its GPU-seconds.
  void Settle(int32_t id) {
    JobStatus& job = jobs_[id];
    const double count = static_cast<double>(job.nodes.size());
    const double elapsed = now_ - job.run_start_s;
    const double gpu_seconds = elapsed * count * trace_[id].gpus_per_pod;
    result_.outcomes[id].gpu_seconds += gpu_seconds;
    const double productive = std::max(0.0, now_ - progress_from_[id]);
    const double overhead = std::max(0.0, elapsed - productive);
    result_.outcomes[id].restart_gpu_seconds += overhead * count * trace_[id].gpus_per_pod;
    work_left_[id] = std::max(0.0, work_left_[id] - productive * count);
    job.run_start_s = now_;
    progress_from_[id] = std::max(progress_from_[id], now_);
  }

  void ScheduleCompletion(int32_t id) {
    const double count = static_cast<double>(jobs_[id].nodes.size());
    ++epoch_[id];
    Push(progress_from_[id] + work_left_[id] / count, EventType::kCompletion, id, epoch_[id]);
  }

  // Back to pending after a preemption or failure.
  void Stop(int32_t id) {
    Settle(id);
    // The work since its last checkpoint is lost (at the size it runs at now: an elastic
    // resize in between is not told apart).
    if (const double interval = options_.checkpoint_interval_s; interval > 0) {
      const double since = std::fmod(std::max(0.0, now_ - segment_from_[id]), interval);
      const double count = static_cast<double>(jobs_[id].nodes.size());
      const double lost = std::min(since * count, TotalWork(trace_[id]) - work_left_[id]);
      work_left_[id] += lost;
      result_.outcomes[id].lost_gpu_seconds += lost * trace_[id].gpus_per_pod;
    }
    JobStatus& job = jobs_[id];
    Charge(id, job.nodes, -1);
    job.nodes.clear();
    SetState(id, JobState::kPending);
    restart_pending_[id] = 1;
    ++epoch_[id];
  }

  absl::Status Complete(int32_t id) {
    Settle(id);
    JobStatus& job = jobs_[id];
    Charge(id, job.nodes, -1);
    job.nodes.clear();
    SetState(id, JobState::kDone);
    job.finish_s = now_;
    result_.outcomes[id].finish_s = now_;
    ++finished_;
    RETURN_IF_ERROR(policy_.JobFinished(id));
    RequestCycle(now_);
    return absl::OkStatus();
  }

  absl::Status FailNode() {
    // A uniformly chosen node that is up; failures stop once every job is done (loop exit).
    std::vector<int32_t> up;
    for (size_t i = 0; i < node_up_.size(); ++i) {
      if (node_up_[i]) up.push_back(static_cast<int32_t>(i));
    }
    ScheduleFailure();
    if (up.empty()) return absl::OkStatus();
    const int32_t node = up[failure_rng_.UniformInt(0, static_cast<int64_t>(up.size()) - 1)];
    ++result_.summary.node_failures;
    const std::vector<int32_t> running = running_.ids();
    for (int32_t id : running) {
      JobStatus& job = jobs_[id];
      if (std::find(job.nodes.begin(), job.nodes.end(), node) == job.nodes.end()) continue;
      Stop(job.id);
      ++job.interruptions;
      ++result_.outcomes[job.id].interruptions;
      ++result_.summary.interruptions;
      RETURN_IF_ERROR(policy_.JobInterrupted(job.id));
    }
    node_up_[node] = 0;
    ++nodes_down_;
    RETURN_IF_ERROR(policy_.NodeChanged(node, false));
    Push(now_ + cluster_.spec.failures.repair_hours * 3600, EventType::kNodeRepair, node);
    RequestCycle(now_);
    return absl::OkStatus();
  }

  bool ValidNodes(const Action& action) {
    for (int32_t node : action.nodes) {
      if (node < 0 || node >= static_cast<int32_t>(cluster_.nodes.size())) {
        Violation(result_.summary.invalid_actions,
                  absl::StrCat(trace_[action.job].name, ": node index ", node, " out of range"));
        return false;
      }
    }
    return true;
  }

  // The tightest domain holding every rank, as (level label key, domain value).
  std::pair<std::string, std::string> TightestDomain(const std::vector<int32_t>& nodes) const {
    const SimNode& first = cluster_.nodes[nodes[0]];
    if (std::all_of(nodes.begin(), nodes.end(), [&](int32_t n) { return n == nodes[0]; })) {
      return {std::string(kHostnameLabel), first.name};
    }
    const NodeGroup& group = cluster_.groups[first.group];
    for (int32_t l = static_cast<int32_t>(group.levels.size()) - 1; l >= 0; --l) {
      const bool shared = std::all_of(nodes.begin(), nodes.end(), [&](int32_t n) {
        return cluster_.nodes[n].group == first.group &&
               cluster_.nodes[n].domains[l] == first.domains[l];
      });
      if (shared) return {group.levels[l], cluster_.domains[first.domains[l]].value};
    }
    return {"", "cluster"};
  }

  void FirstPlacement(int32_t id) {
    JobOutcome& out = result_.outcomes[id];
    const std::vector<int32_t>& nodes = jobs_[id].nodes;
    out.first_pods = static_cast<int32_t>(nodes.size());
    std::vector<int32_t> distinct = nodes;
    std::sort(distinct.begin(), distinct.end());
    out.first_nodes = static_cast<int32_t>(
        std::unique(distinct.begin(), distinct.end()) - distinct.begin());
    std::tie(out.placed_level, out.placed_domain) = TightestDomain(nodes);
    out.comm_slowdown = CommSlowdown(cluster_, nodes, trace_[id].gpus_per_pod);
    // Judge the gang that was placed: an elastic job may start below its maximum.
    out.nodes_needed = NodesNeeded(static_cast<int32_t>(nodes.size()), trace_[id].gpus_per_pod,
                                   cluster_.nodes[nodes[0]].type->gpus);
    out.multi_node = out.nodes_needed > 1;
    if (!out.multi_node) return;
    // The lowest level whose domains are big enough for the gang.
    const SimNode& first = cluster_.nodes[nodes[0]];
    const NodeGroup& group = cluster_.groups[first.group];
    for (int32_t l = static_cast<int32_t>(group.levels.size()) - 1; l >= 0; --l) {
      const Domain& domain = cluster_.domains[first.domains[l]];
      if (domain.size() < out.nodes_needed) continue;
      out.locality_applicable = true;
      out.locality_ok = std::all_of(nodes.begin(), nodes.end(), [&](int32_t n) {
        const SimNode& node = cluster_.nodes[n];
        return node.group == first.group && node.domains[l] == first.domains[l];
      });
      return;
    }
  }

  absl::Status Apply(const Action& action) {
    if (action.job < 0 || action.job >= static_cast<int32_t>(jobs_.size())) {
      Violation(result_.summary.invalid_actions, absl::StrCat("unknown job ", action.job));
      return absl::OkStatus();
    }
    const int32_t id = action.job;
    JobStatus& job = jobs_[id];
    switch (action.kind) {
      case Action::Kind::kStart: {
        if (job.state != JobState::kPending || action.nodes.empty() || !ValidNodes(action)) {
          Violation(result_.summary.invalid_actions,
                    absl::StrCat("start of ", trace_[id].name, " which is not pending"));
          return absl::OkStatus();
        }
        CheckGang(id, action.nodes.size());
        CheckTopology(id, action.nodes);
        ++starts_;
        if (job.first_start_s >= 0) ++result_.outcomes[id].restarts;
        job.nodes = action.nodes;
        SetState(id, JobState::kRunning);
        job.run_start_s = now_;
        progress_from_[id] = now_ + (restart_pending_[id] ? options_.restart_overhead_s : 0);
        segment_from_[id] = progress_from_[id];
        restart_pending_[id] = 0;
        Charge(id, job.nodes, +1);
        if (job.first_start_s < 0) {
          job.first_start_s = now_;
          result_.outcomes[id].first_start_s = now_;
          FirstPlacement(id);
        }
        ScheduleCompletion(id);
        return absl::OkStatus();
      }
      case Action::Kind::kResize: {
        if (job.state != JobState::kRunning || action.nodes.empty() || !ValidNodes(action)) {
          Violation(result_.summary.invalid_actions,
                    absl::StrCat("resize of ", trace_[id].name, " which is not running"));
          return absl::OkStatus();
        }
        CheckGang(id, action.nodes.size());
        CheckTopology(id, action.nodes);
        Settle(id);
        if (action.nodes.size() > job.nodes.size()) ++result_.summary.grows;
        if (action.nodes.size() < job.nodes.size()) ++result_.summary.shrinks;
        Charge(id, job.nodes, -1);
        job.nodes = action.nodes;
        Charge(id, job.nodes, +1);
        ScheduleCompletion(id);
        return absl::OkStatus();
      }
      case Action::Kind::kEvict: {
        if (job.state != JobState::kRunning) {
          Violation(result_.summary.invalid_actions,
                    absl::StrCat("eviction of ", trace_[id].name, " which is not running"));
          return absl::OkStatus();
        }
        Stop(id);
        result_.preemption_times.push_back(now_);
        ++job.preemptions;
        ++result_.outcomes[id].preemptions;
        ++result_.summary.preemptions;
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  absl::Status DoCycle() {
    ++result_.summary.cycles;
    CycleView view;
    view.now = now_;
    view.jobs = &jobs_;
    view.node_up = &node_up_;
    view.pending = pending_.ids();
    view.running = running_.ids();
    if (Repeating(view)) {
      repeating_ = true;
      result_.stopped_repeating_at = now_;
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::vector<Action> actions, policy_.Cycle(view));
    for (const Action& action : actions) RETURN_IF_ERROR(Apply(action));
    const double wakeup = policy_.NextWakeup();
    if (std::isfinite(wakeup)) RequestCycle(std::max(wakeup, now_ + 1e-6));
    last_cycle_idle_ = actions.empty() && !std::isfinite(wakeup);
    return absl::OkStatus();
  }

  const ClusterModel& cluster_;
  const std::vector<TraceJob>& trace_;
  const EngineOptions& options_;
  Policy& policy_;
  Rng failure_rng_;

  std::vector<JobStatus> jobs_;
  SortedIds pending_;
  SortedIds running_;
  std::vector<int64_t> epoch_;
  std::vector<double> pending_since_;  // when each job last became pending
  std::vector<double> work_left_;      // pod-seconds
  std::vector<double> progress_from_;  // progress resumes here (after restart overhead)
  std::vector<double> segment_from_;   // productive run time since the last (re)start, from here
  std::vector<char> restart_pending_;
  std::vector<char> node_up_;
  std::vector<int64_t> used_;
  std::vector<int32_t> pods_;  // pods per node, whatever their GPUs
  std::vector<int32_t> queue_of_;     // job -> index of its queue in the spec, -1 if unknown
  std::vector<int64_t> queue_used_;   // GPUs in use per queue
  int64_t used_total_ = 0;
  double busy_gpu_seconds_ = 0;
  double now_ = 0;
  double horizon_ = 0;  // safety stop for a policy that never stalls cleanly
  // Repeating(): the policy states seen since the cluster came to rest, and starts_ then.
  static constexpr size_t kMaxRestStates = 4096;
  absl::flat_hash_set<std::string> rest_states_;
  int64_t starts_ = 0;
  int64_t rest_starts_ = -1;
  bool repeating_ = false;
  double first_submit_ = 0;
  double last_busy_ = 0;  // the last moment any GPU was in use
  int32_t arrived_ = 0;
  int32_t nodes_down_ = 0;
  bool last_cycle_idle_ = false;
  double next_cycle_ = std::numeric_limits<double>::infinity();
  int64_t seq_ = 0;
  int32_t finished_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  RunResult result_;
};

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest-rank percentile: deterministic and always an observed value.
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

Engine::Engine(const ClusterModel& cluster, const std::vector<TraceJob>& jobs,
               EngineOptions options)
    : cluster_(cluster), jobs_(jobs), options_(std::move(options)) {}

absl::StatusOr<RunResult> Engine::Run(Policy& policy) {
  Simulation simulation(cluster_, jobs_, options_, policy);
  return simulation.Go();
}

void Summarize(const ClusterModel& cluster, RunResult& result) {
  Summary& s = result.summary;
  s.jobs = static_cast<int32_t>(result.outcomes.size());
  std::vector<double> waits, queued;
  double jct_sum = 0;
  int64_t applicable = 0, local = 0, multi = 0, completed_measured = 0;
  double slowdown_sum = 0;
  s.jobs_completed = 0;
  s.jobs_never_started = 0;
  s.jobs_unfinished = 0;
  s.jobs_running_at_end = 0;
  s.jobs_unplaceable = 0;
  for (const JobOutcome& out : result.outcomes) {
    if (out.first_start_s < 0) ++s.jobs_never_started;
    if (out.first_start_s >= 0 && out.finish_s < 0) ++s.jobs_unfinished;
    if (out.running_at_end) ++s.jobs_running_at_end;
    if (out.finish_s >= 0) ++s.jobs_completed;
    if (out.unplaceable) {
      // Whatever happened to it, it says nothing about how the policy serves placeable jobs.
      ++s.jobs_unplaceable;
      continue;
    }
    // Only jobs that started have a wait, a placement and (if they finished) a JCT.
    if (out.first_start_s >= 0) waits.push_back(out.first_start_s - out.submit_s);
    if (out.finish_s >= 0) {
      queued.push_back(out.queued_s);
      ++completed_measured;
      jct_sum += out.finish_s - out.submit_s;
    }
    if (out.first_start_s >= 0 && out.multi_node) {
      ++multi;
      slowdown_sum += out.comm_slowdown;
      if (out.locality_applicable) {
        ++applicable;
        local += out.locality_ok ? 1 : 0;
      }
    }
  }
  s.jobs_started = static_cast<int32_t>(waits.size());
  s.locality_jobs = applicable;
  s.multi_node_jobs = multi;
  s.wait_p50_s = Percentile(waits, 50);
  s.wait_p99_s = Percentile(waits, 99);
  s.queued_p50_s = Percentile(queued, 50);
  s.queued_p99_s = Percentile(queued, 99);
  s.jobs_measured_completed = static_cast<int32_t>(completed_measured);
  s.jct_mean_s = completed_measured > 0 ? jct_sum / completed_measured : 0;
  s.locality_lowest_level = applicable > 0 ? static_cast<double>(local) / applicable : 1.0;
  s.comm_slowdown_mean = multi > 0 ? slowdown_sum / multi : 1.0;
  const double capacity = static_cast<double>(cluster.total_gpus) * s.makespan_s;
  s.gpu_utilization = capacity > 0 ? result.busy_gpu_seconds / capacity : 0;
  s.lost_gpu_hours = 0;
  double not_work = 0;
  for (const JobOutcome& o : result.outcomes) {
    s.lost_gpu_hours += o.lost_gpu_seconds / 3600;
    not_work += o.lost_gpu_seconds + o.restart_gpu_seconds;
  }
  s.goodput = capacity > 0 ? (result.busy_gpu_seconds - not_work) / capacity : 0;
}

}  // namespace phalanx::sim
