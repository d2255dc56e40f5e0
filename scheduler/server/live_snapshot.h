// LiveSnapshot: keeps phalanx-scheduler's ClusterSnapshot in step with the cluster, fed by the
// Node, Pod and TrainingJob informers, and rebuilds every gang's reservation from its
// TrainingJob's `status.placement` after a restart.
//
//   placement::InProcessPlacementService service(placement::ClusterSnapshot(topology));
//   LiveSnapshot live(service);
//   // once all three informers have synced:
//   live.Build(nodes.List(), jobs.List(), pods.List());   // nodes, then reservations, then pods
//   // from the informers' handlers afterwards (each change costs O(depth)):
//   live.NodeChanged(name, node.get());   // nullptr = deleted
//   live.PodChanged(key, pod.get());
//   live.JobChanged(key, job.get());
//
// Level-triggered: every call states what an object is now, so applying the same state twice
// changes nothing, and calls that race with Build are harmless (Build holds the lock; a change
// seen before Build is in the caches Build reads).
//
// Rules (docs/scheduler.md):
//   * every bound pod that has not finished counts as used capacity, whoever bound it
//     (DaemonSets, other schedulers); a gang pod takes its gang's reserved slot instead, and
//     stops counting when the gang gives that slot up through the Placement API (the
//     operator is deleting it; ClusterSnapshot::AddPod);
//   * a pod bound to a node the snapshot does not know yet waits for that node;
//   * a job with status.admission and status.placement that has not finished holds a
//     reservation on exactly those nodes; a job that cannot be restored (a node is gone or
//     full) is retried whenever a node changes and counted in restore_failures;
//   * a deleted job's reservation is released, and so is a finished (Succeeded / Failed) job's;
//   * a reservation this snapshot re-created from a job's status is released when a later
//     status of the job has no admission or placement (requeued, preempted, suspended) and the
//     reservation is still on the restored nodes: the informer can deliver a job's older status
//     after the operator released its reservation through the Placement API, and the
//     reservation re-created from it would otherwise be held forever (found by hack/chaos.sh);
//   * anything else about reservations is the operator's business through the Placement API
//     (a job whose status has no placement yet may hold a fresh reservation the operator has
//     not written down);
//   * a node that carries a deeper topology label but lacks a coarser one (its deeper labels
//     then place it nowhere) is logged once when it enters that state, and listed by
//     LabelGapNodes() until its labels are complete or it is gone.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kube/api/training_job.h"
#include "kube/objects.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/placement_types.h"

namespace phalanx::scheduler {

// The placement core's view of a node.
placement::NodeInfo NodeInfoFrom(const kube::Node& node);

// What a pod uses of its node, or nullopt when it uses nothing (not bound yet, Succeeded or
// Failed). Gang pods (labels phalanx.dev/job and phalanx.dev/rank) name their gang and rank.
std::optional<placement::PodInfo> PodInfoFrom(const kube::Pod& pod);

// The gang a TrainingJob asks for: per-pod requests, node selector and tolerations of its pod
// template, topology levels, elastic range, priority (spec.priority; 0 without it).
placement::GangRequest GangRequestFrom(const kube::TrainingJob& job);

// A reservation to re-create after a restart.
struct Restorable {
  placement::GangRequest request;
  placement::Placement placement;
};

// The reservation a job holds according to its status, or nullopt if it holds none: it needs
// status.admission and a non-empty status.placement, and must not have Succeeded or Failed.
std::optional<Restorable> RestorableFrom(const kube::TrainingJob& job);

struct LiveSnapshotCounters {
  int64_t node_events = 0;
  int64_t pod_events = 0;
  int64_t job_events = 0;
  int64_t restored = 0;          // reservations re-created from status.placement
  int64_t restore_failures = 0;  // attempts that failed (retried on node changes)
  int64_t released_on_delete = 0;
  int64_t released_on_finish = 0;  // finished jobs' reservations
  int64_t released_stale = 0;      // restored from a status the job has since left
  int64_t errors = 0;  // snapshot calls that failed for another reason (logged)
};

struct LiveSnapshotOptions {
  // Warn about nodes with a topology label gap (phalanx-scheduler); `phalanx topology` reports
  // them in its own output instead.
  bool log_label_gaps = true;
};

class LiveSnapshot {
 public:
  explicit LiveSnapshot(placement::InProcessPlacementService& service,
                        LiveSnapshotOptions options = {})
      : service_(service), options_(options) {}

  // Applies the complete initial state in dependency order (see the file comment). Jobs that
  // do not decode are logged and skipped. Afterwards built() is true.
  void Build(const std::vector<std::shared_ptr<const kube::Node>>& nodes,
             const std::vector<std::shared_ptr<const kube::RawObject>>& jobs,
             const std::vector<std::shared_ptr<const kube::Pod>>& pods);

  // Informer handlers; ignored until Build has run (Build reads the caches they updated).
  void NodeChanged(const std::string& name, const kube::Node* node);
  void PodChanged(const std::string& key, const kube::Pod* pod);
  void JobChanged(const std::string& key, const kube::RawObject* job);

  bool built() const;
  LiveSnapshotCounters counters() const;
  // Jobs whose reservation could not be restored yet, sorted.
  std::vector<std::string> UnrestoredJobs() const;
  // Live nodes with a topology label gap (placement::Topology::FindLabelGap), sorted by name.
  std::vector<std::pair<std::string, placement::Topology::LabelGap>> LabelGapNodes() const;

 private:
  void ApplyNodeLocked(const std::string& name, const kube::Node* node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyPodLocked(const std::string& key, const kube::Pod* pod)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyJobLocked(const std::string& key, const kube::RawObject* job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Re-creates `restorable` unless the job already holds a reservation; false if it failed.
  // `retry`: an attempt after an earlier failure (logged at debug, not warn).
  bool RestoreLocked(const Restorable& restorable, bool retry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RetryUnrestoredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a node's label gap (nullopt: none, or the node is gone); logs when one appears or
  // changes, not on every update of the node.
  void TrackLabelGapLocked(const std::string& name,
                           std::optional<placement::Topology::LabelGap> gap)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A job's status says it holds no reservation: release one held if the job finished, or if it
  // is the one this snapshot restored from the job's earlier status.
  void ReleaseLeftoverLocked(const std::string& key, bool finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  placement::InProcessPlacementService& service_;
  const LiveSnapshotOptions options_;
  mutable absl::Mutex mu_;
  bool built_ ABSL_GUARDED_BY(mu_) = false;
  // Pods in the snapshot: key -> node.
  std::unordered_map<std::string, std::string> bound_ ABSL_GUARDED_BY(mu_);
  // Pods bound to a node the snapshot does not know yet: node -> key -> pod.
  std::unordered_map<std::string, std::unordered_map<std::string, placement::PodInfo>> waiting_
      ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, std::string> waiting_node_ ABSL_GUARDED_BY(mu_);  // key->node
  // Jobs whose reservation could not be restored yet.
  std::unordered_map<std::string, Restorable> unrestored_ ABSL_GUARDED_BY(mu_);
  // Jobs whose reservation this snapshot re-created from status.placement: job -> its nodes.
  std::unordered_map<std::string, std::vector<std::string>> restored_nodes_ ABSL_GUARDED_BY(mu_);
  LiveSnapshotCounters counters_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, placement::Topology::LabelGap> label_gaps_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::scheduler
