// The admission loop of phalanx-operator: builds the admission core's Snapshot from the
// informers, runs one admission cycle against phalanx-scheduler's Placement service (one
// ReserveBatch per pass), and only after the reservations succeeded writes each decision to the
// API server: status.admission and status.placement for admissions and resizes, their removal
// for evictions and suspensions, the Queued condition (with the core's actionable reason) for
// every job left waiting, and ClusterQueue / LocalQueue status.
//
//   AdmissionController admission(client, informers, placement, events, metrics, options);
//   informers.jobs.AddEventHandlers(admission.JobHandlers());   // ... and the others
//   std::thread t([&] { admission.Run(lost_leadership); });
//
// Cycles are event-driven: any change that can change a decision (a job created, deleted,
// finished or edited; a pod finishing or deleted; a node, queue, flavor, namespace or priority
// class changing) triggers one, and events arriving during a cycle fold into the next. The
// timed cycles are at CycleResult::requeue_at, when a locality wait ends, and when a NotReady
// node's grace period ends. Each cycle first answers node failures under admitted gangs
// (NodeFaultResponder: replace the nodes, shrink, or evict) and writes the new placement.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/workqueue.h"
#include "kube/write_gate.h"
#include "operator/admission/admission_cycle.h"
#include "operator/server/informers.h"
#include "operator/server/job_status.h"
#include "operator/server/namespace_quota.h"
#include "operator/server/node_faults.h"
#include "operator/server/operator_metrics.h"
#include "operator/server/status_overlay.h"
#include "scheduler/placement_service.h"

namespace phalanx::operator_server {

struct AdmissionControllerOptions {
  absl::Duration min_cycle_interval = absl::Milliseconds(200);
  // Status writes of one cycle in flight at once (--admission-write-concurrency).
  int write_concurrency = 32;
  // Held while a cycle writes its admissions, so that the writers that yield to it (the job
  // controller's workers, the Event writers) let those writes reach the API server first
  // (--admission-writes-first-ms). Null: nobody yields.
  kube::WriteGate* write_gate = nullptr;
  admission::CycleOptions cycle;
  // Kueue's fairSharing configuration (enable + preemption strategies).
  admission::FairSharingConfig fair_sharing;
  // Node failures under admitted gangs: replace, shrink or evict (docs/operator.md "Faults").
  NodeFaultOptions faults;
  // --allow-job-priority: honour spec.priority (WorkloadFromJob).
  bool allow_job_priority = false;
  // Kueue's waitForPodsReady (--pods-ready-timeout-seconds, --requeuing-backoff-*).
  PodsReadyPolicy pods_ready;
  // Each TrainingQueue's status lists its first this many pending jobs with their positions
  // (--queue-status-pending-jobs; 0 = none).
  int queue_status_pending_jobs = 10;
};

// What one cycle did, for logs and tests.
struct CycleStats {
  int workloads = 0;
  int admitted = 0;
  int evicted = 0;
  int resized = 0;
  int pending = 0;
  int released = 0;  // suspended or orphaned reservations released
  int write_errors = 0;
  int node_faults = 0;  // jobs whose failed nodes were replaced, or that shrank or were evicted
  admission::PlacementCalls calls;
};

class AdmissionController {
 public:
  AdmissionController(kube::Client& client, Informers& informers,
                      placement::PlacementService& placement, kube::EventRecorder& events,
                      OperatorMetrics& metrics, AdmissionControllerOptions options = {});

  // Registers the event handlers that trigger cycles; call before the informers start.
  void RegisterHandlers();

  // Asks for a cycle soon.
  void Trigger();

  // Releases reservations the scheduler may hold for jobs whose status says they hold none (a
  // predecessor that crashed between ReserveBatch and its status write), then runs cycles until
  // `stop` fires.
  void Run(const kube::Cancellation& stop);

  // One cycle, now. Public for tests and benchmarks.
  CycleStats RunCycle();

 private:
  void ReleaseOrphans();
  void ReportObjectErrors(const std::vector<admission::ObjectError>& errors);
  // Lays the pods of `jobs` (the cycle's, with in-flight admissions) over their namespaces'
  // quotas' use (namespace_quota.h ChargeJobPods) and gives the core each quota's room as a
  // budget, which the gangs it admits in the cycle take from.
  void ChargeNamespaceQuotas(
      const std::map<std::string, kube::TrainingJob>& jobs,
      std::map<std::string, std::vector<NamespaceQuota>>& quotas_by_namespace,
      std::string_view global_default, admission::Snapshot& snapshot) const;
  // Writes what the fault responder did to `job` and lays it over `job`'s status for the rest
  // of the cycle. False if the job leaves this cycle (evicted: it is admitted again in a later
  // one, after its pods are gone).
  // Kueue's waitForPodsReady: evicts `job` if its gang has lacked a running rank since
  // `not_running_since` for the timeout, and requeues it with a backoff (or suspends it at the
  // limit). Returns whether it was evicted; otherwise lowers `next_check` to when it would be.
  bool EvictIfNotReady(const kube::RawObject& raw, kube::TrainingJob& job,
                       int64_t not_running_since, absl::Time now, CycleStats& stats,
                       std::optional<absl::Time>& next_check);
  bool ApplyFault(const kube::RawObject& raw, kube::TrainingJob& job, const FaultDecision& fault,
                  const std::string& now, CycleStats& stats);
  void WriteQueueStatuses(const admission::Snapshot& snapshot,
                          const std::vector<admission::PendingDecision>& pending,
                          const std::string& now);
  // Holds the resource-in-use finalizer on every ClusterTrainingQueue and NodeFlavor, and lets a
  // deleted one go once nothing in `snapshot` (after the cycle's decisions) uses it.
  void ReconcileFinalizers(const admission::Snapshot& snapshot);
  bool ApplyJobStatus(const kube::RawObject& job, const std::string& body);
  // The requeue manager's writes: status.requeueState (nullopt clears it), spec.suspend: true.
  bool ApplyRequeueState(const kube::RawObject& job,
                         const std::optional<kube::TrainingJobRequeueState>& state);
  bool ApplySuspend(const kube::RawObject& job);
  // A job's status write, and the Event to record once it has landed.
  struct StatusWrite {
    const kube::RawObject* object = nullptr;
    const kube::ObjectMeta* meta = nullptr;
    AdmissionStatus status;
    std::optional<kube::EventType> event;  // none: no Event
    std::string reason;
    std::string message;
    bool ok = false;  // set by WriteStatuses
  };
  // Applies every status write_concurrency at a time (each is a round trip to the API server;
  // one after the other, 1,000 admissions took 30-70 s on the local control plane), records
  // the Event of each that landed, and sets its `ok`.
  void WriteStatuses(std::vector<StatusWrite>& writes);

  kube::Client& client_;
  Informers& informers_;
  placement::PlacementService& placement_;
  kube::EventRecorder& events_;
  OperatorMetrics& metrics_;
  const AdmissionControllerOptions options_;
  kube::WorkQueue queue_;
  admission::CycleCache cache_;
  NodeFaultResponder faults_;
  // Admission writes the informer has not shown yet (status_overlay.h).
  StatusOverlay in_flight_;
  // Every TrainingJob as the last cycle decoded it, by key, with the informer object it came
  // from: a cycle decodes only the jobs whose object changed since (informer objects are
  // immutable; a new version is a new object). Decoding all of them in every cycle was 20 % of
  // the operator's CPU in a 200-node bench (docs/benchmarks.md). Only RunCycle touches it.
  struct DecodedJob {
    std::shared_ptr<const kube::RawObject> raw;
    absl::StatusOr<kube::TrainingJob> job;
    // Unix seconds of the lastTransitionTime of its Admitted=True condition; 0 without one.
    int64_t admitted_since = 0;
    // NotRunningSince of its conditions: 0 unless admitted and without every rank running.
    int64_t not_running_since = 0;
    // Shrunk=True with reason PodsReadyTimeout: the ranks it dropped could not run, so the gang
    // is not grown again while this admission lasts.
    bool pods_ready_shrunk = false;
    // TemplateShape of the job, computed when a pending job without a dry-run verdict is met.
    std::optional<std::string> template_shape;
  };
  std::map<std::string, DecodedJob> decoded_jobs_;
  // Set by the node informer when a node's labels change: the next cycle checks every admitted
  // gang's TopologyDrift, and warns once per job and drift (topology_drift_: the last ones).
  std::atomic<bool> topology_check_due_{true};
  std::map<std::string, std::string> topology_drift_;
  // When this operator last shrank a job for its pods-ready timeout: the clock starts again
  // there (the Shrunk condition says so too, once the informer shows it).
  std::map<std::string, absl::Time> pods_ready_shrunk_;
  // Configuration errors reported so far ("Kind name" -> message): each is logged and recorded
  // as an event when it appears or changes, not every cycle.
  std::map<std::string, std::string> object_errors_;
  // Last status body applied per queue object ("ns/name@uid"), so an unchanged status is not
  // written again; only the queues of the last cycle.
  std::map<std::string, std::string> queue_status_;
  // The GrowthHeld message last recorded per elastic job still held back: an Event when it
  // changes, not one per cycle.
  std::map<std::string, std::string> growth_holds_;
};

}  // namespace phalanx::operator_server
