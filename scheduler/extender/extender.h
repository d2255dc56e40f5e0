// Extender: phalanx-scheduler's answers to kube-scheduler's extender webhook (docs/extender.md).
// kube-scheduler asks it about every pod that requests nvidia.com/gpu; it pins a gang pod (labels
// phalanx.dev/job and phalanx.dev/rank) to the node reserved for its rank, and passes every other
// pod through untouched. docs/extender.md describes the protocol and every decision.
//
//   KubeBinder binder(client);                          // or a gMock Binder in tests
//   Extender extender(placement_service, binder);
//   server->Handle("/scheduler/filter", MakeHandler(extender, Verb::kFilter, count_outcome));
//   server->Handle("/scheduler/prioritize", MakeHandler(extender, Verb::kPrioritize, ...));
//   server->Handle("/scheduler/bind", MakeHandler(extender, Verb::kBind, ...));
//
// Thread-safe: the HTTP server calls it from several threads at once. Each call looks at the
// snapshot under the placement service's lock only long enough to read one reservation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/http/http_server.h"
#include "scheduler/extender/extender_codec.h"
#include "scheduler/in_process_placement_service.h"

namespace phalanx::extender {

// Binds a pod to a node through the API (POST pods/<pod>/binding). Only one extender in a
// kube-scheduler may bind, and with bindVerb set kube-scheduler leaves every binding of the pods
// it sends us to us: gang pods and the others alike.
class Binder {
 public:
  virtual ~Binder() = default;
  // `uid` ("" to skip the check) makes the API server refuse a pod recreated under the same name.
  virtual absl::Status Bind(std::string_view ns, std::string_view pod, std::string_view uid,
                            std::string_view node) = 0;
};

enum class Verb : uint8_t { kFilter, kPrioritize, kBind };

// What an answer decided, for metrics (one counter per verb and outcome) and logs. kBadRequest
// stays last: callers iterate 0..kBadRequest to register one counter per outcome.
enum class Outcome : uint8_t {
  kPassThrough,           // not a gang pod: every node passes, no scores, bound where asked
  kPinned,                // gang pod: only its reserved node passes / scores / is bound
  kNoReservation,         // gang pod whose TrainingJob holds no reservation
  kBadLabels,             // gang pod with an empty job label or a missing or malformed rank
  kRankOutOfRange,        // gang pod whose rank is not below the reservation's size
  kReservedNodeRejected,  // the reserved node is not among the candidates kube-scheduler sent
  kWrongNode,             // bind: asked to bind a gang pod somewhere else than its reserved node
  kUnknownPod,            // bind: a pod this process has not filtered (e.g. after a restart)
  kBindFailed,            // bind: the API refused the binding
  kBadRequest,            // malformed or invalid request: HTTP 400 (405 for a method but POST,
                          // 415 for a Content-Type but JSON)
};

std::string_view VerbName(Verb verb);        // "filter", "prioritize", "bind"
std::string_view OutcomeName(Outcome outcome);  // "pass_through", "pinned", ...

struct Reply {
  http::Response response;
  Outcome outcome = Outcome::kPassThrough;
};

struct ExtenderOptions {
  // Pods remembered between filter and bind (bind's body has no labels). Older entries are
  // forgotten first; a forgotten pod's bind is refused and kube-scheduler retries it.
  size_t remembered_pods = 65'536;
  // When a gang pod passes on its reserved node, also list every other candidate in
  // FailedAndUnresolvableNodes ("rank 3 of ml/llama is reserved on node X"). Off by default:
  // kube-scheduler never shows those reasons (it schedules the pod on the one node left) and
  // drops unlisted nodes all the same, while decoding them costs it ~1 ms per 1,000 candidates
  // per pod and the reply grows by ~77 bytes a node (docs/extender.md has the figures).
  bool fail_unreserved_nodes = false;
  // The uid of TrainingJob "namespace/name", nullopt when no such job is known (a reservation
  // made straight through the Placement API, as tools and tests do). When set, a gang pod of a
  // known job binds to its reservation only if that job is the pod's controller
  // (metadata.ownerReferences): labels alone do not let another pod of the namespace take a
  // rank's node. Unset: labels alone decide.
  std::function<std::optional<std::string>(std::string_view job)> job_uid;
};

class Extender {
 public:
  Extender(const placement::InProcessPlacementService& placement, Binder& binder,
           ExtenderOptions options = {});

  // Each takes the request body and returns 200 with the JSON reply kube-scheduler expects
  // (failures of a pod are in the reply, never a 5xx), or 400 with a message naming the field
  // for a body that is not a valid request.
  Reply HandleFilter(std::string_view body);
  Reply HandlePrioritize(std::string_view body);
  Reply HandleBind(std::string_view body);
  Reply Handle(Verb verb, std::string_view body);

 private:
  // Where a gang pod may go, read from its reservation.
  struct GangDecision {
    Outcome outcome = Outcome::kPinned;  // kPinned or why not
    std::string job;                     // "namespace/name" of the TrainingJob
    int32_t rank = -1;
    std::string node;    // the reserved node (also when it is not among the candidates)
    std::string reason;  // for kubectl describe pod, when the pod cannot go anywhere
  };
  // What bind needs to know about a pod that filter saw.
  struct RememberedPod {
    std::string uid;
    bool gang = false;
    std::string job_label;
    std::string rank_label;
    bool has_rank = false;
    std::string controller_uid;
  };

  GangDecision DecideGang(std::string_view ns, std::string_view pod, std::string_view job_label,
                          const std::optional<std::string_view>& rank_label,
                          std::string_view controller_uid) const;
  void Remember(const PodView& pod);
  std::optional<RememberedPod> Recall(std::string_view ns, std::string_view name,
                                      std::string_view uid);
  void Forget(std::string_view ns, std::string_view name);
  Reply Bind(const BindingArgs& args, Outcome success);

  const placement::InProcessPlacementService& placement_;
  Binder& binder_;
  const ExtenderOptions options_;

  // Two generations: when `current_` is full it becomes `previous_` and the old `previous_` is
  // dropped, so memory stays bounded without per-entry bookkeeping. Keyed by "namespace/name".
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, RememberedPod> current_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, RememberedPod> previous_ ABSL_GUARDED_BY(mu_);
};

// An http::Handler serving `verb` of `extender`: POST only (405 with "Allow: POST" otherwise),
// JSON only (415 for a Content-Type other than application/json; none at all is read as JSON).
// `observe`, if set, is called with the verb and outcome of every request (metrics).
using OutcomeObserver = std::function<void(Verb, Outcome)>;
http::Handler MakeHandler(Extender& extender, Verb verb, OutcomeObserver observe = nullptr);

}  // namespace phalanx::extender
