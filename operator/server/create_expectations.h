// The pods a controller has asked the API server to create that its pod informer has not shown
// yet (client-go's ControllerExpectations, reduced to what the job controller needs).
//
// A job's own status write wakes its next reconcile before the pod watch has delivered the pods
// that reconcile just created, so without this the controller sees the ranks as missing and sends
// every create again, each answered 409 AlreadyExists, on the same API server the gang's binds
// wait for (docs/benchmarks.md counts them).
//
//   expectations.Expect("ml/job-a", "job-a-0", now);     // before the create is sent
//   create failed (not AlreadyExists): expectations.Observed("ml/job-a", "job-a-0");
//   pod informer add/update/delete:    expectations.Observed(job key, pod name);
//   reconcile, BEFORE reading the pods from the informer:
//     CreateExpectations::Pending p = expectations.PendingOf("ml/job-a", now);
//     ... do not create a pod named in p.names yet.
// Taken in that order, a pod the informer shows after the snapshot is still in p.names, and one
// shown before it is in the informer's store when the pods are read (the store is updated before
// the handlers run): either way it is not created twice.
//
// An expectation nobody observes (the watch lost the event, the pod was created and deleted
// between two relists) lapses after `ttl`, and the pod is created again as before.
// Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace phalanx::operator_server {

class CreateExpectations {
 public:
  explicit CreateExpectations(absl::Duration ttl = absl::Seconds(60)) : ttl_(ttl) {}

  // `name` (owned by `owner`, e.g. the job's namespace/name) is about to be created.
  void Expect(std::string_view owner, std::string_view name, absl::Time now);
  // The informer has shown `name`, or its create failed: stop waiting for it.
  void Observed(std::string_view owner, std::string_view name);

  struct Pending {
    absl::flat_hash_set<std::string> names;  // still on their way to the informer
    absl::Duration wait = absl::InfiniteDuration();  // until the first of them lapses
  };
  // What `owner` still waits for; lapsed expectations are dropped here.
  Pending PendingOf(std::string_view owner, absl::Time now);

  // Expectations held, over all owners.
  size_t size() const;

 private:
  const absl::Duration ttl_;
  mutable absl::Mutex mu_;
  // owner -> name -> when its create was sent
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, absl::Time>> expected_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::operator_server
