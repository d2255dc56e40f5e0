// The lifecycle statuses the job controller has written that its TrainingJob informer has not
// shown yet. A job's next reconcile often runs before the watch delivers the controller's own
// write (a pod event, or the admission controller's status write, wakes it): seen from the
// informer alone, the job was still Suspended and recorded a second Resumed event, still
// Admitted and recorded Running again for every rank's pod update, or still before a gang
// restart (docs/operator.md "Events"). Each reconcile lays the write still in flight over what
// the informer shows, so it decides from what it decided last.
//
// A write is forgotten once the informer has caught up with it: the object shows the written
// resourceVersion or a later one (the API server's resourceVersions are etcd revisions, which
// only grow; Kubernetes 1.35 made comparing them part of the API, KEP-5504), or shows the
// written status.
// A write to another object of the same name (deleted and created again) is never laid over it.
//
//   LifecycleOverlay overlay;
//   overlay.Record(job.meta, written_status, response_meta.resource_version);  // write landed
//   per reconcile: LifecycleStatus current = FromInformer(raw);
//                  overlay.Apply(job.meta, current);   // current becomes the write in flight
//   job gone:      overlay.Forget(key);
//
// Thread-safe: the job controller's workers share one.
#pragma once

#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "kube/objects.h"
#include "operator/server/job_status.h"

namespace phalanx::operator_server {

class LifecycleOverlay {
 public:
  // `written` was applied to the status of the object `job` (its uid and key), and the API
  // server answered with `resource_version`.
  void Record(const kube::ObjectMeta& job, LifecycleStatus written,
              std::string resource_version);

  // `current` is the status as the informer shows the object `job`: replaced by the write in
  // flight, if there is one the informer has not caught up with. Returns whether it was.
  bool Apply(const kube::ObjectMeta& job, LifecycleStatus& current);

  // The job is gone.
  void Forget(const std::string& key);

  size_t size() const;

 private:
  struct Written {
    std::string uid;
    std::string resource_version;
    LifecycleStatus status;
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Written> in_flight_ ABSL_GUARDED_BY(mu_);
};

// Whether resourceVersion `seen` is `written` or a later one. Decimal resourceVersions (every
// etcd-backed API server's) are compared as numbers; any other pair only for equality.
bool CaughtUp(const std::string& seen, const std::string& written);

}  // namespace phalanx::operator_server
