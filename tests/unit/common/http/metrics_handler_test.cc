#include "common/http/metrics_handler.h"

#include "common/http/http_client.h"
#include "common/http/http_server_beast.h"
#include "common/metrics/registry.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::http {
namespace {

using ::testing::HasSubstr;

TEST(MetricsHandlerTest, ServesTheRegistryAsPrometheusText) {
  metrics::Registry registry;
  auto& requests = registry.AddCounter("phalanx_test_requests_total", "Requests.", {"verb"});
  requests.WithLabels({"filter"}).Inc(3);

  auto server = NewBeastServer({});
  server->Handle("/metrics", MetricsHandler(registry));
  ASSERT_OK(server->Start());
  HttpClient client("127.0.0.1", server->port());
  ASSERT_OK_AND_ASSIGN(Response response, client.Get("/metrics"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(response.body, registry.Render());
  EXPECT_THAT(response.body, HasSubstr("phalanx_test_requests_total{verb=\"filter\"} 3\n"));

  // Each scrape renders the registry afresh.
  requests.WithLabels({"filter"}).Inc();
  ASSERT_OK_AND_ASSIGN(response, client.Get("/metrics"));
  EXPECT_THAT(response.body, HasSubstr("phalanx_test_requests_total{verb=\"filter\"} 4\n"));
}

}  // namespace
}  // namespace phalanx::http
