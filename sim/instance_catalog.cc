#include "sim/instance_catalog.h"

#include "absl/strings/str_join.h"

namespace phalanx::sim {

// From the instance types' published specifications. vCPU and memory are the published
// instance sizes; p6-b300 has no EFA device count here, so it gets 0 and only pods that do not
// ask for EFA devices fit there.
const std::vector<InstanceType>& InstanceCatalog() {
  static const std::vector<InstanceType> catalog = {
      {"p5.48xlarge", "H100", 8, 640, 7.2, "v2", 400, 32, 192, 2048, 1, "eks"},
      {"p5e.48xlarge", "H200", 8, 1128, 7.2, "v2", 400, 32, 192, 2048, 1, "eks"},
      {"p5en.48xlarge", "H200", 8, 1128, 7.2, "v3", 400, 16, 192, 2048, 1, "eks"},
      {"p6-b200.48xlarge", "B200", 8, 1440, 14.4, "v4", 400, 8, 192, 2048, 1, "eks-4layer"},
      {"p6-b300.48xlarge", "B300", 8, 2100, 14.4, "v4", 800, 0, 192, 4096, 1, "eks-4layer"},
      {"p6e-gb200.36xlarge", "GB200", 4, 740, 7.2, "v4", 200, 4, 144, 960, 18, "gb200"},
  };
  return catalog;
}

const InstanceType* FindInstanceType(std::string_view name) {
  for (const InstanceType& type : InstanceCatalog()) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

std::string InstanceTypeNames() {
  return absl::StrJoin(InstanceCatalog(), ", ",
                       [](std::string* out, const InstanceType& t) { out->append(t.name); });
}

}  // namespace phalanx::sim
