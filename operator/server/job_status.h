// TrainingJob status as the operator writes it: metav1.Conditions and the server-side-apply
// bodies of the two controllers. Pure: the callers pass `now`.
//
// Two field managers share status (docs/operator.md "Who writes what"):
//   * phalanx-operator-admission (the admission controller) owns status.admission,
//     status.placement and the conditions Queued, Admitted, Evicted, NodesReplaced and Shrunk;
//   * phalanx-operator (the job controller) owns status.phase, restarts, startTime,
//     completionTime and the conditions Running, Restarting, Resizing, Succeeded and Failed.
// Under server-side apply a manager's apply replaces everything it owns, so each body carries
// all of its manager's fields: leaving status.admission out of an admission apply removes it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "kube/event_recorder.h"
#include "kube/api/training_job.h"
#include "scheduler/placement_types.h"

namespace phalanx::operator_server {

inline constexpr std::string_view kAdmissionFieldManager = "phalanx-operator-admission";
inline constexpr std::string_view kJobFieldManager = "phalanx-operator";
// Owns status.requeueState, and spec.suspend when the requeuing limit suspends a job: apart
// from the admission manager, whose every status write would otherwise have to carry it.
inline constexpr std::string_view kRequeueFieldManager = "phalanx-operator-requeue";
// Held by every TrainingJob the operator has seen, so a deleted job's reservation is released
// and its pods deleted before the object goes.
inline constexpr std::string_view kReservationFinalizer = "phalanx.dev/reservation";

// Evicted because the gang did not have every rank running in time (Kueue's reason too).
inline constexpr std::string_view kReasonPodsReadyTimeout = "PodsReadyTimeout";

inline constexpr std::string_view kConditionQueued = "Queued";
inline constexpr std::string_view kConditionAdmitted = "Admitted";
inline constexpr std::string_view kConditionEvicted = "Evicted";
inline constexpr std::string_view kConditionRunning = "Running";
inline constexpr std::string_view kConditionRestarting = "Restarting";
inline constexpr std::string_view kConditionResizing = "Resizing";
inline constexpr std::string_view kConditionSucceeded = "Succeeded";
inline constexpr std::string_view kConditionFailed = "Failed";

struct Condition {
  std::string type;
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;  // RFC 3339
  // metadata.generation of the object when the condition was last set (0: not written, as by
  // operators before 2026-11-30).
  int64_t observed_generation = 0;
  bool operator==(const Condition&) const = default;
};

// The job as the subject of an Event.
kube::ObjectReference JobReference(const kube::ObjectMeta& job);

// metav1.Time: RFC 3339 in UTC with seconds ("2026-11-23T19:00:00Z").
std::string Rfc3339(absl::Time t);
// 0 for an empty or malformed time.
int64_t ParseUnixSeconds(std::string_view rfc3339);

// status.conditions of an object given as JSON; empty when absent or malformed.
std::vector<Condition> ReadConditions(std::string_view object_json);
// A string in status (e.g. "startTime"); "" when absent.
std::string ReadStatusString(std::string_view object_json, std::string_view key);
// What can still be read of a TrainingJob the decoder refuses (a field out of range, a template
// that is not a pod): its spec.queueName, whether status.admission is set, and status.phase.
struct UnreadableJob {
  std::string queue_name;
  bool admitted = false;
  std::string phase;
};
UnreadableJob ReadUnreadableJob(std::string_view object_json);
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);
// Unix seconds since which a pending job has waited: the lastTransitionTime of its Queued=True
// condition (set when it was first queued, or queued again after an eviction), never before its
// creation; its creation before any Queued condition is written; `now` when its Queued condition
// is not True yet (a job resumed from suspension starts waiting now).
int64_t QueuedSince(const std::vector<Condition>& conditions, std::string_view creation_timestamp,
                    int64_t now);

// Unix seconds since which a job has been admitted: the lastTransitionTime of its Admitted=True
// condition (it stays True through restarts, node replacements and resizes, and turns False on
// an eviction or a suspension); 0 when the job is not admitted or the time is missing.
int64_t AdmittedSince(const std::vector<Condition>& conditions);
// AdmittedSince as a time for kube::ActiveDeadline; nullopt when AdmittedSince is 0.
std::optional<absl::Time> AdmittedAt(const std::vector<Condition>& conditions);

// Kueue's waitForPodsReady with its requeuingStrategy (phalanx-operator
// --pods-ready-timeout-seconds and --requeuing-backoff-*; docs/operator.md "Pods ready").
struct PodsReadyPolicy {
  int64_t timeout_seconds = 0;  // 0 = off
  int64_t backoff_base_seconds = 60;
  int64_t backoff_max_seconds = 3600;
  int32_t backoff_limit_count = -1;  // requeues before the job is suspended; -1 = no limit
};
// Unix seconds since which an admitted job's gang has lacked a running rank: the later of its
// admission (AdmittedSince), the last time its Running condition turned False (a restart, a
// rank lost) and a shrink to the ranks that ran (Shrunk=True, reason PodsReadyTimeout). While
// its Running condition is True: since it started resizing (Resizing=True), when the new ranks
// of an elastic growth must come up too (a shrink's resize has every rank below its new size
// running, which the caller checks); otherwise 0, as when it is not admitted.
int64_t NotRunningSince(const std::vector<Condition>& conditions);
// How long the `count`-th requeue (1, 2, ...) waits: base * 2^(count-1) seconds, at most max.
int64_t RequeueDelaySeconds(const PodsReadyPolicy& policy, int32_t count);

// Updates that turn each condition of `types` that is True in `current` to False with `reason`
// and the message "Previously: <its message>", as Kueue does to Evicted and Preempted when a
// workload reserves quota again: a condition about an earlier admission must not read as one
// about the current one. Conditions that are absent or not True give no update.
std::vector<Condition> Deactivate(const std::vector<Condition>& current,
                                  const std::vector<std::string_view>& types,
                                  std::string_view reason);

// The conditions of one manager after an update: every condition of `owned` types in `current`,
// with `updates` set over them. A condition whose status does not change keeps its
// lastTransitionTime; one that does gets `now`. Each update gets observedGeneration
// `generation`, the object's metadata.generation it was decided from (as apimachinery's
// SetStatusCondition, and Kueue, set it); the conditions it leaves keep theirs. Ordered as
// `owned`.
std::vector<Condition> MergeConditions(const std::vector<Condition>& current,
                                       const std::vector<std::string_view>& owned,
                                       const std::vector<Condition>& updates,
                                       std::string_view now, int64_t generation);
// True if `current` already holds every condition in `wanted` (type, status, reason, message,
// observedGeneration) and nothing else of the `owned` types.
bool SameConditions(const std::vector<Condition>& current,
                    const std::vector<std::string_view>& owned,
                    const std::vector<Condition>& wanted);

// What the admission controller owns.
struct AdmissionStatus {
  std::optional<kube::TrainingJobAdmission> admission;
  std::optional<kube::TrainingJobPlacement> placement;
  std::vector<Condition> conditions;  // Queued, Admitted, Evicted
};
std::string AdmissionStatusApply(const kube::ObjectMeta& job, const AdmissionStatus& status);
// The requeue manager's status apply: status.requeueState, or nothing (which clears it).
std::string RequeueStateApply(const kube::ObjectMeta& job,
                              const std::optional<kube::TrainingJobRequeueState>& state);
// The requeue manager's apply of spec.suspend: true (the requeuing limit was reached).
std::string SuspendApply(const kube::ObjectMeta& job);
// status.placement of a gang placed at `placement`: the tightest domain's label value ("cluster"
// for the whole cluster), its level, the node of each rank.
kube::TrainingJobPlacement PlacementStatus(const placement::Placement& placement);

// Whether a gang that ran is changing size: ranks above the admitted size are stopping (a
// shrink), or an elastic gang lacks only ranks above every rank it has (a growth). A rank missing
// below another one is being re-created after a node replacement or a failure: not a resize.
// `present`: the ranks below the admitted size that have a live pod, ascending.
bool GangResizing(bool elastic, int32_t world, const std::vector<int>& present, int beyond);

// What the job controller owns.
struct LifecycleStatus {
  std::string phase;
  int32_t restarts = 0;
  int32_t node_fault_restarts = 0;  // written once above 0 (it never goes down)
  int32_t ignored_restarts = 0;     // the same
  std::string start_time;       // "" = unset
  std::string completion_time;  // "" = unset
  std::vector<Condition> conditions;  // Running, Restarting, Resizing, Succeeded, Failed
  bool operator==(const LifecycleStatus&) const = default;
};
std::string LifecycleStatusApply(const kube::ObjectMeta& job, const LifecycleStatus& status);

// metadata.finalizers as one field manager's apply on an object of `resource` (its kind set):
// with `finalizer`, or without it (which removes it when this manager added it). The object's
// uid is a precondition, so a successor of the same name is never touched.
std::string FinalizerApply(const kube::Resource& resource, const kube::ObjectMeta& meta,
                           std::string_view finalizer, bool with_finalizer);

}  // namespace phalanx::operator_server
