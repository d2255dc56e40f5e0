// Decoding API objects from JSON into kube/objects.h structs with simdjson's on-demand parser,
// which skips what a struct does not keep (managedFields, env, volumes) without building a DOM.
//
//   ASSIGN_OR_RETURN(kube::DecodedList<kube::Pod> list, kube::DecodeList<kube::Pod>(body));
//   for (kube::Pod& pod : list.items) cache.Put(std::move(pod));
//   ASSIGN_OR_RETURN(kube::Node node, kube::Decode<kube::Node>(node_json));
//
// A Decoder that is used again (an informer's) shares what repeats between the objects it
// decodes: strings through its StringPool, and whole subtrees (labels, owners, tolerations,
// taints, a pod's requests) through memos keyed by their JSON text, so a DaemonSet's pods hold
// one copy of their tolerations and decoding them again costs a comparison. Instantiated for
// Pod, Node and RawObject (any custom resource).
#pragma once

#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kube/objects.h"

namespace kube {

template <typename T>
struct DecodedList {
  std::vector<T> items;
  std::string resource_version;
  // Non-empty when the server has more pages (pass as ListOptions::continue_token).
  std::string continue_token;
};

struct ListMeta {
  std::string resource_version;
  std::string continue_token;
};

// Only the metadata of a list response. The API server writes metadata before items, so the
// on-demand parser stops long before the items.
absl::StatusOr<ListMeta> DecodeListMeta(std::string_view json);

// Decodes one object. InvalidArgument names the field that was malformed.
template <typename T>
absl::StatusOr<T> Decode(std::string_view json);

// Decodes a list response ({"metadata":{...},"items":[...]}).
template <typename T>
absl::StatusOr<DecodedList<T>> DecodeList(std::string_view json);

// Reusable decoder: keeps simdjson's parser buffers between calls (the list decode in an informer
// relist, or the watch-event decode, runs many times). Not thread-safe.
class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  template <typename T>
  absl::StatusOr<T> Decode(std::string_view json);
  template <typename T>
  absl::StatusOr<DecodedList<T>> DecodeList(std::string_view json);
  // The same for a list held in a std::string: parsed where it lies when the string's spare
  // capacity covers simdjson's read-ahead (kPadding bytes past the end, the rule of
  // simdjson::padded_string_view), instead of being copied first (about 6 ms for a 54 MB list
  // on the development machine). Only std::string takes this overload; anything else goes
  // through std::string_view.
  template <typename T, typename S>
    requires std::same_as<S, std::string>
  absl::StatusOr<DecodedList<T>> DecodeList(const S& json);

  // Spare capacity past the end of a std::string that lets DecodeList skip the copy.
  static constexpr size_t kPadding = 64;

  struct Impl;

 private:
  Impl* impl_;
};

}  // namespace kube
