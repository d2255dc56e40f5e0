// `phalanx bench extender`: what one kube-scheduler filter call costs phalanx-scheduler. Builds a
// synthetic cluster (scheduler/synthetic_cluster.h) holding a gang reservation, then times the
// extender's filter for a gang pod with every node as a candidate, (a) in process (decode, decide,
// encode) and (b) over HTTP through the Beast server with a keep-alive load generator on loopback.
// With --json it prints exactly one JSON line.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/http/http_client.h"
#include "common/http/http_server_beast.h"
#include "fmt/format.h"
#include "scheduler/extender/extender.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/synthetic_cluster.h"

namespace phalanx::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kUsage[] =
    R"(Usage: phalanx bench extender [--nodes N] [--iterations K] [--seconds S] [--clients C]
                              [--max-requests R] [--server-threads T]
                              [--fail-unreserved true|false] [--json]

Builds a synthetic cluster of N nodes x 8 GPUs with a 16-pod gang reservation (TrainingJob
bench/llama), then times kube-scheduler's filter call for rank 3 of that gang with all N node
names as candidates (NodeNames, as with nodeCacheCapable: true): the extender keeps the reserved
node (and, with --fail-unreserved true, lists the other N-1 as failed with a reason).

  (a) in process: K calls of the whole decode + decide + encode; p50/p99 wall clock and thread
      CPU time (which leaves out time the OS gave to other processes).
  (b) over HTTP: the Beast server (T worker threads) on 127.0.0.1 and C client threads, each with
      one keep-alive connection, posting the same body for S seconds or R requests in all,
      whichever comes first; requests/s and errors (a status other than 200, a transport
      error, or a reply that does not pin the pod).

  --nodes N           candidate nodes, 64 to 100000 (default 5000)
  --iterations K      in-process calls to time, 1 to 10000000 (default 2000)
  --seconds S         HTTP load duration, 0 to 3600, 0 skips the HTTP part (default 5)
  --clients C         HTTP client threads, 1 to 64 (default 4)
  --max-requests R    HTTP requests at most, in all (default 1000000)
  --server-threads T  HTTP server worker threads, 1 to 64 (default 2)
  --fail-unreserved B whether the reply lists the N-1 other nodes as failed (ExtenderOptions::
                      fail_unreserved_nodes; default false)
  --json              print one JSON line:
                      {"nodes":..,"filter_p50_us":..,"filter_p99_us":..,
                       "http_requests_per_s":..,"errors":..,...}

Exit codes: 0 success (errors are reported, not fatal), 1 runtime failure, 2 bad input.)";

constexpr char kCommand[] = "bench extender";

int Failure(const std::string& message) {
  std::fprintf(stderr, "phalanx bench extender: %s\n", message.c_str());
  return kExitFailure;
}

struct Flags {
  int nodes = 5000;
  int iterations = 2000;
  double seconds = 5;
  int clients = 4;
  int64_t max_requests = 1'000'000;
  int server_threads = 2;
  bool fail_unreserved = false;
  bool json = false;
};

// The value at fraction p of an ascending vector (nearest rank).
double At(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1,
                         static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5))];
}

double CpuNowNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e9 + static_cast<double>(now.tv_nsec);
}

// A filter body as kube-scheduler v1.34 writes it for a TrainingJob pod (the shape of
// tests/unit/scheduler/extender/testdata/filter_node_names.json): the whole v1.Pod, then
// "Nodes":null and the candidate names.
std::string FilterBody(const std::vector<std::string>& names) {
  std::string body = fmt::format(
      R"({{"Pod":{{"metadata":{{"name":"llama-3","namespace":"bench",)"
      R"("uid":"6f1d2c2e-8f7a-4c59-9b1e-2f4c3b2a1d00","resourceVersion":"81234",)"
      R"("creationTimestamp":"2025-06-01T12:00:00Z","labels":{{"app":"llama",)"
      R"("phalanx.dev/job":"llama","phalanx.dev/rank":"3"}},)"
      R"("ownerReferences":[{{"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob",)"
      R"("name":"llama","uid":"0b7e5d4c-3a21-4f9e-8d7c-6b5a4f3e2d10","controller":true,)"
      R"("blockOwnerDeletion":true}}],"managedFields":[{{"manager":"phalanx-operator",)"
      R"("operation":"Update","apiVersion":"v1","time":"2025-06-01T12:00:00Z",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{{"f:metadata":{{"f:labels":{{".":{{}},)"
      R"("f:phalanx.dev/job":{{}},"f:phalanx.dev/rank":{{}}}}}}}}}}]}},)"
      R"("spec":{{"containers":[{{"name":"trainer","image":"registry.example/llama:1",)"
      R"("command":["torchrun"],"args":["--nnodes=16","train.py"],"env":[)"
      R"({{"name":"MASTER_ADDR","value":"llama-0.llama"}},)"
      R"({{"name":"MASTER_PORT","value":"29500"}},)"
      R"({{"name":"WORLD_SIZE","value":"16"}},{{"name":"RANK","value":"3"}}],)"
      R"("resources":{{"limits":{{"nvidia.com/gpu":"8","vpc.amazonaws.com/efa":"32"}},)"
      R"("requests":{{"cpu":"96","memory":"1Ti","nvidia.com/gpu":"8",)"
      R"("vpc.amazonaws.com/efa":"32"}}}},"terminationMessagePath":"/dev/termination-log",)"
      R"("terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}}],)"
      R"("restartPolicy":"Never","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",)"
      R"("serviceAccountName":"default","serviceAccount":"default","securityContext":{{}},)"
      R"("schedulerName":"phalanx","tolerations":[{{"key":"nvidia.com/gpu","operator":"Exists",)"
      R"("effect":"NoSchedule"}}],"priority":0,"enableServiceLinks":true,)"
      R"("preemptionPolicy":"PreemptLowerPriority"}},"status":{{"phase":"Pending",)"
      R"("qosClass":"Burstable"}}}},"Nodes":null,"NodeNames":[)");
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) body.push_back(',');
    body.push_back('"');
    body.append(names[i]);
    body.push_back('"');
  }
  body.append("]}");
  return body;
}

// Binds nothing: the benchmark only filters.
class NoBinder : public extender::Binder {
 public:
  absl::Status Bind(std::string_view, std::string_view, std::string_view,
                    std::string_view) override {
    return absl::UnimplementedError("the benchmark does not bind");
  }
};

struct HttpFigures {
  int64_t requests = 0;
  int64_t errors = 0;
  double seconds = 0;
  int connections = 0;
  std::string first_error;
};

// C client threads posting `body` until `seconds` pass or `max_requests` were sent in all.
HttpFigures DriveHttp(int port, const std::string& body, std::string_view expect_prefix,
                      const Flags& flags) {
  std::atomic<int64_t> issued{0};
  std::atomic<int64_t> ok{0};
  std::atomic<int64_t> errors{0};
  std::atomic<int> connections{0};
  std::mutex first_error_mu;
  std::string first_error;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::microseconds(static_cast<int64_t>(flags.seconds * 1e6));
  std::vector<std::thread> clients;
  for (int c = 0; c < flags.clients; ++c) {
    clients.emplace_back([&] {
      http::HttpClient client("127.0.0.1", port, {.timeout_ms = 10'000});
      while (Clock::now() < deadline && issued.fetch_add(1) < flags.max_requests) {
        absl::StatusOr<http::Response> response =
            client.Post("/filter", body, "application/json");
        std::string problem;
        if (!response.ok()) {
          problem = response.status().ToString();
        } else if (response->status != 200) {
          problem = fmt::format("HTTP {}: {}", response->status, response->body.substr(0, 200));
        } else if (response->body.compare(0, expect_prefix.size(), expect_prefix) != 0) {
          problem = fmt::format("unexpected reply: {}", response->body.substr(0, 200));
        }
        if (problem.empty()) {
          ok.fetch_add(1);
          continue;
        }
        errors.fetch_add(1);
        std::lock_guard<std::mutex> lock(first_error_mu);
        if (first_error.empty()) first_error = problem;
      }
      connections.fetch_add(client.connections_opened());
    });
  }
  for (std::thread& client : clients) client.join();
  HttpFigures figures;
  figures.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  figures.requests = ok.load();
  figures.errors = errors.load();
  figures.connections = connections.load();
  figures.first_error = first_error;
  return figures;
}

absl::Status ParseFlags(const std::vector<std::string>& args, Flags* flags) {
  FlagSet set;
  set.Int({"--nodes"}, &flags->nodes, 64, static_cast<int64_t>(extender::kMaxNodeNames))
      .Int({"--iterations"}, &flags->iterations, 1, 10'000'000)
      .Double({"--seconds"}, &flags->seconds, 0, 3600)
      .Int({"--clients"}, &flags->clients, 1, 64)
      .Int({"--max-requests"}, &flags->max_requests, 1, std::numeric_limits<int64_t>::max())
      .Int({"--server-threads"}, &flags->server_threads, 1, 64)
      .Custom({"--fail-unreserved"},
              [flags](const std::string& value) {
                return absl::SimpleAtob(value, &flags->fail_unreserved)
                           ? absl::OkStatus()
                           : absl::InvalidArgumentError(
                                 absl::StrCat("want true or false, got ", Quoted(value)));
              })
      .Bool({"--json"}, &flags->json);
  return set.Parse(args);
}

int RunBenchExtender(const std::vector<std::string>& args) {
  Flags flags;
  if (absl::Status parsed = ParseFlags(args, &flags); !parsed.ok()) {
    return BadInput(kCommand, parsed);
  }
  // Warnings and errors to stderr; stdout is the report (one JSON line with --json).
  if (absl::Status logging = InitLogging("warn"); !logging.ok()) {
    return Failure(logging.ToString());
  }

  placement::SyntheticClusterOptions options;
  options.nodes = flags.nodes;
  options.occupancy = 0.5;
  absl::StatusOr<placement::SyntheticCluster> cluster = placement::BuildSyntheticCluster(options);
  if (!cluster.ok()) return Failure(cluster.status().ToString());
  std::vector<std::string> names;
  names.reserve(cluster->snapshot.nodes().size());
  for (const auto& node : cluster->snapshot.nodes()) names.push_back(node.info.name);
  placement::InProcessPlacementService service(std::move(cluster->snapshot));
  absl::StatusOr<placement::PlacementResult> reserved =
      service.Reserve(placement::GpuGang("bench/llama", 16, 8, options));
  if (!reserved.ok()) return Failure(reserved.status().ToString());
  if (!reserved->placed) {
    return Failure("the gang did not fit: " + reserved->explanation.summary);
  }
  const std::string& pinned = reserved->placement.nodes[3];
  const std::string expect_prefix = fmt::format(R"({{"Nodes":null,"NodeNames":["{}"],)", pinned);

  NoBinder binder;
  extender::Extender extender(service, binder,
                              {.fail_unreserved_nodes = flags.fail_unreserved});
  const std::string body = FilterBody(names);

  // (a) In process.
  std::vector<double> wall_us;
  std::vector<double> cpu_us;
  wall_us.reserve(static_cast<size_t>(flags.iterations));
  cpu_us.reserve(static_cast<size_t>(flags.iterations));
  int64_t errors = 0;
  size_t reply_bytes = 0;
  for (int i = 0; i < flags.iterations; ++i) {
    const double cpu_start = CpuNowNs();
    const Clock::time_point start = Clock::now();
    extender::Reply reply = extender.HandleFilter(body);
    wall_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    cpu_us.push_back((CpuNowNs() - cpu_start) / 1e3);
    reply_bytes = reply.response.body.size();
    if (reply.outcome != extender::Outcome::kPinned || reply.response.status != 200 ||
        reply.response.body.compare(0, expect_prefix.size(), expect_prefix) != 0) {
      ++errors;
    }
  }
  std::sort(wall_us.begin(), wall_us.end());
  std::sort(cpu_us.begin(), cpu_us.end());

  // (b) Over HTTP.
  HttpFigures http_figures;
  if (flags.seconds > 0) {
    std::unique_ptr<http::HttpServer> server = http::NewBeastServer(
        {.address = "127.0.0.1", .port = 0, .threads = flags.server_threads});
    server->Handle("/filter", extender::MakeHandler(extender, extender::Verb::kFilter));
    if (absl::Status started = server->Start(); !started.ok()) {
      return Failure(started.ToString());
    }
    http_figures = DriveHttp(server->port(), body, expect_prefix, flags);
    server->Stop();
    errors += http_figures.errors;
  }
  const double requests_per_s =
      http_figures.seconds > 0 ? static_cast<double>(http_figures.requests) / http_figures.seconds
                               : 0;

  if (flags.json) {
    std::printf(
        "{\"nodes\":%d,\"filter_p50_us\":%.1f,\"filter_p99_us\":%.1f,"
        "\"http_requests_per_s\":%.0f,\"errors\":%lld,\"filter_max_us\":%.1f,"
        "\"filter_p50_cpu_us\":%.1f,\"filter_p99_cpu_us\":%.1f,\"iterations\":%d,"
        "\"request_bytes\":%zu,\"reply_bytes\":%zu,\"http_requests\":%lld,\"http_seconds\":%.2f,"
        "\"clients\":%d,\"server_threads\":%d,\"connections\":%d,\"fail_unreserved\":%s}\n",
        flags.nodes, At(wall_us, 0.50), At(wall_us, 0.99), requests_per_s,
        static_cast<long long>(errors), wall_us.back(), At(cpu_us, 0.50), At(cpu_us, 0.99),
        flags.iterations, body.size(), reply_bytes,
        static_cast<long long>(http_figures.requests), http_figures.seconds, flags.clients,
        flags.server_threads, http_figures.connections,
        flags.fail_unreserved ? "true" : "false");
  } else {
    std::printf("cluster:    %d nodes, gang bench/llama of 16 reserved; rank 3 on %s\n",
                flags.nodes, pinned.c_str());
    std::printf("request:    %zu bytes (%d node names); reply %zu bytes\n", body.size(),
                flags.nodes, reply_bytes);
    std::printf("in process: p50 %.1f us, p99 %.1f us, max %.1f us over %d calls (wall)\n",
                At(wall_us, 0.50), At(wall_us, 0.99), wall_us.back(), flags.iterations);
    std::printf("            p50 %.1f us, p99 %.1f us (thread CPU time)\n", At(cpu_us, 0.50),
                At(cpu_us, 0.99));
    if (flags.seconds > 0) {
      std::printf("http:       %.0f requests/s: %lld in %.2f s, %d clients on %d connections, "
                  "%d server threads\n",
                  requests_per_s, static_cast<long long>(http_figures.requests),
                  http_figures.seconds, flags.clients, http_figures.connections,
                  flags.server_threads);
    }
    std::printf("errors:     %lld\n", static_cast<long long>(errors));
  }
  if (!http_figures.first_error.empty()) {
    std::fprintf(stderr, "phalanx bench extender: first HTTP error: %s\n",
                 http_figures.first_error.c_str());
  }
  return kExitOk;
}

PHALANX_COMMAND("bench extender",
                "time kube-scheduler's extender filter call in process and over HTTP",
                kUsage, RunBenchExtender);

}  // namespace
}  // namespace phalanx::cli
