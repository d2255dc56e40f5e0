// Compact, read-only views of the API objects the scheduler and operator watch. Informers decode
// into these (kube/decode.h) instead of keeping whole JSON documents: a 10,000-pod cache keeps
// names, labels, owners, placement and summed requests, and drops managedFields, env, volumes.
// Texts that repeat across objects (label keys and values, node names, phases, owners) are
// InternedStrings, and lists and maps that repeat (tolerations, owner references, requests)
// SharedList / Shared values (kube/interned.h): one shared copy, read like std::string,
// std::vector and std::map. Objects are immutable once decoded.
//
//   const kube::Pod& pod = ...;
//   if (pod.scheduler_name == "phalanx" && pod.node_name.empty()) Queue(pod.meta.Key());
//   int64_t gpus = pod.requests.contains("nvidia.com/gpu") ? pod.requests.at("nvidia.com/gpu") : 0;
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/resources.h"
#include "kube/interned.h"

namespace kube {

// Succeeded or Failed: the phase of a pod, or of a TrainingJob, after which it runs no more.
inline bool FinishedPhase(std::string_view phase) {
  return phase == "Succeeded" || phase == "Failed";
}

// A small sorted string map (labels, annotations): flat, so a pod's dozen labels cost one
// allocation instead of a dozen tree nodes; interned, so keys and values that many objects
// share are stored once; and shared, so the pods of one DaemonSet hold one copy of their labels.
class StringMap {
 public:
  using Entry = std::pair<InternedString, InternedString>;

  StringMap() = default;
  // `entries` in any order; of repeated keys the last one wins, as if each had been Set in turn.
  // The entries are moved out and the vector left empty, its capacity kept for reuse.
  explicit StringMap(std::vector<Entry>&& entries) {
    // The API server writes keys sorted (Go marshals maps that way): check before sorting.
    auto by_key = [](const Entry& a, const Entry& b) { return a.first < b.first; };
    if (!std::is_sorted(entries.begin(), entries.end(), by_key)) {
      std::stable_sort(entries.begin(), entries.end(), by_key);
    }
    auto last = entries.begin();
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      if (it != entries.begin() && it->first == (last - 1)->first) {
        *(last - 1) = std::move(*it);
      } else {
        *last++ = std::move(*it);
      }
    }
    entries_ = SharedList<Entry>(entries.begin(), last);
    entries.clear();
  }

  // nullptr when absent.
  const std::string* Find(std::string_view key) const {
    auto it = LowerBound(key);
    return it != end() && it->first == key ? &it->second.str() : nullptr;
  }
  bool contains(std::string_view key) const { return Find(key) != nullptr; }
  void Set(InternedString key, InternedString value) {
    std::vector<Entry> entries = entries_.ToVector();  // others may share the old list
    auto it = std::lower_bound(entries.begin(), entries.end(), key,
                               [](const Entry& e, std::string_view k) { return e.first < k; });
    if (it != entries.end() && it->first == key) {
      it->second = std::move(value);
    } else {
      entries.emplace(it, std::move(key), std::move(value));
    }
    entries_ = SharedList<Entry>(entries.begin(), entries.end());
  }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const Entry* begin() const { return entries_.begin(); }
  const Entry* end() const { return entries_.end(); }
  friend bool operator==(const StringMap&, const StringMap&) = default;

 private:
  const Entry* LowerBound(std::string_view key) const {
    return std::lower_bound(begin(), end(), key,
                            [](const Entry& e, std::string_view k) { return e.first < k; });
  }

  SharedList<Entry> entries_;
};

struct OwnerReference {
  InternedString api_version;
  InternedString kind;
  InternedString name;
  InternedString uid;
  bool controller = false;
  bool block_owner_deletion = false;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  InternedString creation_timestamp;
  // Set once deletion has been requested (finalizers may still hold the object).
  InternedString deletion_timestamp;
  StringMap labels;
  StringMap annotations;
  SharedList<OwnerReference> owner_references;
  SharedList<InternedString> finalizers;

  // "namespace/name", or "name" for cluster-scoped objects: the informer cache key.
  std::string Key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
  bool HasFinalizer(std::string_view finalizer) const {
    return std::find(finalizers.begin(), finalizers.end(), finalizer) != finalizers.end();
  }
  // The owner with controller=true, if any.
  const OwnerReference* ControllerRef() const {
    for (const OwnerReference& ref : owner_references) {
      if (ref.controller) return &ref;
    }
    return nullptr;
  }
};

struct Taint {
  InternedString key;
  InternedString value;
  InternedString effect;  // NoSchedule, PreferNoSchedule, NoExecute
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  InternedString key;
  InternedString operator_;  // Exists or Equal ("" means Equal)
  InternedString value;
  InternedString effect;  // "" tolerates every effect
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

struct Node {
  ObjectMeta meta;
  bool unschedulable = false;
  SharedList<Taint> taints;
  // status.allocatable in canonical units (common/resources.h).
  Shared<phalanx::ResourceList> allocatable;
  // The Ready condition is True.
  bool ready = false;
};

// A container of a pod that ended with a non-zero exit code: an entry of status.containerStatuses
// or status.initContainerStatuses whose state.terminated.exitCode is not 0.
struct ContainerExit {
  InternedString name;
  bool init = false;  // an init container (or sidecar)
  // A sidecar: an init container with restartPolicy Always. The kubelet stops it after the
  // regular containers, with SIGKILL once the grace period is over, so its exit code at the
  // pod's end says nothing about the pod.
  bool sidecar = false;
  int32_t exit_code = 0;
  InternedString reason;    // state.terminated.reason: OOMKilled, Error, ...
  std::string finished_at;  // state.terminated.finishedAt (RFC 3339), "" if not reported
};

struct Pod {
  ObjectMeta meta;
  InternedString node_name;
  InternedString scheduler_name;
  InternedString phase;  // Pending, Running, Succeeded, Failed, Unknown
  InternedString priority_class_name;
  int32_t priority = 0;
  // status.podIP: empty until the kubelet gives the pod its sandbox's address.
  std::string pod_ip;
  // The Ready condition is True.
  bool ready = false;
  // The PodScheduled condition is False (reason Unschedulable), as kube-scheduler reports, and
  // its message ("0/16 nodes are available: persistentvolumeclaim \"ckpt\" not found. ...").
  bool unschedulable = false;
  std::string unschedulable_message;
  // The DisruptionTarget condition is True: Kubernetes is stopping the pod for a reason outside
  // it (a NoExecute taint such as an unreachable node, node shutdown, node-pressure eviction,
  // garbage collection on a deleted node, preemption).
  bool disruption_target = false;
  // status.reason and status.message: why the kubelet failed the pod as a whole (Evicted,
  // DeadlineExceeded, ...), "" if it did not.
  InternedString status_reason;
  std::string status_message;
  // Of a Failed pod only (others are not read that far): its containers that exited non-zero,
  // the regular containers first, then the init containers, each in status order (the order a
  // Job's podFailurePolicy looks at them in).
  std::vector<ContainerExit> exits;
  SharedList<Toleration> tolerations;
  StringMap node_selector;
  // Effective requests as kube-scheduler computes them: the sum over containers plus sidecars
  // (restartable init containers), at least the largest init-container step, plus overhead.
  Shared<phalanx::ResourceList> requests;
};

// Any object (a custom resource) kept as its JSON text with its metadata decoded.
struct RawObject {
  ObjectMeta meta;
  std::string json;
};

}  // namespace kube
