#include "scheduler/grpc/proto_convert.h"

#include <functional>
#include <string>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/scheduler/grpc/describe.h"

namespace phalanx::placement {
namespace {

using ::phalanx::placement::testing::Describe;
using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;

// Through bytes, as the wire carries it.
template <typename Message>
Message Reparse(const Message& message) {
  std::string bytes;
  EXPECT_TRUE(message.SerializeToString(&bytes));
  Message back;
  EXPECT_TRUE(back.ParseFromString(bytes));
  return back;
}

GangRequest FullRequest() {
  GangRequest r;
  r.job = "team-a/llama-70b";
  r.count = 16;
  r.elastic = ElasticRange{.min = 8, .max = 32, .step = 4};
  r.per_pod = {{"nvidia.com/gpu", 8}, {"cpu", 96000}, {"memory", int64_t{1} << 40}, {"x", 0}};
  r.node_selector = {{"node.kubernetes.io/instance-type", "p5.48xlarge"}, {"pool", "a"}};
  r.node_affinity = {
      {.match_expressions = {{"topology.k8s.aws/network-node-layer-3", "NotIn", {"nn-1", "nn-2"}},
                             {"gpus", "Gt", {"4"}}}},
      {.match_expressions = {{"pool", "Exists", {}}},
       .match_fields = {{"metadata.name", "In", {"n7"}}}},
      {}};
  r.tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule"},
                   {"dedicated", "Equal", "training", ""},
                   {"", "", "", ""}};
  r.required_level = "topology.k8s.aws/network-node-layer-2";
  r.preferred_level = "topology.k8s.aws/network-node-layer-3";
  r.group_size = 4;
  r.group_level = "nvidia.com/gpu.clique";
  r.priority = -7;
  r.excluded_nodes = {"n3", "n1"};
  r.max_pods_per_node = 1;
  return r;
}

TEST(ProtoConvert, GangRequestRoundTripsEveryField) {
  for (GangRequest request : {FullRequest(), GangRequest{}}) {
    pb::GangRequest wire;
    ToProto(request, &wire);
    ASSERT_OK_AND_ASSIGN(GangRequest back, DecodeGangRequest(Reparse(wire), "request"));
    EXPECT_EQ(Describe(back), Describe(request));
  }
  GangRequest fixed = FullRequest();
  fixed.elastic.reset();
  pb::GangRequest wire;
  ToProto(fixed, &wire);
  EXPECT_FALSE(wire.has_elastic());
  ASSERT_OK_AND_ASSIGN(GangRequest back, DecodeGangRequest(Reparse(wire), "request"));
  EXPECT_EQ(Describe(back), Describe(fixed));
}

TEST(ProtoConvert, RunningGangAndPreemptionQueryRoundTrip) {
  pb::PlanPreemptionRequest wire;
  ToProto(FullRequest(), wire.mutable_request());
  std::vector<RunningGang> candidates = {
      {.job = "b/one", .priority = 3},
      {.job = "b/two", .priority = -1, .elastic = ElasticRange{.min = 2, .max = 6, .step = 2}}};
  for (const RunningGang& c : candidates) ToProto(c, wire.add_candidates());
  ASSERT_OK_AND_ASSIGN(PreemptionQuery query, DecodePlanPreemption(Reparse(wire)));
  EXPECT_EQ(Describe(query.request), Describe(FullRequest()));
  ASSERT_EQ(query.candidates.size(), 2u);
  EXPECT_EQ(Describe(query.candidates[0]), Describe(candidates[0]));
  EXPECT_EQ(Describe(query.candidates[1]), Describe(candidates[1]));
}

TEST(ProtoConvert, EstimateStartRequestRoundTripsAndBoundsNames) {
  pb::EstimateStartRequest wire;
  ToProto(FullRequest(), wire.mutable_request());
  pb::EndingGang* end = wire.add_ends();
  end->set_job("b/one");
  end->set_end(1'700'000'000);
  const pb::EstimateStartRequest parsed = Reparse(wire);  // the query's names view it
  ASSERT_OK_AND_ASSIGN(StartQuery query, DecodeEstimateStart(parsed));
  EXPECT_EQ(Describe(query.request), Describe(FullRequest()));
  ASSERT_EQ(query.ends.size(), 1u);
  EXPECT_EQ(query.ends[0].job, "b/one");
  EXPECT_EQ(query.ends[0].end, 1'700'000'000);
  // An empty name is the service's to refuse (InvalidArgument naming ends[i].job); the decoder
  // bounds sizes.
  wire.add_ends()->set_job(std::string(kMaxStringBytes + 1, 'x'));
  const pb::EstimateStartRequest oversized = Reparse(wire);
  EXPECT_THAT(DecodeEstimateStart(oversized),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ends[1].job")));
}

PlacementResult Placed() {
  return {.placed = true,
          .placement = {.job = "a/b",
                        .domain = {"topology.k8s.aws/network-node-layer-3", {"x", "y", "z"}},
                        .nodes = {"n1", "n2", "n2", "n0"}}};
}

PlacementResult NotPlaced(bool with_best) {
  PlacementResult r;
  r.placement.job = "a/c";
  r.explanation = {.summary = "needs 64 pods x nvidia.com/gpu=8 in one domain; best has 40",
                   .wanted = 64,
                   .fit_in_best = 40,
                   .nodes_rejected = {{"NotReady", 3}, {"Insufficient nvidia.com/gpu", 12}}};
  if (with_best) {
    r.explanation.best_domain = DomainId{"topology.k8s.aws/network-node-layer-1", {"a"}};
    r.explanation.max_fit_empty = 0;  // set, even to 0, is not unset
  }
  return r;
}

TEST(ProtoConvert, PlacementResultsRoundTripEveryField) {
  for (const PlacementResult& result : {Placed(), NotPlaced(true), NotPlaced(false),
                                        PlacementResult{}}) {
    pb::PlacementResult wire;
    ToProto(result, &wire);
    EXPECT_EQ(Describe(FromProto(Reparse(wire))), Describe(result));
  }
  pb::PlacementResult wire;
  ToProto(NotPlaced(false), &wire);
  EXPECT_FALSE(wire.explanation().has_best_domain());
  ToProto(NotPlaced(true), &wire);
  EXPECT_TRUE(wire.explanation().has_best_domain());
  // The cluster domain (empty level and path) is a real best domain, not "none".
  PlacementResult cluster = NotPlaced(false);
  cluster.explanation.best_domain = DomainId{};
  ToProto(cluster, &wire);
  EXPECT_EQ(Describe(FromProto(Reparse(wire))), Describe(cluster));
}

TEST(ProtoConvert, ReserveResultCarriesAResultOrTheExactError) {
  pb::ReserveResult wire;
  ToProto(absl::StatusOr<PlacementResult>(Placed()), &wire);
  EXPECT_EQ(Describe(FromProto(Reparse(wire))),
            Describe(absl::StatusOr<PlacementResult>(Placed())));

  for (absl::Status error : {absl::InvalidArgumentError("request.count (0) must be at least 1"),
                             absl::AlreadyExistsError("job \"a/b\" already holds a reservation"),
                             absl::Status(absl::StatusCode::kDataLoss, "")}) {
    pb::ReserveResult wire_error;
    ToProto(absl::StatusOr<PlacementResult>(error), &wire_error);
    absl::StatusOr<PlacementResult> back = FromProto(Reparse(wire_error));
    EXPECT_EQ(back.status(), error);
  }
}

TEST(ProtoConvert, MalformedReserveResultsAreInternal) {
  EXPECT_THAT(FromProto(pb::ReserveResult()),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("neither result nor error")));
  pb::ReserveResult ok_error;
  ok_error.mutable_error()->set_code(0);
  EXPECT_THAT(FromProto(ok_error), StatusIs(absl::StatusCode::kInternal, HasSubstr("code 0")));
  pb::ReserveResult odd_code;
  odd_code.mutable_error()->set_code(99);
  odd_code.mutable_error()->set_message("from the future");
  EXPECT_THAT(FromProto(odd_code), StatusIs(absl::StatusCode::kUnknown, "from the future"));
}

TEST(ProtoConvert, PreemptionPlanRoundTrips) {
  PreemptionPlan feasible{.feasible = true,
                          .victims = {{"low/a", 0}, {"low/b", 4}},
                          .placement = Placed().placement};
  PreemptionPlan infeasible{.explanation = NotPlaced(true).explanation};
  for (const PreemptionPlan& plan : {feasible, infeasible}) {
    pb::PreemptionPlan wire;
    ToProto(plan, &wire);
    EXPECT_EQ(Describe(FromProto(Reparse(wire))), Describe(plan));
  }
}

TEST(ProtoConvert, SnapshotSummaryAndOptionsRoundTrip) {
  SnapshotSummary summary;
  summary.levels = {"l1", "l2"};
  summary.nodes = 10;
  summary.schedulable_nodes = 7;
  summary.nodes_by_condition = {{"Schedulable", 7}, {"NotReady", 3}};
  summary.tainted_nodes = 1;
  summary.pods = 123;
  summary.reservations = 4;
  summary.gpus = 56;
  summary.free_gpus = 20;
  summary.total_domains = 9;
  summary.domains = {{.domain = {}, .level_index = 0, .nodes = 10, .schedulable_nodes = 7,
                      .gpus = 56, .free_gpus = 20, .free_gpu_histogram = {1, 0, 2}},
                     {.domain = {"l1", {"a"}}, .level_index = 1, .nodes = 4}};
  summary.reservation_list = {{.job = "ns/a", .nodes = {"n1", "n0"}, .domain = {"l2", {"a", "b"}}},
                              {.job = "ns/b", .nodes = {"n2"}}};
  pb::SnapshotSummary wire;
  ToProto(summary, &wire);
  EXPECT_EQ(Describe(FromProto(Reparse(wire))), Describe(summary));
  EXPECT_EQ(FromProto(Reparse(wire)), summary);

  for (SummaryOptions options : {SummaryOptions{}, SummaryOptions{.max_level = 0, .max_domains = 0,
                                                                  .histogram = true},
                                 SummaryOptions{.max_level = 3, .max_domains = 77},
                                 SummaryOptions{.reservations = true}}) {
    pb::SnapshotRequest request;
    ToProto(options, &request);
    ASSERT_OK_AND_ASSIGN(SummaryOptions back, DecodeSummaryOptions(Reparse(request)));
    EXPECT_EQ(back.max_level, options.max_level);
    EXPECT_EQ(back.max_domains, options.max_domains);
    EXPECT_EQ(back.histogram, options.histogram);
    EXPECT_EQ(back.reservations, options.reservations);
  }
}

TEST(ProtoConvert, SummaryOptionsDefaultsAndLimits) {
  ASSERT_OK_AND_ASSIGN(SummaryOptions defaults, DecodeSummaryOptions(pb::SnapshotRequest()));
  EXPECT_EQ(defaults.max_level, -1);
  EXPECT_EQ(defaults.max_domains, kDefaultSummaryDomains);
  EXPECT_FALSE(defaults.histogram);

  pb::SnapshotRequest request;
  request.set_max_level(-1);
  EXPECT_THAT(DecodeSummaryOptions(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_level: -1")));
  request.clear_max_level();
  request.set_max_domains(-5);
  EXPECT_THAT(DecodeSummaryOptions(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_domains: -5")));
  request.set_max_domains(kMaxSummaryDomains + 1);
  EXPECT_THAT(DecodeSummaryOptions(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "max_domains: 100001 entries, more than the limit of 100000"));
}

TEST(ProtoConvert, StatusCodesMapOneToOne) {
  for (int code = 0; code <= 16; ++code) {
    absl::Status status(static_cast<absl::StatusCode>(code), code == 0 ? "" : "why");
    ::grpc::Status wire = ToGrpcStatus(status);
    EXPECT_EQ(static_cast<int>(wire.error_code()), code);
    EXPECT_EQ(FromGrpcStatus(wire), status) << code;
    EXPECT_EQ(CodeFromInt(code), static_cast<absl::StatusCode>(code));
  }
  EXPECT_EQ(CodeFromInt(17), absl::StatusCode::kUnknown);
  EXPECT_EQ(CodeFromInt(-1), absl::StatusCode::kUnknown);
}

// ---- Limits: each names the field; the request is refused, never truncated. ----------------

std::string Long() { return std::string(kMaxStringBytes + 1, 'x'); }

absl::Status DecodeWith(const std::function<void(pb::GangRequest&)>& edit) {
  pb::GangRequest wire;
  ToProto(FullRequest(), &wire);
  edit(wire);
  return DecodeGangRequest(wire, "requests[3]").status();
}

TEST(ProtoConvert, GangRequestLimitsNameTheField) {
  const absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { r.set_job(Long()); }),
              StatusIs(kInvalid, "requests[3].job: 1025 bytes, more than the limit of 1024"));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { r.set_count(70000); }),
              StatusIs(kInvalid, "requests[3].count: 70000 pods, more than the limit of 65536"));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { r.mutable_elastic()->set_max(1 << 30); }),
              StatusIs(kInvalid, HasSubstr("requests[3].elastic.max: 1073741824 pods")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { r.mutable_elastic()->set_step(70000); }),
              StatusIs(kInvalid, HasSubstr("requests[3].elastic.step: 70000 pods")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) {
                for (int i = 0; i < kMaxMapEntries; ++i) {
                  (*r.mutable_per_pod())[absl::StrCat(i)] = 1;
                }
              }),
              StatusIs(kInvalid, HasSubstr("requests[3].per_pod: 68 entries")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { (*r.mutable_per_pod())[Long()] = 1; }),
              StatusIs(kInvalid,
                       "requests[3].per_pod: 1025-byte key, more than the limit of 1024"));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { (*r.mutable_node_selector())[Long()] = "v"; }),
              StatusIs(kInvalid, HasSubstr("requests[3].node_selector: 1025-byte key")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { (*r.mutable_node_selector())["k"] = Long(); }),
              StatusIs(kInvalid, HasSubstr("requests[3].node_selector[k]: 1025 bytes")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) {
                for (int i = 0; i <= kMaxMapEntries; ++i) r.add_tolerations();
              }),
              StatusIs(kInvalid, HasSubstr("requests[3].tolerations: 68 entries")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { r.mutable_tolerations(1)->set_value(Long()); }),
              StatusIs(kInvalid, HasSubstr("requests[3].tolerations[1].value: 1025 bytes")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) {
                r.mutable_tolerations(2)->set_operator_(Long());
              }),
              StatusIs(kInvalid, HasSubstr("requests[3].tolerations[2].operator: 1025 bytes")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { r.set_required_level(Long()); }),
              StatusIs(kInvalid, HasSubstr("requests[3].required_level: 1025 bytes")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { r.set_preferred_level(Long()); }),
              StatusIs(kInvalid, HasSubstr("requests[3].preferred_level: 1025 bytes")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { r.set_group_level(Long()); }),
              StatusIs(kInvalid, HasSubstr("requests[3].group_level: 1025 bytes")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) { r.set_group_size(65537); }),
              StatusIs(kInvalid, HasSubstr("requests[3].group_size: 65537 pods")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) {
                for (int i = 0; i < kMaxMapEntries; ++i) r.add_node_affinity();
              }),
              StatusIs(kInvalid, HasSubstr("requests[3].node_affinity: 67 entries")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) {
                for (int i = 0; i < kMaxMapEntries; ++i) {
                  r.mutable_node_affinity(1)->add_match_fields();
                }
              }),
              StatusIs(kInvalid, HasSubstr("requests[3].node_affinity[1].match_fields: 65")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) {
                auto* e = r.mutable_node_affinity(0)->mutable_match_expressions(1);
                for (int i = 0; i < kMaxSelectorValues; ++i) e->add_values("v");
              }),
              StatusIs(kInvalid, "requests[3].node_affinity[0].match_expressions[1].values: "
                                 "1025 entries, more than the limit of 1024"));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) {
                r.mutable_node_affinity(0)->mutable_match_expressions(0)->set_values(1, Long());
              }),
              StatusIs(kInvalid, HasSubstr("node_affinity[0].match_expressions[0].values[1]: "
                                           "1025 bytes")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) {
                r.mutable_node_affinity(1)->mutable_match_fields(0)->set_key(Long());
              }),
              StatusIs(kInvalid, HasSubstr("node_affinity[1].match_fields[0].key: 1025 bytes")));
  EXPECT_THAT(DecodeWith([](pb::GangRequest& r) {
                r.mutable_node_affinity(1)->mutable_match_expressions(0)->set_operator_(Long());
              }),
              StatusIs(kInvalid,
                       HasSubstr("node_affinity[1].match_expressions[0].operator: 1025 bytes")));
  // At the limits exactly, everything passes.
  EXPECT_OK(DecodeWith([](pb::GangRequest& r) {
    auto* e = r.mutable_node_affinity(0)->mutable_match_expressions(0);
    while (e->values_size() < kMaxSelectorValues) e->add_values("v");
    while (r.node_affinity_size() < kMaxMapEntries) r.add_node_affinity();
    r.set_job(std::string(kMaxStringBytes, 'j'));
    r.set_count(kMaxPodsPerGang);
    r.mutable_elastic()->set_max(kMaxPodsPerGang);
  }));
}

TEST(ProtoConvert, SemanticChecksAreLeftToThePlacementCore) {
  // The core rejects these with its own messages; the wire must not pre-empt them with other
  // words, or the gRPC client would answer differently from the in-process service.
  EXPECT_OK(DecodeWith([](pb::GangRequest& r) {
    r.set_count(-3);
    r.set_job("");
    r.mutable_elastic()->set_min(9);
    r.mutable_elastic()->set_max(2);
    r.mutable_elastic()->set_step(0);
    (*r.mutable_per_pod())["nvidia.com/gpu"] = -8;
    r.set_required_level("no-such-level");
    r.set_group_size(-1);
    r.mutable_node_affinity(0)->mutable_match_expressions(0)->set_operator_("Near");
    r.mutable_node_affinity(1)->mutable_match_fields(0)->set_key("metadata.namespace");
  }));
}

TEST(ProtoConvert, BatchCandidatesResizeAndReplaceLimits) {
  pb::ReserveBatchRequest batch;
  for (int i = 0; i < 3; ++i) ToProto(FullRequest(), batch.add_requests());
  batch.mutable_requests(1)->set_count(kMaxPodsPerGang + 1);
  ASSERT_OK_AND_ASSIGN(auto decoded, DecodeReserveBatch(batch));
  ASSERT_EQ(decoded.size(), 3u);
  EXPECT_OK(decoded[0]);
  EXPECT_THAT(decoded[1], StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("requests[1].count: 65537 pods")));
  EXPECT_OK(decoded[2]);

  pb::ReserveBatchRequest too_many;
  for (int i = 0; i <= kMaxBatchRequests; ++i) too_many.add_requests();
  EXPECT_THAT(DecodeReserveBatch(too_many),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "requests: 10001 entries, more than the limit of 10000"));

  pb::PlanPreemptionRequest plan;
  plan.add_candidates()->set_job("ok");
  plan.add_candidates()->set_job(Long());
  EXPECT_THAT(DecodePlanPreemption(plan), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("candidates[1].job: 1025 bytes")));
  plan.mutable_candidates(1)->set_job("ok");
  plan.mutable_candidates(1)->mutable_elastic()->set_max(kMaxPodsPerGang + 1);
  EXPECT_THAT(DecodePlanPreemption(plan), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("candidates[1].elastic.max")));
  plan.mutable_request()->set_count(kMaxPodsPerGang + 1);
  EXPECT_THAT(DecodePlanPreemption(plan), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("request.count: 65537 pods")));

  pb::ResizeRequest resize;
  resize.set_job("a/b");
  resize.set_new_count(kMaxPodsPerGang + 1);
  EXPECT_THAT(DecodeResize(resize), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("new_count: 65537 pods")));
  resize.set_new_count(-2);  // the core's to judge
  ASSERT_OK_AND_ASSIGN(ResizeArgs args, DecodeResize(resize));
  EXPECT_EQ(args.job, "a/b");
  EXPECT_EQ(args.new_count, -2);

  pb::ReplaceNodesRequest replace;
  replace.set_job("a/b");
  replace.add_nodes("n1");
  replace.add_nodes("");  // the core's to judge
  ASSERT_OK_AND_ASSIGN(ReplaceNodesArgs replace_args, DecodeReplaceNodes(replace));
  EXPECT_EQ(replace_args.job, "a/b");
  EXPECT_THAT(replace_args.nodes, ::testing::ElementsAre("n1", ""));
  replace.set_nodes(1, Long());
  EXPECT_THAT(DecodeReplaceNodes(replace), StatusIs(absl::StatusCode::kInvalidArgument,
                                                    HasSubstr("nodes[1]: 1025 bytes")));
  replace.clear_nodes();
  for (int i = 0; i <= kMaxPodsPerGang; ++i) replace.add_nodes("n");
  EXPECT_THAT(DecodeReplaceNodes(replace),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "nodes: 65537 entries, more than the limit of 65536"));

  pb::ReleaseRequest release;
  release.set_job(Long());
  EXPECT_THAT(DecodeRelease(release),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("job: 1025 bytes")));
}

TEST(ProtoConvert, StartEstimateRoundTrips) {
  StartEstimate estimate{.feasible = true, .ended = 3, .start = 42,
                         .placement = Placed().placement};
  pb::StartEstimate wire;
  ToProto(estimate, &wire);
  EXPECT_EQ(Describe(FromProto(Reparse(wire))), Describe(estimate));
}

}  // namespace
}  // namespace phalanx::placement
