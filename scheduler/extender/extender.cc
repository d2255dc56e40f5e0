#include "scheduler/extender/extender.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "common/status.h"
#include "fmt/format.h"
#include "common/api_labels.h"
#include "spdlog/spdlog.h"

namespace phalanx::extender {
namespace {

using placement::ClusterSnapshot;

// Decoders keep their parse buffers between calls, and the HTTP server calls us from a few
// long-lived threads: one decoder (and one scratch reply) per thread allocates nothing once warm.
ExtenderDecoder& ThreadDecoder() {
  thread_local ExtenderDecoder decoder;
  return decoder;
}

ExtenderArgs& ThreadArgs() {
  thread_local ExtenderArgs args;
  return args;
}

FilterResult& ThreadFilterResult() {
  thread_local FilterResult result;
  result.node_names.clear();
  result.failed.clear();
  result.failed_and_unresolvable.clear();
  result.error.clear();
  result.as_node_list = false;
  result.node_objects.clear();
  return result;
}

Reply BadRequest(const absl::Status& status) {
  const std::string_view message(status.message().data(), status.message().size());
  return {http::Response::Text(400, fmt::format("phalanx extender: {}\n", message)),
          Outcome::kBadRequest};
}

Reply Json(std::string body, Outcome outcome) {
  return {http::Response::Json(200, std::move(body)), outcome};
}

// A rank label is a plain decimal: no sign, no spaces, small enough for int32.
std::optional<int32_t> ParseRank(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int32_t rank = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    rank = rank * 10 + (c - '0');
  }
  return rank;
}

// The position of `node` among `names`, or names.size().
size_t Find(const std::vector<std::string_view>& names, std::string_view node) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == node) return i;
  }
  return names.size();
}

std::string PodKey(std::string_view ns, std::string_view name) {
  return fmt::format("{}/{}", ns, name);
}

// kube-scheduler sends "application/json". A request without a Content-Type is read as JSON too
// (RFC 9110 lets a recipient assume a type); one that names another type is refused.
bool IsJsonContentType(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
  while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) media.remove_prefix(1);
  if (media.empty()) return true;
  constexpr std::string_view kJson = "application/json";
  if (media.size() != kJson.size()) return false;
  for (size_t i = 0; i < media.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(media[i])) != kJson[i]) return false;
  }
  return true;
}

}  // namespace

std::string_view VerbName(Verb verb) {
  switch (verb) {
    case Verb::kFilter: return "filter";
    case Verb::kPrioritize: return "prioritize";
    case Verb::kBind: return "bind";
  }
  return "unknown";
}

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassThrough: return "pass_through";
    case Outcome::kPinned: return "pinned";
    case Outcome::kNoReservation: return "no_reservation";
    case Outcome::kBadLabels: return "bad_labels";
    case Outcome::kRankOutOfRange: return "rank_out_of_range";
    case Outcome::kReservedNodeRejected: return "reserved_node_rejected";
    case Outcome::kWrongNode: return "wrong_node";
    case Outcome::kUnknownPod: return "unknown_pod";
    case Outcome::kBindFailed: return "bind_failed";
    case Outcome::kBadRequest: return "bad_request";
  }
  return "unknown";
}

Extender::Extender(const placement::InProcessPlacementService& placement, Binder& binder,
                   ExtenderOptions options)
    : placement_(placement), binder_(binder), options_(options) {}

Extender::GangDecision Extender::DecideGang(std::string_view ns, std::string_view pod,
                                            std::string_view job_label,
                                            const std::optional<std::string_view>& rank_label,
                                            std::string_view controller_uid) const {
  GangDecision decision;
  decision.job = fmt::format("{}/{}", ns, job_label);
  if (job_label.empty()) {
    decision.outcome = Outcome::kBadLabels;
    decision.reason = fmt::format("phalanx: pod {}/{} has an empty {} label", ns, pod, kJobLabel);
    return decision;
  }
  std::optional<int32_t> rank = rank_label ? ParseRank(*rank_label) : std::nullopt;
  if (!rank) {
    decision.outcome = Outcome::kBadLabels;
    decision.reason =
        rank_label ? fmt::format("phalanx: pod {}/{} has an invalid {} label \"{}\" (want a "
                                 "decimal rank)",
                                 ns, pod, kRankLabel, *rank_label)
                   : fmt::format("phalanx: pod {}/{} of TrainingJob {} has no {} label", ns, pod,
                                 decision.job, kRankLabel);
    return decision;
  }
  decision.rank = *rank;
  if (options_.job_uid) {
    if (std::optional<std::string> uid = options_.job_uid(decision.job);
        uid.has_value() && *uid != controller_uid) {
      decision.outcome = Outcome::kBadLabels;
      decision.reason = fmt::format(
          "phalanx: pod {}/{} carries {}={} but TrainingJob {} (uid {}) is not its controller: "
          "only the job's own pods bind to its reservation",
          ns, pod, kJobLabel, job_label, decision.job, *uid);
      return decision;
    }
  }

  // Read under the service's lock; the messages are built after it is released.
  struct Lookup {
    const std::string* job;
    int32_t rank;
    bool found = false;
    size_t size = 0;
    std::string node;
    bool removed = false;
  } lookup{&decision.job, *rank};
  Lookup* out = &lookup;  // one pointer: the std::function holds it without allocating
  placement_.Read([out](const ClusterSnapshot& snapshot) {
    const ClusterSnapshot::Reservation* reservation = snapshot.FindReservation(*out->job);
    if (reservation == nullptr) return;
    out->found = true;
    out->size = reservation->ranks.size();
    if (static_cast<size_t>(out->rank) >= out->size) return;
    const ClusterSnapshot::Node& node =
        snapshot.nodes()[reservation->ranks[static_cast<size_t>(out->rank)].node];
    out->node = node.info.name;
    out->removed = node.removed;
  });

  if (!lookup.found) {
    decision.outcome = Outcome::kNoReservation;
    decision.reason = fmt::format(
        "phalanx: TrainingJob {} holds no reservation (not admitted yet, or released)",
        decision.job);
  } else if (static_cast<size_t>(*rank) >= lookup.size) {
    decision.outcome = Outcome::kRankOutOfRange;
    decision.reason = fmt::format("phalanx: rank {} of {} is outside its reservation of {} pods",
                                  *rank, decision.job, lookup.size);
  } else {
    decision.node = std::move(lookup.node);
    if (lookup.removed) {
      decision.outcome = Outcome::kReservedNodeRejected;
      decision.reason = fmt::format(
          "phalanx: rank {} of {} is reserved on node {}, which has left the cluster", *rank,
          decision.job, decision.node);
    }
  }
  return decision;
}

void Extender::Remember(const PodView& pod) {
  RememberedPod entry;
  entry.uid = std::string(pod.uid);
  entry.gang = pod.job.has_value();
  if (entry.gang) {
    entry.job_label = std::string(*pod.job);
    entry.has_rank = pod.rank.has_value();
    if (entry.has_rank) entry.rank_label = std::string(*pod.rank);
    entry.controller_uid = std::string(pod.controller_uid);
  }
  std::string key = PodKey(pod.ns, pod.name);
  absl::MutexLock lock(&mu_);
  const size_t generation = std::max<size_t>(1, options_.remembered_pods / 2);
  if (current_.size() >= generation && !current_.contains(key)) {
    previous_ = std::move(current_);
    current_.clear();
  }
  current_.insert_or_assign(std::move(key), std::move(entry));
}

std::optional<Extender::RememberedPod> Extender::Recall(std::string_view ns,
                                                        std::string_view name,
                                                        std::string_view uid) {
  std::string key = PodKey(ns, name);
  absl::MutexLock lock(&mu_);
  const RememberedPod* found = nullptr;
  if (auto it = current_.find(key); it != current_.end()) {
    found = &it->second;
  } else if (auto old = previous_.find(key); old != previous_.end()) {
    found = &old->second;
  }
  // A pod deleted and recreated under the same name is another pod.
  if (found == nullptr || (!uid.empty() && !found->uid.empty() && uid != found->uid)) {
    return std::nullopt;
  }
  return *found;
}

void Extender::Forget(std::string_view ns, std::string_view name) {
  std::string key = PodKey(ns, name);
  absl::MutexLock lock(&mu_);
  current_.erase(key);
  previous_.erase(key);
}

Reply Extender::HandleFilter(std::string_view body) {
  ExtenderArgs& args = ThreadArgs();
  absl::Status decoded = ThreadDecoder().DecodeArgs(body, &args);
  if (!decoded.ok()) return BadRequest(decoded);
  Remember(args.pod);

  FilterResult& result = ThreadFilterResult();
  result.as_node_list = args.from_node_list;
  if (!args.pod.job) {
    // Both are this thread's scratch vectors: swapping hands the names over without a copy.
    result.node_names.swap(args.node_names);
    result.node_objects.swap(args.node_objects);
    return Json(EncodeFilterResult(result), Outcome::kPassThrough);
  }
  GangDecision decision =
      DecideGang(args.pod.ns, args.pod.name, *args.pod.job, args.pod.rank, args.pod.controller_uid);
  size_t pinned = args.node_names.size();  // the reserved node's position among the candidates
  if (decision.outcome == Outcome::kPinned) {
    pinned = Find(args.node_names, decision.node);
    if (pinned < args.node_names.size()) {
      decision.reason = fmt::format("phalanx: rank {} of {} is reserved on node {}",
                                    decision.rank, decision.job, decision.node);
    } else {
      decision.outcome = Outcome::kReservedNodeRejected;
      decision.reason = fmt::format(
          "phalanx: rank {} of {} is reserved on node {}, which did not pass kube-scheduler's "
          "filters",
          decision.rank, decision.job, decision.node);
    }
  }
  // Gang pods fail as unresolvable: preempting pods on any other node cannot help a pod pinned
  // to its reservation, so kube-scheduler must not evict anything there for it.
  const bool list_failures =
      decision.outcome != Outcome::kPinned || options_.fail_unreserved_nodes;
  if (list_failures) result.failed_and_unresolvable.reserve(args.node_names.size());
  for (size_t i = 0; i < args.node_names.size(); ++i) {
    if (i == pinned) {
      result.node_names.push_back(args.node_names[i]);
      if (args.from_node_list) result.node_objects.push_back(args.node_objects[i]);
    } else if (list_failures) {
      result.failed_and_unresolvable.push_back({args.node_names[i], decision.reason});
    }
  }
  if (decision.outcome != Outcome::kPinned) {
    SPDLOG_DEBUG("filter {}/{}: {}", args.pod.ns, args.pod.name, decision.reason);
  }
  return Json(EncodeFilterResult(result), decision.outcome);
}

Reply Extender::HandlePrioritize(std::string_view body) {
  ExtenderArgs& args = ThreadArgs();
  absl::Status decoded = ThreadDecoder().DecodeArgs(body, &args);
  if (!decoded.ok()) return BadRequest(decoded);
  // kube-scheduler adds the scores of the hosts listed and nothing for the others, so an empty
  // list leaves a pod to kube-scheduler's own scoring (and costs nothing to encode or decode).
  if (!args.pod.job) return Json(EncodeHostPriorityList({}), Outcome::kPassThrough);
  GangDecision decision =
      DecideGang(args.pod.ns, args.pod.name, *args.pod.job, args.pod.rank, args.pod.controller_uid);
  std::vector<HostPriority> priorities;
  if (decision.outcome == Outcome::kPinned) {
    if (Find(args.node_names, decision.node) < args.node_names.size()) {
      priorities.push_back({decision.node, kMaxExtenderPriority});
    } else {
      decision.outcome = Outcome::kReservedNodeRejected;
    }
  }
  return Json(EncodeHostPriorityList(priorities), decision.outcome);
}

Reply Extender::HandleBind(std::string_view body) {
  BindingArgs args;
  absl::Status decoded = ThreadDecoder().DecodeBinding(body, &args);
  if (!decoded.ok()) return BadRequest(decoded);

  std::optional<RememberedPod> pod = Recall(args.pod_namespace, args.pod_name, args.pod_uid);
  if (!pod) {
    // The body names no labels, so a pod filter has not seen cannot be told from a gang pod.
    // Refusing is safe: kube-scheduler retries the pod, and its next filter call teaches us.
    std::string error = fmt::format(
        "phalanx: pod {}/{} was not seen by this extender's filter (restarted?); kube-scheduler "
        "will retry it",
        args.pod_namespace, args.pod_name);
    SPDLOG_DEBUG("bind: {}", error);
    return Json(EncodeBindingResult(error), Outcome::kUnknownPod);
  }
  if (!pod->gang) return Bind(args, Outcome::kPassThrough);

  std::optional<std::string_view> rank;
  if (pod->has_rank) rank = pod->rank_label;
  GangDecision decision =
      DecideGang(args.pod_namespace, args.pod_name, pod->job_label, rank, pod->controller_uid);
  if (decision.outcome == Outcome::kPinned && decision.node != args.node) {
    decision.outcome = Outcome::kWrongNode;
    decision.reason = fmt::format(
        "phalanx: refusing to bind rank {} of {} to node {}: it is reserved on node {}",
        decision.rank, decision.job, args.node, decision.node);
  }
  if (decision.outcome != Outcome::kPinned) {
    spdlog::warn("bind {}/{}: {}", args.pod_namespace, args.pod_name, decision.reason);
    return Json(EncodeBindingResult(decision.reason), decision.outcome);
  }
  return Bind(args, Outcome::kPinned);
}

Reply Extender::Bind(const BindingArgs& args, Outcome success) {
  absl::Status bound = binder_.Bind(args.pod_namespace, args.pod_name, args.pod_uid, args.node);
  if (!bound.ok()) {
    std::string error = fmt::format("phalanx: binding {}/{} to node {} failed: {}",
                                    args.pod_namespace, args.pod_name, args.node, bound);
    spdlog::warn("bind: {}", error);
    return Json(EncodeBindingResult(error), Outcome::kBindFailed);
  }
  Forget(args.pod_namespace, args.pod_name);
  return Json(EncodeBindingResult(""), success);
}

Reply Extender::Handle(Verb verb, std::string_view body) {
  switch (verb) {
    case Verb::kFilter: return HandleFilter(body);
    case Verb::kPrioritize: return HandlePrioritize(body);
    case Verb::kBind: return HandleBind(body);
  }
  return BadRequest(absl::InvalidArgumentError("unknown verb"));
}

http::Handler MakeHandler(Extender& extender, Verb verb, OutcomeObserver observe) {
  return [&extender, verb, observe = std::move(observe)](const http::Request& request) {
    Reply reply;
    if (request.method != "POST") {
      reply = {http::Response::Text(405, fmt::format("phalanx extender: {} takes POST, not {}\n",
                                                     VerbName(verb), request.method)),
               Outcome::kBadRequest};
      reply.response.headers.emplace_back("Allow", "POST");
    } else if (!IsJsonContentType(request.content_type)) {
      reply = {http::Response::Text(
                   415, fmt::format("phalanx extender: {} takes application/json, not {}\n",
                                    VerbName(verb), request.content_type)),
               Outcome::kBadRequest};
    } else {
      reply = extender.Handle(verb, request.body);
    }
    if (observe) observe(verb, reply.outcome);
    return std::move(reply.response);
  };
}

}  // namespace phalanx::extender
