// The admission statuses the operator has written that its TrainingJob informer has not shown
// yet. An admission cycle must decide from what it decided last, not from the informer's stale
// copy, or it would reserve a job twice; so each cycle lays the writes still in flight over the
// jobs it lists, and forgets a write once the informer shows it.
//
// A write belongs to one object, named by its uid: a job deleted and created again under the
// same name (`kubectl delete` then `kubectl apply`) is a new object with no admission, and the
// old object's admission laid over it would make it look admitted forever, with no pods and
// no Queued condition. Writes to objects the informer no longer lists are dropped.
//
//   StatusOverlay overlay;
//   overlay.Record(key, uid, {admission, placement});       // after the status write landed
//   per cycle, per listed job:  overlay.Apply(key, job);    // job.status gets the write
//   after the listing:          overlay.Retain(listed keys);
//
// Not thread-safe: the admission controller's cycle is its only user.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "kube/api/training_job.h"

namespace phalanx::operator_server {

class StatusOverlay {
 public:
  struct Written {
    std::optional<kube::TrainingJobAdmission> admission;  // nullopt = written as not admitted
    std::optional<kube::TrainingJobPlacement> placement;
    // Written with the admission (a requeue after a pods-ready eviction); nullopt = not written.
    std::optional<kube::TrainingJobRequeueState> requeue_state;
  };

  // `written` was applied to the status of the object `uid`, job `key`.
  void Record(const std::string& key, const std::string& uid, Written written);

  // Lays the write in flight for `job`'s object over its status; forgets it when `job` shows it
  // already (its admission, replicas, placed nodes and any written requeue state are the written
  // ones), or when it was
  // written to another object of the same name.
  void Apply(const std::string& key, kube::TrainingJob& job);

  // Forgets the writes to jobs `listed` does not hold: `listed` maps job keys to anything.
  template <typename Map>
  void Retain(const Map& listed) {
    std::erase_if(in_flight_, [&](const auto& entry) { return !listed.contains(entry.first); });
  }

  size_t size() const { return in_flight_.size(); }

 private:
  struct Entry {
    std::string uid;
    Written written;
  };
  std::map<std::string, Entry> in_flight_;
};

}  // namespace phalanx::operator_server
