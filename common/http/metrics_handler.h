// The /metrics endpoint: serves a metrics::Registry in the Prometheus text exposition format.
//
//   server->Handle("/metrics", phalanx::http::MetricsHandler(registry));
//
// `registry` must outlive the server. Any method is answered (Prometheus scrapes with GET).
#pragma once

#include "common/http/http_server.h"
#include "common/metrics/registry.h"

namespace phalanx::http {

// Content type of the text format, version 0.0.4.
inline constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

Handler MetricsHandler(const metrics::Registry& registry);

}  // namespace phalanx::http
