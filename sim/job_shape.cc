#include "sim/job_shape.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "sim/cluster.h"

namespace phalanx::sim {
namespace {

absl::Status Broken(const std::string& message) { return absl::InvalidArgumentError(message); }

// The OpenAPI bounds every size field of the CRD carries: minimum 1, maximum 65536.
absl::Status InBounds(const char* field, int32_t value) {
  if (value < 1) {
    return Broken(absl::StrCat(field, " should be greater than or equal to 1, got ", value));
  }
  if (value > kMaxReplicas) {
    return Broken(
        absl::StrCat(field, " should be less than or equal to ", kMaxReplicas, ", got ", value));
  }
  return absl::OkStatus();
}

// Depth of a level, larger = finer; -1 when it cannot be told.
int32_t Depth(const std::string& level, const std::vector<std::string>& levels) {
  if (level == kHostnameLabel) return 1000;
  if (!levels.empty()) {
    auto it = std::find(levels.begin(), levels.end(), level);
    return it == levels.end() ? -1 : static_cast<int32_t>(it - levels.begin());
  }
  // Well-known keys (the presets of scheduler/topology.h): network layers 1..4 coarsest first,
  // then the NVLink domain.
  // Any other layer number is not known to exist: not ranked, so that a later check against a
  // topology says it is no level, instead of this one calling it coarser or finer.
  const std::string layer_prefix = "topology.k8s.aws/network-node-layer-";
  int32_t layer = 0;
  if (absl::StartsWith(level, layer_prefix) &&
      absl::SimpleAtoi(level.substr(layer_prefix.size()), &layer) && layer >= 1 && layer <= 4) {
    return layer;
  }
  if (level == "nvidia.com/gpu.clique" || level == "topology.k8s.aws/ultraserver-id") return 100;
  return -1;
}

}  // namespace

absl::Status ValidateJobShape(const JobShape& shape, const JobShapeFields& f,
                              const std::vector<std::string>& levels) {
  RETURN_IF_ERROR(InBounds(f.replicas, shape.replicas));
  if (shape.elastic.has_value()) {
    const placement::ElasticRange& e = *shape.elastic;
    RETURN_IF_ERROR(InBounds(f.elastic_min, e.min));
    RETURN_IF_ERROR(InBounds(f.elastic_max, e.max));
    RETURN_IF_ERROR(InBounds(f.elastic_step, e.step));
    if (e.min > e.max) {
      return Broken(absl::StrCat(f.elastic_min, " must not exceed ", f.elastic_max, " (", e.min,
                                 " > ", e.max, ")"));
    }
    if (e.min % e.step != 0 || e.max % e.step != 0) {
      return Broken(absl::StrCat(f.elastic_min, " and ", f.elastic_max, " must be multiples of ",
                                 f.elastic_step, " (", e.min, " and ", e.max, ", step ", e.step,
                                 ")"));
    }
    if (shape.replicas < e.min || shape.replicas > e.max) {
      return Broken(absl::StrCat(f.replicas, " must be within [", f.elastic_min, ", ",
                                 f.elastic_max, "] (", shape.replicas, " not in [", e.min, ", ",
                                 e.max, "])"));
    }
    if (shape.replicas % e.step != 0) {
      return Broken(absl::StrCat(f.replicas, " must be a multiple of ", f.elastic_step, " (",
                                 shape.replicas, ", step ", e.step, ")"));
    }
  }
  if (shape.group_size.has_value()) {
    const int32_t g = *shape.group_size;
    RETURN_IF_ERROR(InBounds(f.group_size, g));
    if (shape.group_level.empty()) {
      return Broken(absl::StrCat(f.group_level, " is required when ", f.group_size, " is set"));
    }
    if (shape.replicas % g != 0) {
      return Broken(absl::StrCat(f.group_size, " must divide ", f.replicas, " (", g,
                                 " does not divide ", shape.replicas, ")"));
    }
    if (shape.elastic.has_value()) {
      const placement::ElasticRange& e = *shape.elastic;
      for (int32_t value : {e.min, e.max, e.step}) {
        if (value % g == 0) continue;
        return Broken(absl::StrCat(f.group_size, " must divide ", f.elastic_min, ", ",
                                   f.elastic_max, " and ", f.elastic_step, " (", g,
                                   " does not divide ", value, ")"));
      }
    }
  } else if (!shape.group_level.empty()) {
    return Broken(absl::StrCat(f.group_size, " is required when ", f.group_level, " is set"));
  }
  if (!shape.required_level.empty() && !shape.preferred_level.empty()) {
    const int32_t required = Depth(shape.required_level, levels);
    const int32_t preferred = Depth(shape.preferred_level, levels);
    if (required >= 0 && preferred >= 0 && preferred < required) {
      return Broken(absl::StrCat(f.preferred, " (", shape.preferred_level,
                                 ") must not be coarser than ", f.required, " (",
                                 shape.required_level, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace phalanx::sim
