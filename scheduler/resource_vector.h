// Interned resources for the placement core's hot paths: a ResourceTable maps resource names to
// small indices once (when a node or pod arrives), and a ResourceVector is a fixed array indexed
// by them, so per-node and per-domain arithmetic never hashes or compares strings.
//
//   ResourceTable table;                          // cpu, memory, GPU, EFA, pods pre-interned
//   ASSIGN_OR_RETURN(int hugepages, table.Intern("hugepages-2Mi"));
//   ResourceVector free = node_allocatable;
//   free.Subtract(node_used, table.size());
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/resources.h"

namespace phalanx::placement {

// Enough for every resource a real node advertises (cpu, memory, pods, ephemeral-storage,
// hugepages-*, GPUs, EFA, a few device plugins); a cluster with more distinct names is refused
// with ResourceExhausted rather than silently ignored.
inline constexpr int kMaxResources = 32;

// Indices fixed in every ResourceTable.
inline constexpr int kCpuIndex = 0;
inline constexpr int kMemoryIndex = 1;
inline constexpr int kGpuIndex = 2;
inline constexpr int kEfaIndex = 3;
inline constexpr int kPodsIndex = 4;

// kubelet's default --max-pods, used for nodes that do not advertise `pods`.
inline constexpr int64_t kDefaultPodsPerNode = 110;

struct ResourceVector {
  std::array<int64_t, kMaxResources> amount{};

  int64_t operator[](int i) const { return amount[i]; }
  int64_t& operator[](int i) { return amount[i]; }

  void Add(const ResourceVector& other, int n) {
    for (int i = 0; i < n; ++i) amount[i] += other.amount[i];
  }
  void Subtract(const ResourceVector& other, int n) {
    for (int i = 0; i < n; ++i) amount[i] -= other.amount[i];
  }
  friend bool operator==(const ResourceVector&, const ResourceVector&) = default;
};

class ResourceTable {
 public:
  ResourceTable();

  // The index of `name`, adding it if new; ResourceExhausted past kMaxResources names.
  absl::StatusOr<int> Intern(std::string_view name);
  // The index of `name`, or -1 if no node or pod has mentioned it.
  int Find(std::string_view name) const;
  const std::string& Name(int index) const { return names_[index]; }
  int size() const { return static_cast<int>(names_.size()); }

  // Converts a ResourceList, interning new names. Errors name the source as
  // "<kind>[<owner>].<field>[<resource>]", e.g. "node[ip-1].allocatable[cpu]".
  absl::StatusOr<ResourceVector> ToVector(const ResourceList& list, std::string_view kind,
                                          std::string_view owner, std::string_view field);
  // The ResourceList of a vector (entries that are zero are left out).
  ResourceList ToList(const ResourceVector& vector) const;

 private:
  std::vector<std::string> names_;
};

}  // namespace phalanx::placement
