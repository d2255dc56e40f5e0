// The shape rules every TrainingJob obeys — gang size, elastic range, topology levels and
// tensor-parallel groups — in one function used by `phalanx plan`, the trace loader, the trace
// validator and (through it) the trace generator. The rules and their messages are the CRD's
// (crds/phalanx.dev_trainingjobs.yaml: OpenAPI bounds and CEL rules), plus the placement core's
// level order (a preferred level is never coarser than the required one).
//
//   JobShape shape{.replicas = 4, .elastic = ElasticRange{2, 4, 2}, .group_size = 4,
//                  .group_level = "nvidia.com/gpu.clique"};
//   absl::Status s = ValidateJobShape(shape, kTrainingJobFields);
//   // InvalidArgument "spec.topology.groupSize must divide spec.elastic.minReplicas,
//   //   spec.elastic.maxReplicas and spec.elastic.step (4 does not divide 2)"
//
// Messages name the fields in the caller's vocabulary (the CRD's, or a trace's) so that with
// kTrainingJobFields they read exactly as the API server's; callers prefix file and line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/placement_types.h"

namespace phalanx::sim {

struct JobShape {
  int32_t replicas = 1;
  std::optional<placement::ElasticRange> elastic;
  std::string required_level;  // node label keys; "" = unset
  std::string preferred_level;
  std::optional<int32_t> group_size;  // unset = no groups
  std::string group_level;
};

// What the fields are called where the shape came from.
struct JobShapeFields {
  const char* replicas;
  const char* elastic_min;
  const char* elastic_max;
  const char* elastic_step;
  const char* required;
  const char* preferred;
  const char* group_size;
  const char* group_level;
};

inline constexpr JobShapeFields kTrainingJobFields = {
    "spec.replicas",           "spec.elastic.minReplicas", "spec.elastic.maxReplicas",
    "spec.elastic.step",       "spec.topology.required",   "spec.topology.preferred",
    "spec.topology.groupSize", "spec.topology.groupLevel"};

// Simulator traces (YAML field names; a CSV's columns map onto them, docs/simulator.md).
inline constexpr JobShapeFields kTraceJobFields = {
    "pods",              "elastic.min",        "elastic.max",        "elastic.step",
    "topology.required", "topology.preferred", "topology.groupSize", "topology.groupLevel"};

// The CRD's bound on replicas, elastic sizes and group sizes.
inline constexpr int32_t kMaxReplicas = 65536;

// OK, or InvalidArgument naming the first rule the shape breaks. `levels` are the topology's
// node label keys, coarsest first (hostname implicitly finest); without them the level order
// is checked for the well-known keys only (EKS network layers, then the NVLink clique, then the
// hostname), and unknown keys are left to the cluster checks.
absl::Status ValidateJobShape(const JobShape& shape, const JobShapeFields& fields,
                              const std::vector<std::string>& levels = {});

}  // namespace phalanx::sim
