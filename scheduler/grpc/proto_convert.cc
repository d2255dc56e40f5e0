#include "scheduler/grpc/proto_convert.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace phalanx::placement {
namespace {

// The two enums share google.rpc.Code's numbering, but a table keeps the mapping explicit and
// checked instead of trusting a cast.
constexpr std::pair<absl::StatusCode, ::grpc::StatusCode> kCodes[] = {
    {absl::StatusCode::kOk, ::grpc::StatusCode::OK},
    {absl::StatusCode::kCancelled, ::grpc::StatusCode::CANCELLED},
    {absl::StatusCode::kUnknown, ::grpc::StatusCode::UNKNOWN},
    {absl::StatusCode::kInvalidArgument, ::grpc::StatusCode::INVALID_ARGUMENT},
    {absl::StatusCode::kDeadlineExceeded, ::grpc::StatusCode::DEADLINE_EXCEEDED},
    {absl::StatusCode::kNotFound, ::grpc::StatusCode::NOT_FOUND},
    {absl::StatusCode::kAlreadyExists, ::grpc::StatusCode::ALREADY_EXISTS},
    {absl::StatusCode::kPermissionDenied, ::grpc::StatusCode::PERMISSION_DENIED},
    {absl::StatusCode::kResourceExhausted, ::grpc::StatusCode::RESOURCE_EXHAUSTED},
    {absl::StatusCode::kFailedPrecondition, ::grpc::StatusCode::FAILED_PRECONDITION},
    {absl::StatusCode::kAborted, ::grpc::StatusCode::ABORTED},
    {absl::StatusCode::kOutOfRange, ::grpc::StatusCode::OUT_OF_RANGE},
    {absl::StatusCode::kUnimplemented, ::grpc::StatusCode::UNIMPLEMENTED},
    {absl::StatusCode::kInternal, ::grpc::StatusCode::INTERNAL},
    {absl::StatusCode::kUnavailable, ::grpc::StatusCode::UNAVAILABLE},
    {absl::StatusCode::kDataLoss, ::grpc::StatusCode::DATA_LOSS},
    {absl::StatusCode::kUnauthenticated, ::grpc::StatusCode::UNAUTHENTICATED},
};

absl::Status OverLimit(const std::string& field, std::string_view what, int64_t value,
                       int64_t limit) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", value, absl::string_view(what.data(), what.size()),
                   ", more than the limit of ", limit));
}

absl::Status CheckString(const std::string& value, const std::string& field) {
  if (value.size() <= kMaxStringBytes) return absl::OkStatus();
  return OverLimit(field, " bytes", static_cast<int64_t>(value.size()), kMaxStringBytes);
}

absl::Status CheckPods(int32_t value, const std::string& field) {
  if (value <= kMaxPodsPerGang) return absl::OkStatus();
  return OverLimit(field, " pods", value, kMaxPodsPerGang);
}

absl::Status CheckEntries(int size, const std::string& field, int limit = kMaxMapEntries) {
  if (size <= limit) return absl::OkStatus();
  return OverLimit(field, " entries", size, limit);
}

// A protobuf map as a std::map, after its size and key lengths pass: sorted, so that the first
// error reported does not depend on the map's hash order.
template <typename Value, typename ProtoMap>
absl::StatusOr<std::map<std::string, Value, std::less<>>> DecodeMap(const ProtoMap& in,
                                                                    const std::string& field) {
  RETURN_IF_ERROR(CheckEntries(static_cast<int>(in.size()), field));
  std::map<std::string, Value, std::less<>> out;
  for (const auto& entry : in) {
    if (entry.first.size() > kMaxStringBytes) {
      return OverLimit(field, "-byte key", static_cast<int64_t>(entry.first.size()),
                       kMaxStringBytes);
    }
    out.emplace(entry.first, entry.second);
  }
  return out;
}

absl::Status DecodeRequirements(
    const google::protobuf::RepeatedPtrField<pb::NodeSelectorRequirement>& in,
    const std::string& field, std::vector<NodeSelectorRequirement>* out) {
  RETURN_IF_ERROR(CheckEntries(in.size(), field));
  for (int i = 0; i < in.size(); ++i) {
    const pb::NodeSelectorRequirement& r = in.Get(i);
    const std::string at = absl::StrCat(field, "[", i, "]");
    RETURN_IF_ERROR(CheckString(r.key(), at + ".key"));
    RETURN_IF_ERROR(CheckString(r.operator_(), at + ".operator"));
    RETURN_IF_ERROR(CheckEntries(r.values_size(), at + ".values", kMaxSelectorValues));
    for (int v = 0; v < r.values_size(); ++v) {
      RETURN_IF_ERROR(CheckString(r.values(v), absl::StrCat(at, ".values[", v, "]")));
    }
    out->push_back({.key = r.key(),
                    .op = r.operator_(),
                    .values = {r.values().begin(), r.values().end()}});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NodeSelectorTerm>> DecodeNodeAffinity(
    const google::protobuf::RepeatedPtrField<pb::NodeSelectorTerm>& in, const std::string& field) {
  RETURN_IF_ERROR(CheckEntries(in.size(), field));
  std::vector<NodeSelectorTerm> out(in.size());
  for (int t = 0; t < in.size(); ++t) {
    const std::string at = absl::StrCat(field, "[", t, "]");
    RETURN_IF_ERROR(DecodeRequirements(in.Get(t).match_expressions(), at + ".match_expressions",
                                       &out[t].match_expressions));
    RETURN_IF_ERROR(
        DecodeRequirements(in.Get(t).match_fields(), at + ".match_fields", &out[t].match_fields));
  }
  return out;
}

void ToProto(const std::vector<NodeSelectorRequirement>& in,
             google::protobuf::RepeatedPtrField<pb::NodeSelectorRequirement>* out) {
  for (const NodeSelectorRequirement& r : in) {
    pb::NodeSelectorRequirement* wire = out->Add();
    wire->set_key(r.key);
    wire->set_operator_(r.op);
    for (const std::string& value : r.values) wire->add_values(value);
  }
}

absl::StatusOr<ElasticRange> DecodeElastic(const pb::ElasticRange& in, const std::string& field) {
  RETURN_IF_ERROR(CheckPods(in.min(), field + ".min"));
  RETURN_IF_ERROR(CheckPods(in.max(), field + ".max"));
  RETURN_IF_ERROR(CheckPods(in.step(), field + ".step"));
  return ElasticRange{.min = in.min(), .max = in.max(), .step = in.step()};
}

void ToProto(const ElasticRange& in, pb::ElasticRange* out) {
  out->set_min(in.min);
  out->set_max(in.max);
  out->set_step(in.step);
}

}  // namespace

::grpc::Status ToGrpcStatus(const absl::Status& status) {
  for (const auto& [absl_code, grpc_code] : kCodes) {
    if (absl_code == status.code()) return ::grpc::Status(grpc_code, std::string(status.message()));
  }
  return ::grpc::Status(::grpc::StatusCode::UNKNOWN, std::string(status.message()));
}

absl::Status FromGrpcStatus(const ::grpc::Status& status) {
  for (const auto& [absl_code, grpc_code] : kCodes) {
    if (grpc_code == status.error_code()) return absl::Status(absl_code, status.error_message());
  }
  return absl::Status(absl::StatusCode::kUnknown, status.error_message());
}

absl::StatusCode CodeFromInt(int code) {
  for (const auto& entry : kCodes) {
    if (static_cast<int>(entry.first) == code) return entry.first;
  }
  return absl::StatusCode::kUnknown;
}

// ---- Encoding -------------------------------------------------------------------------------

void ToProto(const GangRequest& in, pb::GangRequest* out) {
  out->Clear();
  out->set_job(in.job);
  out->set_count(in.count);
  if (in.elastic.has_value()) ToProto(*in.elastic, out->mutable_elastic());
  for (const auto& [name, amount] : in.per_pod) (*out->mutable_per_pod())[name] = amount;
  for (const auto& [key, value] : in.node_selector) (*out->mutable_node_selector())[key] = value;
  for (const Toleration& t : in.tolerations) {
    pb::Toleration* wire = out->add_tolerations();
    wire->set_key(t.key);
    wire->set_operator_(t.op);
    wire->set_value(t.value);
    wire->set_effect(t.effect);
  }
  for (const NodeSelectorTerm& term : in.node_affinity) {
    pb::NodeSelectorTerm* wire = out->add_node_affinity();
    ToProto(term.match_expressions, wire->mutable_match_expressions());
    ToProto(term.match_fields, wire->mutable_match_fields());
  }
  out->set_required_level(in.required_level);
  out->set_preferred_level(in.preferred_level);
  out->set_group_size(in.group_size);
  out->set_group_level(in.group_level);
  out->set_priority(in.priority);
  for (const std::string& node : in.excluded_nodes) out->add_excluded_nodes(node);
  out->set_max_pods_per_node(in.max_pods_per_node);
}

void ToProto(const RunningGang& in, pb::RunningGang* out) {
  out->Clear();
  out->set_job(in.job);
  out->set_priority(in.priority);
  if (in.elastic.has_value()) ToProto(*in.elastic, out->mutable_elastic());
}

void ToProto(const DomainId& in, pb::DomainId* out) {
  out->Clear();
  out->set_level(in.level);
  for (const std::string& value : in.path) out->add_path(value);
}

void ToProto(const Placement& in, pb::GangPlacement* out) {
  out->Clear();
  out->set_job(in.job);
  ToProto(in.domain, out->mutable_domain());
  for (const std::string& node : in.nodes) out->add_nodes(node);
}

void ToProto(const Explanation& in, pb::Explanation* out) {
  out->Clear();
  out->set_summary(in.summary);
  out->set_wanted(in.wanted);
  if (in.best_domain.has_value()) ToProto(*in.best_domain, out->mutable_best_domain());
  out->set_fit_in_best(in.fit_in_best);
  if (in.max_fit_empty.has_value()) out->set_max_fit_empty(*in.max_fit_empty);
  for (const auto& [reason, count] : in.nodes_rejected) {
    (*out->mutable_nodes_rejected())[reason] = count;
  }
}

void ToProto(const PlacementResult& in, pb::PlacementResult* out) {
  out->Clear();
  out->set_placed(in.placed);
  ToProto(in.placement, out->mutable_placement());
  ToProto(in.explanation, out->mutable_explanation());
}

void ToProto(const absl::StatusOr<PlacementResult>& in, pb::ReserveResult* out) {
  out->Clear();
  if (in.ok()) {
    ToProto(*in, out->mutable_result());
    return;
  }
  out->mutable_error()->set_code(static_cast<int>(in.status().code()));
  out->mutable_error()->set_message(std::string(in.status().message()));
}

void ToProto(const PreemptionPlan& in, pb::PreemptionPlan* out) {
  out->Clear();
  out->set_feasible(in.feasible);
  for (const Victim& victim : in.victims) {
    pb::Victim* wire = out->add_victims();
    wire->set_job(victim.job);
    wire->set_new_count(victim.new_count);
  }
  ToProto(in.placement, out->mutable_placement());
  ToProto(in.explanation, out->mutable_explanation());
}

void ToProto(const StartEstimate& in, pb::StartEstimate* out) {
  out->Clear();
  out->set_feasible(in.feasible);
  out->set_ended(in.ended);
  out->set_start(in.start);
  ToProto(in.placement, out->mutable_placement());
  ToProto(in.explanation, out->mutable_explanation());
}

void ToProto(const SummaryOptions& in, pb::SnapshotRequest* out) {
  out->Clear();
  if (in.max_level >= 0) out->set_max_level(in.max_level);
  out->set_max_domains(in.max_domains);
  out->set_include_histogram(in.histogram);
  out->set_include_reservations(in.reservations);
}

void ToProto(const SnapshotSummary& in, pb::SnapshotSummary* out) {
  out->Clear();
  for (const std::string& level : in.levels) out->add_levels(level);
  out->set_nodes(in.nodes);
  out->set_schedulable_nodes(in.schedulable_nodes);
  for (const auto& [condition, count] : in.nodes_by_condition) {
    (*out->mutable_nodes_by_condition())[condition] = count;
  }
  out->set_tainted_nodes(in.tainted_nodes);
  out->set_pods(in.pods);
  out->set_reservations(in.reservations);
  out->set_gpus(in.gpus);
  out->set_free_gpus(in.free_gpus);
  for (const DomainSummary& domain : in.domains) {
    pb::DomainSummary* wire = out->add_domains();
    ToProto(domain.domain, wire->mutable_domain());
    wire->set_level_index(domain.level_index);
    wire->set_nodes(domain.nodes);
    wire->set_schedulable_nodes(domain.schedulable_nodes);
    wire->set_gpus(domain.gpus);
    wire->set_free_gpus(domain.free_gpus);
    for (int32_t count : domain.free_gpu_histogram) wire->add_free_gpu_histogram(count);
  }
  out->set_total_domains(in.total_domains);
  for (const ReservationSummary& reservation : in.reservation_list) {
    pb::ReservationSummary* wire = out->add_reservation_list();
    wire->set_job(reservation.job);
    for (const std::string& node : reservation.nodes) wire->add_nodes(node);
    ToProto(reservation.domain, wire->mutable_domain());
  }
}

// ---- Decoding requests (limits enforced) ----------------------------------------------------

absl::StatusOr<GangRequest> DecodeGangRequest(const pb::GangRequest& in,
                                              std::string_view field_view) {
  const std::string field(field_view);
  GangRequest out;
  RETURN_IF_ERROR(CheckString(in.job(), field + ".job"));
  out.job = in.job();
  RETURN_IF_ERROR(CheckPods(in.count(), field + ".count"));
  out.count = in.count();
  if (in.has_elastic()) {
    ASSIGN_OR_RETURN(out.elastic, DecodeElastic(in.elastic(), field + ".elastic"));
  }
  ASSIGN_OR_RETURN(out.per_pod, DecodeMap<int64_t>(in.per_pod(), field + ".per_pod"));
  ASSIGN_OR_RETURN(auto selector,
                   DecodeMap<std::string>(in.node_selector(), field + ".node_selector"));
  for (auto& [key, value] : selector) {
    RETURN_IF_ERROR(CheckString(value, absl::StrCat(field, ".node_selector[", key, "]")));
    out.node_selector.emplace(key, std::move(value));
  }
  ASSIGN_OR_RETURN(out.node_affinity,
                   DecodeNodeAffinity(in.node_affinity(), field + ".node_affinity"));
  RETURN_IF_ERROR(CheckEntries(in.tolerations_size(), field + ".tolerations"));
  for (int i = 0; i < in.tolerations_size(); ++i) {
    const pb::Toleration& t = in.tolerations(i);
    const std::string at = absl::StrCat(field, ".tolerations[", i, "]");
    RETURN_IF_ERROR(CheckString(t.key(), at + ".key"));
    RETURN_IF_ERROR(CheckString(t.operator_(), at + ".operator"));
    RETURN_IF_ERROR(CheckString(t.value(), at + ".value"));
    RETURN_IF_ERROR(CheckString(t.effect(), at + ".effect"));
    out.tolerations.push_back(
        {.key = t.key(), .op = t.operator_(), .value = t.value(), .effect = t.effect()});
  }
  RETURN_IF_ERROR(CheckString(in.required_level(), field + ".required_level"));
  out.required_level = in.required_level();
  RETURN_IF_ERROR(CheckString(in.preferred_level(), field + ".preferred_level"));
  out.preferred_level = in.preferred_level();
  RETURN_IF_ERROR(CheckPods(in.group_size(), field + ".group_size"));
  out.group_size = in.group_size();
  RETURN_IF_ERROR(CheckString(in.group_level(), field + ".group_level"));
  out.group_level = in.group_level();
  out.priority = in.priority();
  RETURN_IF_ERROR(
      CheckEntries(in.excluded_nodes_size(), field + ".excluded_nodes", kMaxPodsPerGang));
  for (int i = 0; i < in.excluded_nodes_size(); ++i) {
    RETURN_IF_ERROR(
        CheckString(in.excluded_nodes(i), absl::StrCat(field, ".excluded_nodes[", i, "]")));
    out.excluded_nodes.push_back(in.excluded_nodes(i));
  }
  if (in.max_pods_per_node() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".max_pods_per_node must not be ",
                                                   "negative, got ", in.max_pods_per_node()));
  }
  out.max_pods_per_node = in.max_pods_per_node();
  return out;
}

absl::StatusOr<RunningGang> DecodeRunningGang(const pb::RunningGang& in,
                                              std::string_view field_view) {
  const std::string field(field_view);
  RunningGang out;
  RETURN_IF_ERROR(CheckString(in.job(), field + ".job"));
  out.job = in.job();
  out.priority = in.priority();
  if (in.has_elastic()) {
    ASSIGN_OR_RETURN(out.elastic, DecodeElastic(in.elastic(), field + ".elastic"));
  }
  return out;
}

absl::StatusOr<std::vector<absl::StatusOr<GangRequest>>> DecodeReserveBatch(
    const pb::ReserveBatchRequest& in) {
  RETURN_IF_ERROR(CheckEntries(in.requests_size(), "requests", kMaxBatchRequests));
  std::vector<absl::StatusOr<GangRequest>> out;
  out.reserve(in.requests_size());
  for (int i = 0; i < in.requests_size(); ++i) {
    out.push_back(DecodeGangRequest(in.requests(i), absl::StrCat("requests[", i, "]")));
  }
  return out;
}

absl::StatusOr<std::string> DecodeRelease(const pb::ReleaseRequest& in) {
  RETURN_IF_ERROR(CheckString(in.job(), "job"));
  return in.job();
}

absl::StatusOr<ResizeArgs> DecodeResize(const pb::ResizeRequest& in) {
  RETURN_IF_ERROR(CheckString(in.job(), "job"));
  RETURN_IF_ERROR(CheckPods(in.new_count(), "new_count"));
  return ResizeArgs{.job = in.job(), .new_count = in.new_count()};
}

absl::StatusOr<ReplaceNodesArgs> DecodeReplaceNodes(const pb::ReplaceNodesRequest& in) {
  RETURN_IF_ERROR(CheckString(in.job(), "job"));
  RETURN_IF_ERROR(CheckEntries(in.nodes_size(), "nodes", kMaxPodsPerGang));
  ReplaceNodesArgs out{.job = in.job()};
  out.nodes.reserve(in.nodes_size());
  for (int i = 0; i < in.nodes_size(); ++i) {
    RETURN_IF_ERROR(CheckString(in.nodes(i), absl::StrCat("nodes[", i, "]")));
    out.nodes.push_back(in.nodes(i));
  }
  return out;
}

absl::StatusOr<StartQuery> DecodeEstimateStart(const pb::EstimateStartRequest& in) {
  StartQuery out;
  ASSIGN_OR_RETURN(out.request, DecodeGangRequest(in.request(), "request"));
  RETURN_IF_ERROR(CheckEntries(in.ends_size(), "ends", kMaxCandidates));
  out.ends.reserve(in.ends_size());
  for (int i = 0; i < in.ends_size(); ++i) {
    RETURN_IF_ERROR(CheckString(in.ends(i).job(), absl::StrCat("ends[", i, "].job")));
    out.ends.push_back({.job = in.ends(i).job(), .end = in.ends(i).end()});
  }
  return out;
}

absl::StatusOr<PreemptionQuery> DecodePlanPreemption(const pb::PlanPreemptionRequest& in) {
  PreemptionQuery out;
  ASSIGN_OR_RETURN(out.request, DecodeGangRequest(in.request(), "request"));
  RETURN_IF_ERROR(CheckEntries(in.candidates_size(), "candidates", kMaxCandidates));
  out.candidates.reserve(in.candidates_size());
  for (int i = 0; i < in.candidates_size(); ++i) {
    ASSIGN_OR_RETURN(RunningGang candidate,
                     DecodeRunningGang(in.candidates(i), absl::StrCat("candidates[", i, "]")));
    out.candidates.push_back(std::move(candidate));
  }
  return out;
}

absl::StatusOr<SummaryOptions> DecodeSummaryOptions(const pb::SnapshotRequest& in) {
  SummaryOptions out;
  if (in.has_max_level()) {
    if (in.max_level() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "max_level: ", in.max_level(), " is negative (leave it unset for every level)"));
    }
    out.max_level = in.max_level();
  }
  out.max_domains = kDefaultSummaryDomains;
  if (in.has_max_domains()) {
    if (in.max_domains() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("max_domains: ", in.max_domains(), " is negative"));
    }
    RETURN_IF_ERROR(CheckEntries(in.max_domains(), "max_domains", kMaxSummaryDomains));
    out.max_domains = in.max_domains();
  }
  out.histogram = in.include_histogram();
  out.reservations = in.include_reservations();
  return out;
}

// ---- Decoding replies -----------------------------------------------------------------------

DomainId FromProto(const pb::DomainId& in) {
  return {.level = in.level(), .path = {in.path().begin(), in.path().end()}};
}

Placement FromProto(const pb::GangPlacement& in) {
  return {.job = in.job(),
          .domain = FromProto(in.domain()),
          .nodes = {in.nodes().begin(), in.nodes().end()}};
}

Explanation FromProto(const pb::Explanation& in) {
  Explanation out;
  out.summary = in.summary();
  out.wanted = in.wanted();
  if (in.has_best_domain()) out.best_domain = FromProto(in.best_domain());
  out.fit_in_best = in.fit_in_best();
  if (in.has_max_fit_empty()) out.max_fit_empty = in.max_fit_empty();
  for (const auto& [reason, count] : in.nodes_rejected()) out.nodes_rejected[reason] = count;
  return out;
}

PlacementResult FromProto(const pb::PlacementResult& in) {
  return {.placed = in.placed(),
          .placement = FromProto(in.placement()),
          .explanation = FromProto(in.explanation())};
}

absl::StatusOr<PlacementResult> FromProto(const pb::ReserveResult& in) {
  switch (in.outcome_case()) {
    case pb::ReserveResult::kResult:
      return FromProto(in.result());
    case pb::ReserveResult::kError: {
      absl::StatusCode code = CodeFromInt(in.error().code());
      if (code == absl::StatusCode::kOk) {
        return absl::InternalError("the server sent a ReserveResult error with code 0 (OK)");
      }
      return absl::Status(code, in.error().message());
    }
    case pb::ReserveResult::OUTCOME_NOT_SET:
      break;
  }
  return absl::InternalError("the server sent a ReserveResult with neither result nor error");
}

PreemptionPlan FromProto(const pb::PreemptionPlan& in) {
  PreemptionPlan out;
  out.feasible = in.feasible();
  for (const pb::Victim& victim : in.victims()) {
    out.victims.push_back({.job = victim.job(), .new_count = victim.new_count()});
  }
  out.placement = FromProto(in.placement());
  out.explanation = FromProto(in.explanation());
  return out;
}

StartEstimate FromProto(const pb::StartEstimate& in) {
  StartEstimate out;
  out.feasible = in.feasible();
  out.ended = in.ended();
  out.start = in.start();
  out.placement = FromProto(in.placement());
  out.explanation = FromProto(in.explanation());
  return out;
}

SnapshotSummary FromProto(const pb::SnapshotSummary& in) {
  SnapshotSummary out;
  out.levels.assign(in.levels().begin(), in.levels().end());
  out.nodes = in.nodes();
  out.schedulable_nodes = in.schedulable_nodes();
  for (const auto& [condition, count] : in.nodes_by_condition()) {
    out.nodes_by_condition[condition] = count;
  }
  out.tainted_nodes = in.tainted_nodes();
  out.pods = in.pods();
  out.reservations = in.reservations();
  out.gpus = in.gpus();
  out.free_gpus = in.free_gpus();
  for (const pb::DomainSummary& wire : in.domains()) {
    DomainSummary& domain = out.domains.emplace_back();
    domain.domain = FromProto(wire.domain());
    domain.level_index = wire.level_index();
    domain.nodes = wire.nodes();
    domain.schedulable_nodes = wire.schedulable_nodes();
    domain.gpus = wire.gpus();
    domain.free_gpus = wire.free_gpus();
    domain.free_gpu_histogram.assign(wire.free_gpu_histogram().begin(),
                                     wire.free_gpu_histogram().end());
  }
  out.total_domains = in.total_domains();
  for (const pb::ReservationSummary& wire : in.reservation_list()) {
    ReservationSummary& reservation = out.reservation_list.emplace_back();
    reservation.job = wire.job();
    reservation.nodes.assign(wire.nodes().begin(), wire.nodes().end());
    reservation.domain = FromProto(wire.domain());
  }
  return out;
}

}  // namespace phalanx::placement
