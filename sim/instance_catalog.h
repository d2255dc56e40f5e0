// The GPU instance types Phalanx knows (their published specifications), with the numbers the
// simulator's cluster builder and communication cost model need.
//
//   const InstanceType* p5 = FindInstanceType("p5.48xlarge");
//   p5->gpus;             // 8
//   p5->efa_gbytes_per_s; // 400
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::sim {

struct InstanceType {
  std::string name;                // "p5.48xlarge"
  std::string gpu;                 // "H100"
  int32_t gpus = 0;                // GPUs per node
  int64_t gpu_memory_gb = 0;       // per node
  double nvlink_tbytes_per_s = 0;  // NVLink aggregate per node (TB/s)
  std::string efa_generation;      // "v2"
  double efa_gbytes_per_s = 0;     // EFA aggregate per node (GB/s)
  int32_t efa_devices = 0;         // vpc.amazonaws.com/efa allocatable
  int32_t vcpus = 0;
  int64_t memory_gib = 0;
  // Nodes sharing one NVLink domain (NVL72: 18 nodes of 4 GPUs); 1 = NVLink stays inside a node.
  int32_t nvlink_domain_nodes = 1;
  // The topology preset its nodes are labelled with: eks | eks-4layer | gb200.
  std::string default_preset;
};

const std::vector<InstanceType>& InstanceCatalog();
// nullptr if unknown.
const InstanceType* FindInstanceType(std::string_view name);
// "p5.48xlarge, p5e.48xlarge, ..." for error messages.
std::string InstanceTypeNames();

}  // namespace phalanx::sim
