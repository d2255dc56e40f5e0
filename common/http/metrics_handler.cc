#include "common/http/metrics_handler.h"

namespace phalanx::http {

Handler MetricsHandler(const metrics::Registry& registry) {
  return [&registry](const Request&) {
    return Response{200, kMetricsContentType, registry.Render()};
  };
}

}  // namespace phalanx::http
