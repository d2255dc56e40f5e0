// The Beast HTTP server's own cost: keep-alive POSTs of a 100 KB body (the size of an extender
// filter call naming 5,000 nodes) to a 2-thread server on loopback, each benchmark thread with
// its own HttpClient. /ack answers a few bytes (a filter reply that passes one node); /echo
// answers the body back (the worst case: a reply as large as the request). Everything runs on
// this machine, so client and server share its cores.
//
//   build-http/tests/bench/phalanx_http_bench --benchmark_format=json --benchmark_min_time=2
//
// items_per_second is requests per second summed over the client threads.
#include <memory>
#include <mutex>
#include <string>

#include "benchmark/benchmark.h"
#include "common/http/http_client.h"
#include "common/http/http_server_beast.h"

namespace {

using phalanx::http::HttpClient;
using phalanx::http::HttpServer;
using phalanx::http::Request;
using phalanx::http::Response;

constexpr int kServerThreads = 2;
constexpr size_t kBodyBytes = 100 * 1024;

// Started once and kept for the whole run (benchmarks with different thread counts share it).
int ServerPort() {
  static HttpServer* server = [] {
    auto started = phalanx::http::NewBeastServer(
        {.address = "127.0.0.1", .port = 0, .threads = kServerThreads});
    started->Handle("/ack", [](const Request& request) {
      return Response::Json(200, "{\"bytes\":" + std::to_string(request.body.size()) + "}");
    });
    started->Handle("/echo",
                    [](const Request& request) { return Response::Json(200, request.body); });
    if (!started->Start().ok()) return static_cast<HttpServer*>(nullptr);
    return started.release();
  }();
  return server == nullptr ? -1 : server->port();
}

const std::string& Body() {
  static const std::string* body = [] {
    auto* text = new std::string("{\"NodeNames\":[");
    for (int i = 0; text->size() < kBodyBytes - 32; ++i) {
      text->append(i == 0 ? "" : ",").append("\"node-" + std::to_string(i) + "\"");
    }
    text->append("]}");
    return text;
  }();
  return *body;
}

void BM_Post100KB(benchmark::State& state, const char* path) {
  const int port = ServerPort();
  if (port < 0) {
    state.SkipWithError("the server did not start");
    return;
  }
  const std::string& body = Body();
  HttpClient client("127.0.0.1", port);
  size_t response_bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<Response> response = client.Post(path, body, "application/json");
    if (!response.ok() || response->status != 200) {
      state.SkipWithError(response.ok() ? "status != 200" : response.status().ToString().c_str());
      return;
    }
    response_bytes = response->body.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  // Per client thread (Google Benchmark would otherwise sum them over the threads).
  using benchmark::Counter;
  state.counters["request_bytes"] = Counter(static_cast<double>(body.size()), Counter::kAvgThreads);
  state.counters["response_bytes"] =
      Counter(static_cast<double>(response_bytes), Counter::kAvgThreads);
  state.counters["connections_per_client"] =
      Counter(client.connections_opened(), Counter::kAvgThreads);
}

BENCHMARK_CAPTURE(BM_Post100KB, ack, "/ack")->Threads(2)->Threads(4)->UseRealTime();
BENCHMARK_CAPTURE(BM_Post100KB, echo, "/echo")->Threads(2)->Threads(4)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
