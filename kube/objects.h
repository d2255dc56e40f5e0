// Compact, read-only views of the API objects the scheduler and operator watch. Informers decode
// into these (kube/decode.h) instead of keeping whole JSON documents: a 10,000-pod cache keeps
// names, labels, owners, placement and summed requests, and drops managedFields, env, volumes.
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

namespace kube {

// A small sorted string map (labels, annotations): flat, so a pod's dozen labels cost one
// allocation instead of a dozen tree nodes.
class StringMap {
 public:
  using Entry = std::pair<std::string, std::string>;

  // nullptr when absent.
  const std::string* Find(std::string_view key) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                               [](const Entry& e, std::string_view k) { return e.first < k; });
    return it != entries_.end() && it->first == key ? &it->second : nullptr;
  }
  bool contains(std::string_view key) const { return Find(key) != nullptr; }
  void Set(std::string key, std::string value) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                               [](const Entry& e, std::string_view k) { return e.first < k; });
    if (it != entries_.end() && it->first == key) {
      it->second = std::move(value);
    } else {
      entries_.emplace(it, std::move(key), std::move(value));
    }
  }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  friend bool operator==(const StringMap&, const StringMap&) = default;

 private:
  std::vector<Entry> entries_;
};

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
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
  std::string creation_timestamp;
  // Set once deletion has been requested (finalizers may still hold the object).
  std::string deletion_timestamp;
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;

  // "namespace/name", or "name" for cluster-scoped objects: the informer cache key.
  std::string Key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
  // The owner with controller=true, if any.
  const OwnerReference* ControllerRef() const {
    for (const OwnerReference& ref : owner_references) {
      if (ref.controller) return &ref;
    }
    return nullptr;
  }
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  std::string key;
  std::string operator_;  // Exists or Equal ("" means Equal)
  std::string value;
  std::string effect;  // "" tolerates every effect
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

struct Node {
  ObjectMeta meta;
  bool unschedulable = false;
  std::vector<Taint> taints;
  // status.allocatable in canonical units (common/resources.h).
  phalanx::ResourceList allocatable;
  // The Ready condition is True.
  bool ready = false;
};

struct Pod {
  ObjectMeta meta;
  std::string node_name;
  std::string scheduler_name;
  std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
  std::string priority_class_name;
  int32_t priority = 0;
  // The Ready condition is True.
  bool ready = false;
  // The PodScheduled condition is False (reason Unschedulable), as kube-scheduler reports.
  bool unschedulable = false;
  std::vector<Toleration> tolerations;
  StringMap node_selector;
  // Effective requests as kube-scheduler computes them: the sum over containers plus sidecars
  // (restartable init containers), at least the largest init-container step, plus overhead.
  phalanx::ResourceList requests;
};

// Any object (a custom resource) kept as its JSON text with its metadata decoded.
struct RawObject {
  ObjectMeta meta;
  std::string json;
};

}  // namespace kube
