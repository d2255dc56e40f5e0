// The wire format of kube-scheduler's HTTP extender (k8s.io/kube-scheduler/extender/v1): what
// kube-scheduler POSTs to <urlPrefix>/filter, /prioritize and /bind, and what it reads back.
// The Go types carry no json tags, so the keys are the Go field names ("Pod", "NodeNames",
// "FailedAndUnresolvableNodes", "Host", "Score", "PodUID", ...), matched exactly as kube-scheduler
// writes them. Only what the extender decides on is decoded; the rest of the Pod is skipped.
//
//   ExtenderDecoder decoder;                       // one per thread: it owns the parse buffers
//   ExtenderArgs args;
//   RETURN_IF_ERROR(decoder.DecodeArgs(body, &args));  // views into `decoder`, until next call
//   FilterResult result{.node_names = {args.node_names[0]}};
//   std::string reply = EncodeFilterResult(result);
//
// Errors are InvalidArgument naming the field ("NodeNames[3]: expected a string"); the extender
// turns them into HTTP 400.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace phalanx::extender {

// More candidate names than this is not a kube-scheduler request (upstream Kubernetes is tested
// to 5,000 nodes); the cap bounds what one request can make us allocate.
inline constexpr size_t kMaxNodeNames = 100'000;
// Node, pod and namespace names are DNS subdomains or labels: at most 253 bytes. UIDs and label
// values are shorter still.
inline constexpr size_t kMaxNameBytes = 253;

// What the extender reads of ExtenderArgs.Pod. Views into the decoder's buffers.
struct PodView {
  std::string_view ns;              // metadata.namespace (required)
  std::string_view name;            // metadata.name (required)
  std::string_view uid;             // metadata.uid ("" if absent)
  std::string_view scheduler_name;  // spec.schedulerName ("" if absent)
  // metadata.labels["phalanx.dev/job"] and ["phalanx.dev/rank"], unset if absent.
  std::optional<std::string_view> job;
  std::optional<std::string_view> rank;
  // The uid of metadata.ownerReferences' controller entry ("" if none).
  std::string_view controller_uid;
};

// ExtenderArgs{Pod, Nodes, NodeNames}: the body of filter and prioritize.
struct ExtenderArgs {
  PodView pod;
  // The candidates: NodeNames when kube-scheduler sends them (nodeCacheCapable: true), else the
  // metadata.name of every item of Nodes. In kube-scheduler's order.
  std::vector<std::string_view> node_names;
  // True when the names came from Nodes (nodeCacheCapable: false): a filter reply must then
  // carry Nodes too, since kube-scheduler ignores NodeNames in that mode.
  bool from_node_list = false;
  // With from_node_list, the JSON text of each item of Nodes, parallel to node_names, to be
  // handed back in the reply.
  std::vector<std::string_view> node_objects;
};

// ExtenderBindingArgs{PodName, PodNamespace, PodUID, Node}: the body of bind.
struct BindingArgs {
  std::string_view pod_name;       // required
  std::string_view pod_namespace;  // required
  std::string_view pod_uid;        // "" if absent
  std::string_view node;           // required
};

// Decodes request bodies with simdjson's on-demand parser, which walks the large Pod object
// without building it. Keeps its buffers between calls, so a decode allocates nothing once warm.
// Not thread-safe; the views it hands out are valid until the next call.
class ExtenderDecoder {
 public:
  ExtenderDecoder();
  ~ExtenderDecoder();
  ExtenderDecoder(const ExtenderDecoder&) = delete;
  ExtenderDecoder& operator=(const ExtenderDecoder&) = delete;

  // A body with Nodes instead of NodeNames is also validated in full (the node objects are
  // echoed in the reply, so they must be valid JSON, not just skippable).
  // InvalidArgument naming the field for malformed JSON, a wrong type, a missing Pod,
  // Pod.metadata.name or namespace, both NodeNames and Nodes missing or null, more than
  // kMaxNodeNames candidates, or a name that is empty or longer than kMaxNameBytes.
  absl::Status DecodeArgs(std::string_view body, ExtenderArgs* args);
  // InvalidArgument for malformed JSON, a wrong type or a missing PodName, PodNamespace or Node.
  absl::Status DecodeBinding(std::string_view body, BindingArgs* args);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A node the pod cannot run on and why: the reason is what `kubectl describe pod` shows.
struct NodeFailure {
  std::string_view node;
  std::string_view reason;
};

// ExtenderFilterResult{Nodes, NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error}.
struct FilterResult {
  std::vector<std::string_view> node_names;         // the nodes that pass
  std::vector<NodeFailure> failed;                  // FailedNodes: preemption may help
  std::vector<NodeFailure> failed_and_unresolvable;  // FailedAndUnresolvableNodes: it cannot
  std::string error;                                // fails the whole attempt if not empty
  // For a request that came with Nodes (ExtenderArgs::from_node_list): reply with Nodes, whose
  // items are these JSON objects written verbatim (the passing nodes' ExtenderArgs::
  // node_objects), and "NodeNames":null. kube-scheduler v1.34 builds the NodeInfo it goes on
  // scoring from each returned object, so they must be the whole Node, not just a name.
  bool as_node_list = false;
  std::vector<std::string_view> node_objects;
};

// HostPriority{Host, Score}; Score is 0..10 (MaxExtenderPriority).
struct HostPriority {
  std::string_view host;
  int64_t score = 0;
};

inline constexpr int64_t kMaxExtenderPriority = 10;

// The reply bodies. JSON strings are escaped, so any reason or error text is safe to pass.
std::string EncodeFilterResult(const FilterResult& result);
std::string EncodeHostPriorityList(const std::vector<HostPriority>& priorities);
// ExtenderBindingResult{Error}: "" means bound.
std::string EncodeBindingResult(std::string_view error);

// Appends `text` to `out` as a JSON string literal (quotes included).
void AppendJsonString(std::string_view text, std::string* out);

}  // namespace phalanx::extender
