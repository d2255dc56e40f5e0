// Hostile and bad input against phalanx-scheduler's three serving endpoints and the probe port,
// built exactly as the binaries build them (scheduler/server/serving.h, common/http/
// probe_server.h) on 127.0.0.1 ephemeral ports, over real sockets. The placement core behind
// them is the real InProcessPlacementService; only the API binder is a gMock.
//
// Each test sends one kind of bad input (truncated JSON, a body just over the limit, a
// Content-Length that lies, fields of the wrong type, deep nesting, seeded random bytes, a
// stalled client, too many connections, gRPC messages over the limit or with invalid fields,
// random bytes on the gRPC port) and checks two things a user would notice: the answer is a
// clear refusal naming the field or the limit, and a normal request succeeds right after.
// Loops are bounded and seeded, so a failure reproduces.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/http/http_client.h"
#include "common/http/probe_server.h"
#include "common/metrics/registry.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "phalanx/v1alpha1/placement.grpc.pb.h"
#include "scheduler/extender/extender.h"
#include "scheduler/grpc/placement_grpc_server.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/server/scheduler_config.h"
#include "scheduler/server/serving.h"
#include "scheduler/snapshot_summary.h"
#include "tests/mocks/scheduler/mock_binder.h"
#include "tests/unit/common/http/raw_connection.h"
#include "tests/unit/scheduler/extender/extender_bodies.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::scheduler {
namespace {

namespace pb = ::phalanx::v1alpha1;
using ::phalanx::extender::testing::ArgsBody;
using ::phalanx::extender::testing::BindingBody;
using ::phalanx::extender::testing::GangPod;
using ::phalanx::extender::testing::ParseFilterResult;
using ::phalanx::extender::testing::PlainPod;
using ::phalanx::http::testing::RawConnection;
using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::NiceMock;
using ::testing::Pair;
using ::testing::Return;
using ::testing::StartsWith;

constexpr int kExtenderLimit = 64 << 10;  // small, so "just over" stays fast
constexpr int kGrpcLimit = 64 << 10;
constexpr int kMaxConnections = 6;

// The status code and body of a raw HTTP response ("" and 0 when there was none).
struct RawAnswer {
  int status = 0;
  std::string text;
};
RawAnswer ParseRaw(const std::string& text) {
  RawAnswer answer{0, text};
  if (text.rfind("HTTP/1.1 ", 0) == 0 && text.size() >= 12) {
    answer.status = std::stoi(text.substr(9, 3));
  }
  return answer;
}

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.extender_address = "127.0.0.1:0";
    config_.grpc_address = "127.0.0.1:0";
    config_.health_address = "127.0.0.1:0";
    // One worker: a client that stalls must not hold it.
    config_.http_threads = 1;
    config_.extender_max_body_bytes = kExtenderLimit;
    config_.grpc_max_message_bytes = kGrpcLimit;
    config_.http_read_timeout_seconds = 1;
    config_.http_max_connections = kMaxConnections;

    placement::ClusterSnapshot snapshot(placement::testing::Eks());
    placement::testing::AddNodes(snapshot, {"a", "b", "nn-1"}, "n", 4);
    service_ = std::make_unique<placement::InProcessPlacementService>(std::move(snapshot));
    ASSERT_OK_AND_ASSIGN(placement::PlacementResult reserved,
                         service_->Reserve(placement::testing::Gang("ml/llama", 2, 8)));
    ASSERT_TRUE(reserved.placed);
    reserved_node_ = reserved.placement.nodes[0];
    ON_CALL(binder_, Bind).WillByDefault(Return(absl::OkStatus()));

    rejections_ = std::make_unique<http::RejectionMetrics>(registry_);
    extender_ = std::make_unique<extender::Extender>(*service_, binder_);
    webhook_ = NewExtenderServer(config_, *extender_, registry_, *rejections_);
    ASSERT_OK(webhook_->Start());
    probes_ = http::NewProbeServer(HttpServerOptions(config_, config_.health_address, 1),
                                   registry_, *rejections_,
                                   [] { return http::Response::Text(200, "ok\n"); });
    ASSERT_OK(probes_->Start());
    grpc_service_ = std::make_unique<placement::PlacementGrpcService>(
        *service_,
        [this](const placement::SummaryOptions& options) {
          placement::SnapshotSummary summary;
          service_->Read([&](const placement::ClusterSnapshot& s) {
            summary = placement::Summarize(s, options);
          });
          return summary;
        },
        GrpcMetrics(registry_));
    ASSERT_OK_AND_ASSIGN(grpc_, StartGrpcServer(config_, std::nullopt, *grpc_service_));
    channel_ = ::grpc::CreateChannel(absl::StrCat("127.0.0.1:", grpc_.port),
                                     ::grpc::InsecureChannelCredentials());
    stub_ = pb::Placement::NewStub(channel_);
    client_ = std::make_unique<http::HttpClient>("127.0.0.1", webhook_->port(),
                                                 http::ClientOptions{.timeout_ms = 10'000});
  }

  void TearDown() override {
    client_.reset();
    if (grpc_.server) grpc_.server->Shutdown(std::chrono::system_clock::now());
    if (webhook_) webhook_->Stop();
    if (probes_) probes_->Stop();
  }

  std::string GangFilterBody() const {
    return ArgsBody(GangPod("ml", "llama-0", "llama", "0"), {"n0", "n1", "n2", "n3"});
  }

  absl::StatusOr<http::Response> PostExtender(const std::string& verb, const std::string& body) {
    return client_->Post("/scheduler/" + verb, body, "application/json");
  }

  // The normal requests of every endpoint still succeed: a gang pod's filter is pinned to its
  // reserved node, the probes answer, and a Placement call is answered.
  void ExpectStillServing() {
    SCOPED_TRACE("a normal request after the bad input");
    http::HttpClient fresh("127.0.0.1", webhook_->port(), {.timeout_ms = 10'000});
    absl::StatusOr<http::Response> filter =
        fresh.Post("/scheduler/filter", GangFilterBody(), "application/json");
    ASSERT_OK(filter.status());
    ASSERT_EQ(filter->status, 200) << filter->body;
    EXPECT_THAT(*ParseFilterResult(filter->body).node_names, ElementsAre(reserved_node_));
    http::HttpClient probe("127.0.0.1", probes_->port(), {.timeout_ms = 10'000});
    absl::StatusOr<http::Response> healthz = probe.Get("/healthz");
    ASSERT_OK(healthz.status());
    EXPECT_EQ(healthz->status, 200);
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    pb::GangRequest request;
    request.set_job("ml/probe");
    request.set_count(1);
    (*request.mutable_per_pod())["nvidia.com/gpu"] = 8;
    pb::PlacementResult result;
    ::grpc::Status status = stub_->Explain(&context, request, &result);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(result.placed());
  }

  // The value of one series of /metrics, scraped over HTTP as Prometheus would.
  double Metric(const std::string& series) {
    http::HttpClient probe("127.0.0.1", probes_->port(), {.timeout_ms = 10'000});
    absl::StatusOr<http::Response> scraped = probe.Get("/metrics");
    EXPECT_OK(scraped.status());
    if (!scraped.ok()) return -1;
    const std::string& text = scraped->body;
    size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) {
      ADD_FAILURE() << series << " is not in /metrics";
      return -1;
    }
    return std::stod(text.substr(at + series.size() + 2));
  }
  double Rejected(const std::string& server, const std::string& reason) {
    return Metric(absl::StrCat("phalanx_http_requests_rejected_total{server=\"", server,
                               "\",reason=\"", reason, "\"}"));
  }

  SchedulerConfig config_;
  metrics::Registry registry_;
  NiceMock<extender::MockBinder> binder_;
  std::unique_ptr<placement::InProcessPlacementService> service_;
  std::string reserved_node_;
  std::unique_ptr<http::RejectionMetrics> rejections_;
  std::unique_ptr<extender::Extender> extender_;
  std::unique_ptr<http::HttpServer> webhook_;
  std::unique_ptr<http::HttpServer> probes_;
  std::unique_ptr<placement::PlacementGrpcService> grpc_service_;
  placement::RunningPlacementServer grpc_;
  std::shared_ptr<::grpc::Channel> channel_;
  std::unique_ptr<pb::Placement::Stub> stub_;
  std::unique_ptr<http::HttpClient> client_;
};

// ---- the extender webhook -----------------------------------------------------------------

TEST_F(HostileInputTest, TruncatedJsonIs400NamingTheProblemOnAConnectionThatStaysUsable) {
  const std::string body = GangFilterBody();
  for (size_t length = 0; length < body.size(); length += 37) {
    absl::StatusOr<http::Response> reply = PostExtender("filter", body.substr(0, length));
    ASSERT_OK(reply.status());
    ASSERT_EQ(reply->status, 400) << length;
    EXPECT_THAT(reply->body, StartsWith("phalanx extender: ")) << length;
  }
  absl::StatusOr<http::Response> reply = PostExtender("filter", body.substr(0, body.size() / 2));
  ASSERT_OK(reply.status());
  EXPECT_THAT(reply->body, HasSubstr("JSON"));
  // The same keep-alive connection answered every one, as kube-scheduler's client would reuse it.
  EXPECT_EQ(client_->connections_opened(), 1);
  EXPECT_GE(Metric("phalanx_extender_requests_total{verb=\"filter\",outcome=\"bad_request\"}"),
            body.size() / 37);
  ExpectStillServing();
}

TEST_F(HostileInputTest, ABodyJustOverTheLimitIs413AndOneAtTheLimitIsDecoded) {
  std::string at_limit = GangFilterBody();
  at_limit.append(static_cast<size_t>(kExtenderLimit) - at_limit.size(), ' ');
  absl::StatusOr<http::Response> reply = PostExtender("filter", at_limit);
  ASSERT_OK(reply.status());
  EXPECT_EQ(reply->status, 200) << reply->body;

  reply = PostExtender("filter", at_limit + " ");
  ASSERT_OK(reply.status());
  EXPECT_EQ(reply->status, 413);
  EXPECT_EQ(reply->body, absl::StrCat("request body larger than ", kExtenderLimit, " bytes\n"));
  EXPECT_EQ(Rejected("extender", "body_too_large"), 1);
  ExpectStillServing();
}

TEST_F(HostileInputTest, AContentLengthOverTheLimitIsRefusedBeforeTheBodyArrives) {
  RawConnection raw(webhook_->port());
  ASSERT_TRUE(raw.Send(absl::StrCat(
      "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: ",
      kExtenderLimit + 1, "\r\n\r\n{\"Pod\":")));
  // The body never comes: the answer is decided from the header alone.
  RawAnswer answer = ParseRaw(raw.ReadUntil(" bytes\n", std::chrono::seconds(5)));
  EXPECT_EQ(answer.status, 413) << answer.text;
  EXPECT_THAT(answer.text, HasSubstr("request body larger than 65536 bytes"));
  ExpectStillServing();
}

TEST_F(HostileInputTest, AStalledHalfBodyIsClosedAfterTheReadTimeoutWhileOthersAreServed) {
  const std::string body = GangFilterBody();
  RawConnection stalled(webhook_->port());
  ASSERT_TRUE(stalled.Send(absl::StrCat(
      "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: ",
      body.size(), "\r\n\r\n", body.substr(0, body.size() / 2))));
  // The server has one worker thread; the stalled client holds none of it.
  ExpectStillServing();
  const auto start = std::chrono::steady_clock::now();
  std::string answer = stalled.ReadUntilClosed(std::chrono::seconds(10));
  EXPECT_TRUE(stalled.closed()) << "the stalled connection is still open after 10 s";
  EXPECT_EQ(answer, "");  // nobody to answer: the request never arrived
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Beast's stream closes the socket when its timer fires and only then runs the read handler
  // that counts the refusal, so the client can see the close first (it did, once, in a loaded
  // CI run): wait for the count instead of reading it at once.
  const auto counted_by = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (Rejected("extender", "timeout") < 1 && std::chrono::steady_clock::now() < counted_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Rejected("extender", "timeout"), 1);
  ExpectStillServing();
}

TEST_F(HostileInputTest, AContentLengthShorterThanTheBodyIs400ForBothPieces) {
  const std::string body = GangFilterBody();
  RawConnection raw(webhook_->port());
  ASSERT_TRUE(raw.Send(absl::StrCat(
      "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: 40\r\n\r\n",
      body)));
  std::string text = raw.ReadUntilClosed(std::chrono::seconds(5));
  // The first 40 bytes are truncated JSON (the extender's 400); the rest is not a request line
  // (the server's 400), after which the connection closes.
  EXPECT_THAT(text, StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(text, HasSubstr("phalanx extender: "));
  EXPECT_THAT(text, HasSubstr("bad request: "));
  EXPECT_TRUE(raw.closed());
  EXPECT_EQ(Rejected("extender", "malformed"), 1);
  ExpectStillServing();
}

TEST_F(HostileInputTest, WrongTypedFieldsAre400NamingTheField) {
  const std::string pod = R"("Pod":{"metadata":{"name":"p","namespace":"ml"}})";
  struct Case {
    std::string verb;
    std::string body;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"filter", R"({"Pod":"p","NodeNames":["n0"]})", "Pod: expected an object"},
      {"filter", R"({"Pod":[1,2],"NodeNames":["n0"]})", "Pod: expected an object"},
      {"filter", R"({"Pod":null,"NodeNames":["n0"]})", "Pod: missing"},
      {"filter", R"({"Pod":{"metadata":{"name":7,"namespace":"ml"}},"NodeNames":["n0"]})",
       "Pod.metadata.name: expected a string"},
      {"filter", R"({"Pod":{"metadata":{"name":"p","namespace":"ml","labels":["x"]}},"NodeNames":[]})",
       "Pod.metadata.labels: expected an object"},
      {"filter",
       R"({"Pod":{"metadata":{"name":"p","namespace":"ml","labels":{"phalanx.dev/rank":0}}},"NodeNames":[]})",
       "Pod.metadata.labels[\"phalanx.dev/rank\"]: expected a string"},
      {"filter", "{" + pod + R"(,"NodeNames":"n0"})", "NodeNames: expected an array of strings"},
      {"filter", "{" + pod + R"(,"NodeNames":{"n0":true}})", "NodeNames: expected an array"},
      {"filter", "{" + pod + R"(,"NodeNames":["n0",1]})", "NodeNames[1]: expected a string"},
      {"filter", "{" + pod + R"(,"NodeNames":["n0",null]})", "NodeNames[1]: expected a string"},
      {"filter", "{" + pod + R"(,"NodeNames":[""]})", "NodeNames[0]: empty name"},
      {"filter", "{" + pod + R"(,"NodeNames":[")" + std::string(300, 'n') + R"("]})",
       "NodeNames[0]: longer than 253 bytes"},
      {"filter", "{" + pod + R"(,"NodeNames":null})", "NodeNames: missing, and no Nodes either"},
      {"filter", "{" + pod + R"(,"Nodes":{"items":{}}})", "Nodes.items: expected an array"},
      {"prioritize", "{" + pod + R"(,"NodeNames":[true]})", "NodeNames[0]: expected a string"},
      {"filter", "[]", "body: expected a JSON object"},
      {"filter", "null", "body: expected a JSON object"},
      {"filter", "\"ExtenderArgs\"", "body: expected a JSON object"},
      {"filter", "42", "body: expected a JSON object"},
      {"filter", "{" + pod + R"(,"NodeNames":["n0"]} {})", "trailing content"},
      {"bind", R"({"PodName":5,"PodNamespace":"ml","Node":"n0"})", "PodName: expected a string"},
      {"bind", R"({"PodName":"p","PodNamespace":"ml","Node":null})", "Node: missing"},
      {"bind", R"({"PodName":"p","PodNamespace":["ml"],"Node":"n0"})",
       "PodNamespace: expected a string"},
      {"bind", R"([{"PodName":"p"}])", "body: expected a JSON object"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<http::Response> reply = PostExtender(c.verb, c.body);
    ASSERT_OK(reply.status());
    EXPECT_EQ(reply->status, 400) << c.body;
    EXPECT_THAT(reply->body, AllOf(StartsWith("phalanx extender: "), HasSubstr(c.message)))
        << c.body;
  }
  ExpectStillServing();
}

TEST_F(HostileInputTest, DeepNestingIsRefusedOrSkippedNeverACrash) {
  // Nesting far past simdjson's depth limit (1,024) where the extender must descend (refused),
  // and inside a field it skips.
  for (int depth : {100, 2'000, 30'000}) {
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    absl::StatusOr<http::Response> top = PostExtender("filter", deep);
    ASSERT_OK(top.status());
    EXPECT_EQ(top->status, 400) << depth;
    EXPECT_THAT(top->body, StartsWith("phalanx extender: ")) << depth;

    const std::string skipped =
        R"({"Pod":{"metadata":{"name":"p","namespace":"ml"},"spec":{"x":)" + deep +
        R"(}},"NodeNames":["n0"]})";
    absl::StatusOr<http::Response> inner = PostExtender("filter", skipped);
    ASSERT_OK(inner.status());
    // A field the extender does not read is skipped by counting brackets, without recursion,
    // so any depth there costs one linear pass and the request is answered.
    EXPECT_EQ(inner->status, 200) << depth;
    const int object_depth = std::min(depth, 10'000);  // 6 bytes a level: within the limit
    std::string objects;
    for (int i = 0; i < object_depth; ++i) objects += "{\"a\":";
    objects += "1" + std::string(object_depth, '}');
    absl::StatusOr<http::Response> nested_objects = PostExtender("bind", objects);
    ASSERT_OK(nested_objects.status());
    EXPECT_EQ(nested_objects->status, 400) << depth;
  }
  ExpectStillServing();
}

TEST_F(HostileInputTest, SeededRandomBodiesAre400AndRandomRequestsAreRefused) {
  std::mt19937 random(20261125);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 4096);
  const std::vector<std::string> verbs = {"filter", "prioritize", "bind"};
  for (int i = 0; i < 150; ++i) {
    std::string body(static_cast<size_t>(length(random)), '\0');
    for (char& c : body) c = static_cast<char>(byte(random));
    absl::StatusOr<http::Response> reply = PostExtender(verbs[i % 3], body);
    ASSERT_OK(reply.status());
    ASSERT_EQ(reply->status, 400) << "body " << i;
    ASSERT_THAT(reply->body, StartsWith("phalanx extender: ")) << "body " << i;
  }
  // Random bytes as the whole request, not just the body: the server's own 400, or (when they
  // happen to end nowhere near a request's end) a close after the read timeout.
  for (int i = 0; i < 20; ++i) {
    std::string bytes(static_cast<size_t>(length(random)) + 1, '\0');
    for (char& c : bytes) c = static_cast<char>(byte(random));
    RawConnection raw(webhook_->port());
    raw.Send(bytes);
    RawAnswer answer = ParseRaw(raw.ReadUntilClosed(std::chrono::seconds(5)));
    EXPECT_TRUE(raw.closed()) << "request " << i;
    EXPECT_THAT(answer.status, AnyOf(0, 400)) << answer.text;
  }
  EXPECT_GE(Rejected("extender", "malformed"), 1);
  ExpectStillServing();
}

TEST_F(HostileInputTest, WrongMethodContentTypeAndPathAreRefusedClearly) {
  absl::StatusOr<http::Response> reply = client_->Get("/scheduler/filter");
  ASSERT_OK(reply.status());
  EXPECT_EQ(reply->status, 405);
  EXPECT_EQ(reply->body, "phalanx extender: filter takes POST, not GET\n");
  reply = client_->Post("/scheduler/bind", BindingBody("ml", "p", "uid-p", "n0"), "text/plain");
  ASSERT_OK(reply.status());
  EXPECT_EQ(reply->status, 415);
  EXPECT_EQ(reply->body, "phalanx extender: bind takes application/json, not text/plain\n");
  reply = PostExtender("preempt", "{}");
  ASSERT_OK(reply.status());
  EXPECT_EQ(reply->status, 404);

  // The Allow header, read off the wire.
  RawConnection raw(webhook_->port());
  ASSERT_TRUE(raw.Send("DELETE /scheduler/bind HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string head = raw.ReadUntil("\r\n\r\n", std::chrono::seconds(5));
  EXPECT_THAT(head, StartsWith("HTTP/1.1 405"));
  EXPECT_THAT(head, HasSubstr("Allow: POST\r\n"));
  ExpectStillServing();
}

TEST_F(HostileInputTest, AnOversizedHeaderIs431) {
  RawConnection raw(webhook_->port());
  ASSERT_TRUE(raw.Send("POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nX-Big: " +
                       std::string(16 << 10, 'x') + "\r\n\r\n"));
  EXPECT_THAT(raw.ReadUntilClosed(std::chrono::seconds(5)), StartsWith("HTTP/1.1 431"));
  EXPECT_EQ(Rejected("extender", "header_too_large"), 1);
  ExpectStillServing();
}

TEST_F(HostileInputTest, ConnectionsOverTheLimitAre503AndServiceResumesWhenTheyClose) {
  std::vector<std::unique_ptr<RawConnection>> idle;
  // The fixture's keep-alive client has no connection open yet; fill every slot.
  for (int i = 0; i < kMaxConnections; ++i) {
    idle.push_back(std::make_unique<RawConnection>(webhook_->port()));
  }
  // Connections are registered as they are accepted: give the server a moment to see them all.
  std::string refused;
  for (int attempt = 0; attempt < 50 && refused.empty(); ++attempt) {
    RawConnection extra(webhook_->port());
    refused = extra.ReadUntilClosed(std::chrono::milliseconds(200));
  }
  EXPECT_THAT(refused, StartsWith("HTTP/1.1 503"));
  EXPECT_THAT(refused, HasSubstr("too many connections (limit 6)"));
  EXPECT_GE(Rejected("extender", "too_many_connections"), 1);
  idle.clear();
  // Closed connections free their slots at once on the server's side, but let it notice.
  absl::StatusOr<http::Response> reply;
  for (int attempt = 0; attempt < 50; ++attempt) {
    http::HttpClient fresh("127.0.0.1", webhook_->port(), {.timeout_ms = 5'000});
    reply = fresh.Post("/scheduler/filter", GangFilterBody(), "application/json");
    if (reply.ok() && reply->status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_OK(reply.status());
  EXPECT_EQ(reply->status, 200);
  ExpectStillServing();
}

// ---- the probe port -----------------------------------------------------------------------

TEST_F(HostileInputTest, ProbesTakeGetAndHeadOnlyAndSmallBodies) {
  http::HttpClient probe("127.0.0.1", probes_->port(), {.timeout_ms = 10'000});
  for (const char* path : {"/healthz", "/readyz", "/metrics"}) {
    absl::StatusOr<http::Response> reply = probe.Post(path, "{}", "application/json");
    ASSERT_OK(reply.status());
    EXPECT_EQ(reply->status, 405) << path;
    EXPECT_EQ(reply->body, absl::StrCat(path, " takes GET or HEAD, not POST\n"));
  }
  RawConnection raw(probes_->port());
  ASSERT_TRUE(raw.Send("PUT /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"));
  EXPECT_THAT(raw.ReadUntil("\r\n\r\n", std::chrono::seconds(5)),
              AllOf(StartsWith("HTTP/1.1 405"), HasSubstr("Allow: GET, HEAD\r\n")));

  absl::StatusOr<http::Response> big =
      probe.Post("/healthz", std::string(http::kProbeMaxBodyBytes + 1, 'x'), "text/plain");
  ASSERT_OK(big.status());
  EXPECT_EQ(big->status, 413);
  RawConnection garbage(probes_->port());
  garbage.Send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11));  // a TLS hello
  EXPECT_THAT(garbage.ReadUntilClosed(std::chrono::seconds(5)), StartsWith("HTTP/1.1 400"));
  EXPECT_EQ(Rejected("probes", "body_too_large"), 1);
  EXPECT_EQ(Rejected("probes", "malformed"), 1);
  EXPECT_EQ(Rejected("extender", "malformed"), 0);
  ExpectStillServing();
}

// ---- the Placement gRPC API ---------------------------------------------------------------

::grpc::Status Call(pb::Placement::Stub& stub, const pb::ReserveBatchRequest& request,
                    pb::ReserveBatchResponse* response) {
  ::grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return stub.ReserveBatch(&context, request, response);
}

TEST_F(HostileInputTest, AGrpcMessageOverTheLimitIsResourceExhausted) {
  pb::ReserveBatchRequest request;
  while (static_cast<int>(request.ByteSizeLong()) <= kGrpcLimit) {
    pb::GangRequest* gang = request.add_requests();
    gang->set_job(std::string(1000, 'j'));
    gang->set_count(1);
  }
  pb::ReserveBatchResponse response;
  ::grpc::Status status = Call(*stub_, request, &response);
  EXPECT_EQ(status.error_code(), ::grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr(std::to_string(kGrpcLimit)));
  ExpectStillServing();
}

pb::GangRequest ValidGang() {
  pb::GangRequest gang;
  gang.set_job("ml/ok");
  gang.set_count(1);
  (*gang.mutable_per_pod())["nvidia.com/gpu"] = 8;
  return gang;
}

TEST_F(HostileInputTest, InvalidGrpcFieldsAreInvalidArgumentNamingTheField) {
  struct Case {
    std::string name;
    std::function<void(pb::GangRequest&)> mutate;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"negative count", [](pb::GangRequest& g) { g.set_count(-1); }, "request.count (-1)"},
      {"zero count", [](pb::GangRequest& g) { g.set_count(0); }, "request.count (0)"},
      {"absurd count", [](pb::GangRequest& g) { g.set_count(2'000'000'000); },
       "request.count: 2000000000 pods, more than the limit of 65536"},
      {"empty job", [](pb::GangRequest& g) { g.set_job(""); }, "request.job is empty"},
      {"huge job id", [](pb::GangRequest& g) { g.set_job(std::string(5000, 'j')); },
       "request.job: 5000 bytes, more than the limit of 1024"},
      {"negative resource",
       [](pb::GangRequest& g) { (*g.mutable_per_pod())["cpu"] = -5; },
       "request.per_pod[cpu]"},
      {"elastic min above max",
       [](pb::GangRequest& g) {
         g.mutable_elastic()->set_min(4);
         g.mutable_elastic()->set_max(2);
         g.mutable_elastic()->set_step(1);
       },
       "request.elastic.min (4) > request.elastic.max (2)"},
      {"negative step",
       [](pb::GangRequest& g) {
         g.mutable_elastic()->set_min(1);
         g.mutable_elastic()->set_max(2);
         g.mutable_elastic()->set_step(-1);
       },
       "request.elastic.step (-1)"},
      {"negative group size", [](pb::GangRequest& g) { g.set_group_size(-2); },
       "request.group_size (-2)"},
      {"unknown level", [](pb::GangRequest& g) { g.set_required_level("rack"); },
       "request.required_level (\"rack\") is not a level"},
      {"too many selector entries",
       [](pb::GangRequest& g) {
         for (int i = 0; i < 100; ++i) (*g.mutable_node_selector())[absl::StrCat("k", i)] = "v";
       },
       "request.node_selector: 100 entries, more than the limit of 64"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pb::GangRequest gang = ValidGang();
    c.mutate(gang);
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    pb::PlacementResult result;
    ::grpc::Status status = stub_->Explain(&context, gang, &result);
    EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(c.message));

    // In a batch, the bad request is refused on its own and the good one beside it still placed.
    pb::ReserveBatchRequest batch;
    *batch.add_requests() = gang;
    *batch.add_requests() = ValidGang();
    batch.mutable_requests(1)->set_job("ml/ok-" + c.name);
    pb::ReserveBatchResponse response;
    ASSERT_TRUE(Call(*stub_, batch, &response).ok());
    ASSERT_EQ(response.results_size(), 2);
    EXPECT_EQ(response.results(0).error().code(), ::grpc::StatusCode::INVALID_ARGUMENT);
    // Positional: results[i] answers requests[i]. The wire limits name "requests[i]", the
    // placement core's checks "request" (the same text as in process).
    EXPECT_THAT(response.results(0).error().message(),
                HasSubstr(c.message.substr(c.message.find('.'))));
    EXPECT_TRUE(response.results(1).result().placed());
    ::grpc::ClientContext release_context;
    pb::ReleaseRequest release;
    release.set_job("ml/ok-" + c.name);
    pb::ReleaseResponse released;
    ASSERT_TRUE(stub_->Release(&release_context, release, &released).ok());
  }

  // The other methods' fields: empty ids, negative and absurd counts, empty lists.
  auto expect_invalid = [](const ::grpc::Status& status, const std::string& message) {
    EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT) << message;
    EXPECT_THAT(status.error_message(), HasSubstr(message));
  };
  {
    ::grpc::ClientContext context;
    pb::ReleaseRequest request;
    pb::ReleaseResponse response;
    expect_invalid(stub_->Release(&context, request, &response), "job is empty");
  }
  for (int32_t count : {-5, 0}) {
    ::grpc::ClientContext context;
    pb::ResizeRequest request;
    request.set_job("ml/llama");
    request.set_new_count(count);
    pb::PlacementResult response;
    expect_invalid(stub_->Resize(&context, request, &response),
                   absl::StrCat("new_count (", count, ") must be at least 1"));
  }
  {
    ::grpc::ClientContext context;
    pb::ResizeRequest request;
    request.set_job("ml/no-such-job");
    request.set_new_count(-1);  // wrong in itself, whatever the job
    pb::PlacementResult response;
    expect_invalid(stub_->Resize(&context, request, &response), "new_count (-1)");
  }
  {
    ::grpc::ClientContext context;
    pb::ResizeRequest request;
    request.set_job("ml/llama");
    request.set_new_count(1'000'000);
    pb::PlacementResult response;
    expect_invalid(stub_->Resize(&context, request, &response),
                   "new_count: 1000000 pods, more than the limit of 65536");
  }
  {
    ::grpc::ClientContext context;
    pb::ReplaceNodesRequest request;
    request.set_job("ml/llama");
    pb::PlacementResult response;
    expect_invalid(stub_->ReplaceNodes(&context, request, &response), "nodes is empty");
  }
  {
    ::grpc::ClientContext context;
    pb::ReplaceNodesRequest request;
    request.add_nodes("n0");
    pb::PlacementResult response;
    expect_invalid(stub_->ReplaceNodes(&context, request, &response), "job is empty");
  }
  {
    ::grpc::ClientContext context;
    pb::ReplaceNodesRequest request;
    request.set_job("ml/llama");
    request.add_nodes("");
    pb::PlacementResult response;
    expect_invalid(stub_->ReplaceNodes(&context, request, &response), "nodes[0] is empty");
  }
  {
    ::grpc::ClientContext context;
    pb::SnapshotRequest request;
    request.set_max_domains(-1);
    pb::SnapshotSummary response;
    expect_invalid(stub_->Snapshot(&context, request, &response), "max_domains: -1");
  }
  {
    ::grpc::ClientContext context;
    pb::PlanPreemptionRequest request;
    *request.mutable_request() = ValidGang();
    request.add_candidates()->set_job(std::string(2000, 'c'));
    pb::PreemptionPlan response;
    expect_invalid(stub_->PlanPreemption(&context, request, &response),
                   "candidates[0].job: 2000 bytes, more than the limit of 1024");
  }
  EXPECT_GE(Metric("phalanx_grpc_requests_total{method=\"Explain\",result=\"invalid_argument\"}"),
            cases.size());
  EXPECT_EQ(Metric("phalanx_grpc_requests_total{method=\"Release\",result=\"invalid_argument\"}"),
            1);
  // The reservation the fixture made is untouched by all of it.
  service_->Read([&](const placement::ClusterSnapshot& s) {
    const placement::ClusterSnapshot::Reservation* llama = s.FindReservation("ml/llama");
    ASSERT_NE(llama, nullptr);
    EXPECT_EQ(llama->ranks.size(), 2u);
  });
  ExpectStillServing();
}

TEST_F(HostileInputTest, RandomBytesAsAGrpcMessageAreRefused) {
  ::grpc::GenericStub generic(channel_);
  std::mt19937 random(424242);
  std::uniform_int_distribution<int> byte(0, 255);
  int refused = 0;
  for (int i = 0; i < 40; ++i) {
    std::string bytes(static_cast<size_t>(1 + i * 37), '\0');
    for (char& c : bytes) c = static_cast<char>(byte(random));
    ::grpc::Slice slice(bytes);
    ::grpc::ByteBuffer request(&slice, 1);
    ::grpc::ByteBuffer response;
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    std::mutex mu;
    std::condition_variable done_cv;
    bool done = false;
    ::grpc::Status status;
    generic.UnaryCall(&context, "/phalanx.v1alpha1.Placement/ReserveBatch",
                      ::grpc::StubOptions(), &request, &response, [&](::grpc::Status s) {
                        std::lock_guard<std::mutex> lock(mu);
                        status = std::move(s);
                        done = true;
                        done_cv.notify_one();
                      });
    std::unique_lock<std::mutex> lock(mu);
    done_cv.wait(lock, [&] { return done; });
    // Random bytes rarely parse as a ReserveBatchRequest; when they do, its requests are decoded
    // and validated like any other (their job ids are random bytes, most likely refused).
    if (!status.ok()) {
      ++refused;
      EXPECT_THAT(status.error_code(), AnyOf(::grpc::StatusCode::INTERNAL,
                                             ::grpc::StatusCode::INVALID_ARGUMENT))
          << status.error_message();
    }
  }
  EXPECT_GT(refused, 20);

  // Bytes that cannot be a protobuf at all (field 31 with the invalid wire type 7).
  ::grpc::Slice slice(std::string("\xff\xff\xff\xff", 4));
  ::grpc::ByteBuffer request(&slice, 1);
  ::grpc::ByteBuffer response;
  ::grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  std::promise<::grpc::Status> answered;
  generic.UnaryCall(&context, "/phalanx.v1alpha1.Placement/Explain", ::grpc::StubOptions(),
                    &request, &response, [&](::grpc::Status s) { answered.set_value(s); });
  ::grpc::Status status = answered.get_future().get();
  // gRPC's own refusal (its sync server says INTERNAL, with no message): none of our code ran,
  // so the reply lacks the trailer our service puts on its errors.
  EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INTERNAL);
  EXPECT_EQ(context.GetServerTrailingMetadata().count(
                std::string(placement::kErrorOriginTrailer)),
            0u);
  ExpectStillServing();
}

TEST_F(HostileInputTest, RandomBytesOnTheGrpcPortEndOnlyThatConnection) {
  std::mt19937 random(777);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  for (int i = 0; i < 20; ++i) {
    std::string bytes(static_cast<size_t>(16 + i * 53), '\0');
    for (char& c : bytes) c = static_cast<char>(byte(random));
    RawConnection raw(grpc_.port);
    // Half the time behind a valid HTTP/2 preface, so the frame parser sees the garbage.
    raw.Send(i % 2 == 0 ? bytes : preface + bytes);
    raw.ReadUntilClosed(std::chrono::seconds(5));
    EXPECT_TRUE(raw.closed()) << "connection " << i << " still open after garbage";
  }
  RawConnection http1(grpc_.port);
  http1.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  http1.ReadUntilClosed(std::chrono::seconds(5));
  EXPECT_TRUE(http1.closed());
  ExpectStillServing();
}

}  // namespace
}  // namespace phalanx::scheduler
