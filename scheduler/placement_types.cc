#include "scheduler/placement_types.h"

#include "absl/strings/str_cat.h"

namespace phalanx::placement {

std::string DomainId::ToString() const {
  if (level.empty() || path.empty()) return "cluster";
  return absl::StrCat(level, "=", path.back());
}

}  // namespace phalanx::placement
