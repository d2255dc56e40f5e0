// The lifecycle of an admitted TrainingJob: its headless Service, the Service's EndpointSlices
// (the ranks' addresses) and one pod per rank built by
// operator/controller/pod_builder.h, phases from the pods, gang restarts after a failed pod up to
// spec.failurePolicy.maxRestarts, success by spec.successPolicy (All | RankZero), the pods of a
// suspended, evicted or finished job deleted, ttlSecondsAfterFinished, and the finalizer that
// releases the reservation when the job is deleted.
//
// Level-triggered: Reconcile(key) looks at the job and its pods as the informers show them (with
// its own status write laid over the job until the informer shows it: lifecycle_overlay.h) and
// makes one step toward what they should be; pod and job events (and requeues) call it again.
// It writes only what differs, with server-side apply (field manager "phalanx-operator"), so it
// never fights another writer in a loop. Admission (status.admission, status.placement) is the
// admission controller's: this controller only reads it.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/workqueue.h"
#include "kube/write_gate.h"
#include "operator/controller/pod_builder.h"
#include "operator/server/create_expectations.h"
#include "operator/server/informers.h"
#include "operator/server/lifecycle_overlay.h"
#include "operator/server/operator_metrics.h"
#include "scheduler/placement_service.h"

namespace phalanx::operator_server {

class JobController {
 public:
  JobController(kube::Client& client, Informers& informers, placement::PlacementService& placement,
                kube::EventRecorder& events, OperatorMetrics& metrics,
                int write_concurrency = 8);

  // Registers the job and pod event handlers; call before the informers start.
  void RegisterHandlers();

  // Runs `workers` threads until `stop` fires; a key is never reconciled by two at once. First
  // reads which jobs' Services exist (LoadServices).
  void Run(const kube::Cancellation& stop, int workers);

  // Before each step a worker waits up to `max` while `gate` is held (an admission cycle
  // writing its statuses), so those writes reach a busy API server ahead of this controller's
  // Services, pods and status writes. Call before Run; null (the default) never waits.
  void YieldTo(kube::WriteGate* gate, absl::Duration max) {
    yield_to_ = gate;
    max_yield_ = max;
  }

  // Lists the Services labelled phalanx.dev/job and remembers the TrainingJob uids that own
  // them, so that after a restart the admitted jobs' Services are not created again (one 409
  // each). Best effort: on an error every Service is created again (409 is harmless).
  absl::Status LoadServices();

  // Lists the EndpointSlices this operator wrote (label endpointslice.kubernetes.io/managed-by)
  // and remembers each job's by name and content hash, so that after a restart a slice that is
  // current is not written again and one no longer wanted is deleted. Best effort: on an error
  // every admitted job's slices are applied again (the same content; harmless).
  absl::Status LoadEndpointSlices();

  // One step for the job `namespace/name`. Returns when to look again (nullopt: on the next
  // event); an error is retried with backoff.
  absl::StatusOr<std::optional<absl::Duration>> Reconcile(const std::string& key);

 private:
  // Before the job is admitted: a dry run of rank 0's pod (create, dryRun=All,
  // fieldValidation=Strict), once per uid and generation, its verdict recorded in
  // informers_.template_checks for the admission controller (template_checks.h); a refusal
  // for now (a 403) is asked again after kTemplateRecheck. Returns when to look again.
  std::optional<absl::Duration> CheckTemplate(const kube::TrainingJob& job, absl::Time now);

  // A Warning event "Forbidden" on the job, with the API server's message.
  void RecordForbidden(const std::string& key, const absl::Status& status);

  // After a Service create answered AlreadyExists: OK if the Service <job> is this job's (its
  // controller is the job's uid); else a Warning event FailedCreate and FailedPrecondition, so
  // the job is retried with backoff. An earlier job of the same name whose Service the garbage
  // collector has not removed yet, or a user's Service, must not stand in for the job's own.
  absl::Status CheckExistingService(const kube::ObjectMeta& job);

  // Brings the job's EndpointSlices to `ranks` (controller::BuildEndpointSlices): applies the
  // slices whose content differs from what this controller last wrote, deletes the ones no
  // longer wanted. No ranks and nothing written: no request at all.
  absl::Status SyncEndpoints(const kube::TrainingJob& job,
                             std::vector<controller::RankAddress> ranks);

  // A Warning event FailedCreate on the job naming the object and the API server's answer.
  void RecordFailedCreate(const kube::ObjectMeta& job, std::string_view kind,
                          std::string_view name, const absl::Status& status);

  kube::Client& client_;
  Informers& informers_;
  placement::PlacementService& placement_;
  kube::EventRecorder& events_;
  OperatorMetrics& metrics_;
  // Pod creates of one gang in flight at once.
  const int write_concurrency_;
  kube::WriteGate* yield_to_ = nullptr;
  absl::Duration max_yield_;
  kube::WorkQueue queue_;
  absl::Mutex mu_;
  std::set<std::string> services_;  // job uids whose Service exists
  // The EndpointSlices written for each job (by key): the job's uid, then slice name -> hash.
  struct WrittenSlices {
    std::string uid;
    std::map<std::string, std::string> hashes;
  };
  std::map<std::string, WrittenSlices> slices_;
  // Each job's (by key) ranks seen with a pod bound to a node, in its current uid, admission
  // and restart generation: a rank whose pod disappears (deleted by a user or a controller) and is
  // created again on the same node gets a PodRecreated Event; a first create, a growth or a move to
  // a new node does not. Forgotten while the job is not admitted (this controller deletes those
  // pods itself). In memory only: after a failover, a rank's first re-creation is silent.
  struct SeenRanks {
    std::string uid;
    std::string admitted;  // the Admitted condition's lastTransitionTime: one per admission
    int32_t generation = -1;
    std::map<int, std::string> nodes;  // rank -> node
  };
  std::map<std::string, SeenRanks> seen_ranks_;
  // Uids of the jobs whose deletion was recorded (the Released event), so that a second
  // reconcile before the informer shows the finalizer gone records none (audit 2026-12-01,
  // F9: 4 of 6 deletions had it twice). The oldest are forgotten past kReleasedKept.
  static constexpr size_t kReleasedKept = 4096;
  std::set<std::string> released_;
  std::deque<std::string> released_order_;
  // Pods created whose informer event has not arrived: not created twice (create_expectations.h).
  CreateExpectations expected_pods_;
  // Status writes whose informer event has not arrived: each transition's Event is recorded
  // once, and a gang is not restarted twice for one failed pod (lifecycle_overlay.h).
  LifecycleOverlay written_;
};

}  // namespace phalanx::operator_server
