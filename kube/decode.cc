#include "kube/decode.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/quantity.h"
#include "common/resources.h"
#include "common/status.h"
#include "kube/internal/strings.h"
#include "simdjson.h"

namespace kube {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::raw_json_string;
using simdjson::ondemand::value;

absl::Status JsonError(simdjson::error_code error, std::string_view where) {
  return absl::InvalidArgumentError(
      internal::Cat("malformed JSON at ", where, ": ", simdjson::error_message(error)));
}

#define KUBE_JSON_TRY(expr, where)                                     \
  do {                                                                 \
    simdjson::error_code kube_json_error_ = (expr);                    \
    if (kube_json_error_) return JsonError(kube_json_error_, (where)); \
  } while (0)

// Decoded values by the JSON text they came from. Decoding is a function of the text, so a
// subtree that repeats across objects (the tolerations of every pod of a DaemonSet, the owner of
// every rank of a job) is decoded once and its value shared by all of them. Bounded: emptied
// when full, between objects, so values handed out stay valid (they are shared, not owned).
// The keys live in an arena of large blocks: a text seen once costs no allocation of its own.
template <typename V>
class TextMemo {
 public:
  // Texts longer than this (kubectl's last-applied annotation, say) are decoded every time
  // rather than kept as keys: they rarely repeat.
  static constexpr size_t kMaxText = 1024;

  // Neighbours in a list (the ranks of one job, the pods of one DaemonSet) usually repeat the
  // same text, and comparing with the last one found is cheaper than hashing.
  const V* Find(std::string_view text) {
    if (last_ != nullptr && text == std::string_view(last_->first.data(), last_->first.size())) {
      return &last_->second;
    }
    auto it = map_.find(absl::string_view(text.data(), text.size()));
    if (it == map_.end()) return nullptr;
    last_ = &*it;
    return &it->second;
  }
  // Remembers `value` for `text` (if short enough) and returns it.
  V Put(std::string_view text, V value) {
    if (text.size() <= kMaxText) {
      last_ = nullptr;  // the insertion may move entries
      map_.insert_or_assign(Keep(text), value);
    }
    return value;
  }
  void Trim() {
    if (map_.size() < kMaxEntries) return;
    last_ = nullptr;
    map_.clear();
    blocks_.clear();
    used_ = kBlock;
  }

 private:
  static constexpr size_t kMaxEntries = 4096;
  static constexpr size_t kBlock = 64 * 1024;  // > kMaxText

  absl::string_view Keep(std::string_view text) {
    // An empty text as the first key must still get a block: blocks_.back() needs one.
    if (blocks_.empty() || used_ + text.size() > kBlock) {
      blocks_.push_back(std::make_unique<char[]>(kBlock));
      used_ = 0;
    }
    char* at = blocks_.back().get() + used_;
    std::memcpy(at, text.data(), text.size());
    used_ += text.size();
    return absl::string_view(at, text.size());
  }

  absl::flat_hash_map<absl::string_view, V> map_;  // keys point into blocks_
  const std::pair<const absl::string_view, V>* last_ = nullptr;  // the last entry found
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t used_ = kBlock;
};

// A container's part in its pod's requests: what kind of container it is and the text of its
// `resources` (a view into the document, which outlives the pod's decode).
struct ContainerRequests {
  char kind = 'C';  // 'C' container, 'I' init container, 'S' sidecar, 'O' pod overhead
  std::string_view resources;  // the text of `resources` (of `overhead` for 'O')
  std::string_view name;       // of an init container, to tell a sidecar's exit ("" otherwise)
};

// What the decode functions share for the life of a Decoder: the string pool, the memos, and
// scratch vectors that collect a list's entries so that each object gets one right-sized
// allocation instead of a vector grown entry by entry.
struct Context {
  StringPool pool;
  TextMemo<StringMap> maps;
  TextMemo<SharedList<OwnerReference>> owners;
  TextMemo<SharedList<InternedString>> finalizers;
  TextMemo<SharedList<Toleration>> tolerations;
  TextMemo<SharedList<Taint>> taints;
  TextMemo<Shared<phalanx::ResourceList>> resources;  // allocatable, or a pod's signature
  std::vector<StringMap::Entry> entries;
  std::vector<ContainerRequests> containers;
  std::string signature;
  // Re-reads a resources text whose signature is not memoised yet.
  simdjson::ondemand::parser side_parser;
  std::string side_buffer;

  void Trim() {
    maps.Trim();
    owners.Trim();
    finalizers.Trim();
    tolerations.Trim();
    taints.Trim();
    resources.Trim();
  }
};

// A field name as written in the text, compared without unescaping it: the names we look for
// are plain ASCII, which JSON writers never escape, and most fields are skipped unread. Reading
// N bytes past a shorter key stays inside the document or its padding.
template <size_t N>
bool Is(const raw_json_string& key, const char (&name)[N]) {
  const char* raw = key.raw();
  return std::memcmp(raw, name, N - 1) == 0 && raw[N - 1] == '"';
}

// Null stands for "absent" anywhere in Kubernetes JSON (e.g. "creationTimestamp": null).
bool IsNull(value& v) {
  json_type type;
  return v.type().get(type) == simdjson::SUCCESS && type == json_type::null;
}

// Opens the object held in `v`; *present is false (and the status OK) for null. A type mismatch
// does not move simdjson's iterator, so the null check costs nothing on the common path.
absl::Status OpenObject(value& v, std::string_view where, object* obj, bool* present) {
  simdjson::error_code error = v.get_object().get(*obj);
  *present = error == simdjson::SUCCESS;
  if (error && !IsNull(v)) return JsonError(error, where);
  return absl::OkStatus();
}

absl::Status OpenArray(value& v, std::string_view where, array* arr, bool* present) {
  simdjson::error_code error = v.get_array().get(*arr);
  *present = error == simdjson::SUCCESS;
  if (error && !IsNull(v)) return JsonError(error, where);
  return absl::OkStatus();
}

// Calls fn(key, value) for every field of `obj`, with the key as written (see Is), until done()
// says everything wanted has been read: the parent's iterator then skips the rest with a plain
// token walk, which costs less than visiting each remaining field.
template <typename Fn, typename Done>
absl::Status ForEachField(object& obj, std::string_view where, Fn&& fn, Done&& done) {
  for (auto field : obj) {
    raw_json_string key;
    KUBE_JSON_TRY(field.key().get(key), where);
    value child;
    KUBE_JSON_TRY(field.value().get(child), where);
    RETURN_IF_ERROR(fn(key, child));
    if (done()) break;
  }
  return absl::OkStatus();
}

// The same for the object held in `v` (nothing for null).
template <typename Fn, typename Done>
absl::Status ForEachField(value& v, std::string_view where, Fn&& fn, Done&& done) {
  object obj;
  bool present = false;
  RETURN_IF_ERROR(OpenObject(v, where, &obj, &present));
  if (!present) return absl::OkStatus();
  return ForEachField(obj, where, std::forward<Fn>(fn), std::forward<Done>(done));
}

template <typename Fn>
absl::Status ForEachField(value& v, std::string_view where, Fn&& fn) {
  return ForEachField(v, where, std::forward<Fn>(fn), [] { return false; });
}

// A key that is data (a label key, a resource name), unescaped. Most hold no escapes and are
// read in place, up to the closing quote; the others are unescaped into the parser's string
// buffer. Either way the view lasts until the document is done.
absl::Status KeyText(simdjson::simdjson_result<simdjson::ondemand::field>& field,
                     std::string_view where, std::string_view* out) {
  raw_json_string key;
  KUBE_JSON_TRY(field.key().get(key), where);
  const char* start = key.raw();
  const char* end = start;
  while (*end != '"' && *end != '\\') ++end;  // stage 1 has checked that every key is closed
  if (*end == '"') {
    *out = std::string_view(start, end - start);
    return absl::OkStatus();
  }
  KUBE_JSON_TRY(field.unescaped_key().get(*out), where);
  return absl::OkStatus();
}

// Calls fn(key, value) for every field of an object whose keys are data (labels, resources).
template <typename Fn>
absl::Status ForEachEntry(object& obj, std::string_view where, Fn&& fn) {
  for (auto field : obj) {
    KUBE_JSON_TRY(field.error(), where);
    std::string_view key;
    RETURN_IF_ERROR(KeyText(field, where, &key));
    value child;
    KUBE_JSON_TRY(field.value().get(child), where);
    RETURN_IF_ERROR(fn(key, child));
  }
  return absl::OkStatus();
}

// Calls fn(element) for every element of `arr`.
template <typename Fn>
absl::Status ForEachElement(array& arr, std::string_view where, Fn&& fn) {
  for (auto element : arr) {
    value child;
    KUBE_JSON_TRY(element.get(child), where);
    RETURN_IF_ERROR(fn(child));
  }
  return absl::OkStatus();
}

// The unescaped text of a string value ("" for null), valid until the document is done. Most
// strings hold no escapes: those are read in place, straight from the token (which runs to the
// next structural character, so it may end in whitespace), instead of being copied out.
absl::Status ReadView(value& v, std::string_view where, std::string_view* out) {
  std::string_view token = v.raw_json_token();
  if (token.size() >= 2 && token.front() == '"') {
    size_t end = token.size() - 1;
    while (end > 0 && token[end] != '"') --end;  // trailing whitespace
    if (end > 0) {
      std::string_view text = token.substr(1, end - 1);
      if (text.find('\\') == std::string_view::npos) {
        *out = text;
        return absl::OkStatus();
      }
    }
  }
  simdjson::error_code error = v.get_string().get(*out);
  if (error) {
    *out = {};
    if (!IsNull(v)) return JsonError(error, where);
  }
  return absl::OkStatus();
}

absl::Status ReadString(value& v, std::string_view where, std::string* out) {
  std::string_view text;
  RETURN_IF_ERROR(ReadView(v, where, &text));
  out->assign(text);
  return absl::OkStatus();
}

absl::Status ReadString(value& v, std::string_view where, Context& cx, InternedString* out) {
  std::string_view text;
  RETURN_IF_ERROR(ReadView(v, where, &text));
  *out = cx.pool.Intern(text);
  return absl::OkStatus();
}

absl::Status ReadBool(value& v, std::string_view where, bool* out) {
  simdjson::error_code error = v.get_bool().get(*out);
  if (error && !IsNull(v)) return JsonError(error, where);
  return absl::OkStatus();
}

// Reads the object in `v` through `memo`: the first time a text is seen, decode(obj) builds the
// value from the object (rewound after its text was taken); later the value is shared. Null is
// the default value.
template <typename V, typename DecodeFn>
absl::Status ReadMemoObject(value& v, std::string_view where, TextMemo<V>& memo, DecodeFn&& decode,
                            V* out) {
  object obj;
  bool present = false;
  RETURN_IF_ERROR(OpenObject(v, where, &obj, &present));
  if (!present) {
    *out = V();
    return absl::OkStatus();
  }
  std::string_view text;
  KUBE_JSON_TRY(obj.raw_json().get(text), where);
  if (const V* known = memo.Find(text)) {
    *out = *known;
    return absl::OkStatus();
  }
  bool not_empty = false;
  KUBE_JSON_TRY(obj.reset().get(not_empty), where);
  V decoded;
  RETURN_IF_ERROR(decode(obj, &decoded));
  *out = memo.Put(text, std::move(decoded));
  return absl::OkStatus();
}

// The same for an array, each element read by read(element, T*) into a Shared list.
template <typename T, typename ReadFn>
absl::Status ReadMemoList(value& v, std::string_view where, TextMemo<SharedList<T>>& memo,
                          ReadFn&& read, SharedList<T>* out) {
  array arr;
  bool present = false;
  RETURN_IF_ERROR(OpenArray(v, where, &arr, &present));
  if (!present) {
    *out = SharedList<T>();
    return absl::OkStatus();
  }
  std::string_view text;
  KUBE_JSON_TRY(arr.raw_json().get(text), where);
  if (const SharedList<T>* known = memo.Find(text)) {
    *out = *known;
    return absl::OkStatus();
  }
  bool not_empty = false;
  KUBE_JSON_TRY(arr.reset().get(not_empty), where);
  std::vector<T> items;
  RETURN_IF_ERROR(ForEachElement(arr, where, [&](value& element) {
    return read(element, &items.emplace_back());
  }));
  *out = memo.Put(text, SharedList<T>(items.begin(), items.end()));
  return absl::OkStatus();
}

absl::Status ReadStringMap(value& v, std::string_view where, Context& cx, StringMap* out) {
  return ReadMemoObject(
      v, where, cx.maps,
      [&](object& obj, StringMap* map) -> absl::Status {
        cx.entries.clear();
        RETURN_IF_ERROR(ForEachEntry(obj, where, [&](std::string_view key, value& item) {
          // Intern the key before reading the value: an unescaped key lives in a scratch buffer.
          InternedString k = cx.pool.Intern(key);
          std::string_view text;
          RETURN_IF_ERROR(ReadView(item, where, &text));
          cx.entries.emplace_back(std::move(k), cx.pool.Intern(text));
          return absl::OkStatus();
        }));
        *map = StringMap(std::move(cx.entries));  // leaves cx.entries empty, capacity kept
        return absl::OkStatus();
      },
      out);
}

// Calls set(name, canonical amount) for every quantity of a resource list ({"cpu": "500m"}).
template <typename Fn>
absl::Status ReadQuantities(object& obj, std::string_view where, Fn&& set) {
  return ForEachEntry(obj, where, [&](std::string_view name, value& item) -> absl::Status {
    std::string_view text;
    RETURN_IF_ERROR(ReadView(item, where, &text));
    absl::StatusOr<phalanx::Quantity> quantity = phalanx::Quantity::Parse(text);
    if (!quantity.ok()) {
      return phalanx::Annotate(quantity.status(), internal::Cat(where, "[", name, "]"));
    }
    absl::StatusOr<int64_t> amount = phalanx::CanonicalAmount(name, *quantity);
    if (!amount.ok()) return phalanx::Annotate(amount.status(), internal::Cat(where, "[", name, "]"));
    set(name, *amount);
    return absl::OkStatus();
  });
}

absl::Status ReadOwnerReference(value& v, Context& cx, OwnerReference* ref) {
  constexpr std::string_view kWhere = "metadata.ownerReferences";
  return ForEachField(v, kWhere, [&](const raw_json_string& key, value& item) {
    if (Is(key, "apiVersion")) return ReadString(item, kWhere, cx, &ref->api_version);
    if (Is(key, "kind")) return ReadString(item, kWhere, cx, &ref->kind);
    if (Is(key, "name")) return ReadString(item, kWhere, cx, &ref->name);
    if (Is(key, "uid")) return ReadString(item, kWhere, cx, &ref->uid);
    if (Is(key, "controller")) return ReadBool(item, kWhere, &ref->controller);
    if (Is(key, "blockOwnerDeletion")) return ReadBool(item, kWhere, &ref->block_owner_deletion);
    return absl::OkStatus();
  });
}

absl::Status ReadMeta(value& v, Context& cx, ObjectMeta* meta) {
  return ForEachField(v, "metadata", [&](const raw_json_string& key, value& item) -> absl::Status {
    if (Is(key, "name")) return ReadString(item, "metadata.name", &meta->name);
    if (Is(key, "namespace")) return ReadString(item, "metadata.namespace", &meta->namespace_);
    if (Is(key, "uid")) return ReadString(item, "metadata.uid", &meta->uid);
    if (Is(key, "resourceVersion")) {
      return ReadString(item, "metadata.resourceVersion", &meta->resource_version);
    }
    if (Is(key, "generation")) {
      KUBE_JSON_TRY(item.get_int64().get(meta->generation), "metadata.generation");
      return absl::OkStatus();
    }
    if (Is(key, "creationTimestamp")) {
      return ReadString(item, "metadata.creationTimestamp", cx, &meta->creation_timestamp);
    }
    if (Is(key, "deletionTimestamp")) {
      return ReadString(item, "metadata.deletionTimestamp", cx, &meta->deletion_timestamp);
    }
    if (Is(key, "labels")) return ReadStringMap(item, "metadata.labels", cx, &meta->labels);
    if (Is(key, "annotations")) {
      return ReadStringMap(item, "metadata.annotations", cx, &meta->annotations);
    }
    if (Is(key, "finalizers")) {
      return ReadMemoList(
          item, "metadata.finalizers", cx.finalizers,
          [&](value& f, InternedString* out) {
            return ReadString(f, "metadata.finalizers", cx, out);
          },
          &meta->finalizers);
    }
    if (Is(key, "ownerReferences")) {
      return ReadMemoList(
          item, "metadata.ownerReferences", cx.owners,
          [&](value& r, OwnerReference* out) { return ReadOwnerReference(r, cx, out); },
          &meta->owner_references);
    }
    return absl::OkStatus();  // managedFields and the rest are skipped unparsed
  });
}

// Calls fn(type, status, message) for each entry of a conditions array. Reading an entry stops
// once its type and status are known, unless wants_message(type, status) asks for the rest:
// the message is "" then.
template <typename Fn, typename WantsMessage>
absl::Status ForEachCondition(value& v, Fn&& fn, WantsMessage&& wants_message) {
  constexpr std::string_view kWhere = "status.conditions";
  array arr;
  bool present = false;
  RETURN_IF_ERROR(OpenArray(v, kWhere, &arr, &present));
  if (!present) return absl::OkStatus();
  return ForEachElement(arr, kWhere, [&](value& c) -> absl::Status {
    std::string_view type, status, message;
    bool seen_type = false, seen_status = false;
    RETURN_IF_ERROR(ForEachField(
        c, kWhere,
        [&](const raw_json_string& key, value& item) {
          if (Is(key, "type")) {
            seen_type = true;
            return ReadView(item, kWhere, &type);
          }
          if (Is(key, "status")) {
            seen_status = true;
            return ReadView(item, kWhere, &status);
          }
          if (Is(key, "message")) return ReadView(item, kWhere, &message);
          return absl::OkStatus();
        },
        [&] { return seen_type && seen_status && !wants_message(type, status); }));
    fn(type, status, message);
    return absl::OkStatus();
  });
}
template <typename Fn>
absl::Status ForEachCondition(value& v, Fn&& fn) {
  return ForEachCondition(
      v, [&](std::string_view type, std::string_view status, std::string_view) {
        fn(type, status);
      },
      [](std::string_view, std::string_view) { return false; });
}

// A resource list ({"cpu": "500m"}) in canonical units, shared through the memo.
absl::Status ReadResourceList(value& v, std::string_view where, Context& cx,
                              Shared<phalanx::ResourceList>* out) {
  return ReadMemoObject(
      v, where, cx.resources,
      [&](object& obj, Shared<phalanx::ResourceList>* list) -> absl::Status {
        phalanx::ResourceList decoded;
        RETURN_IF_ERROR(ReadQuantities(obj, where, [&](std::string_view name, int64_t amount) {
          decoded.insert_or_assign(std::string(name), amount);
        }));
        *list = std::move(decoded);
        return absl::OkStatus();
      },
      out);
}

// --- Node -----------------------------------------------------------------------------------

absl::Status ReadTaint(value& v, Context& cx, Taint* taint) {
  constexpr std::string_view kWhere = "spec.taints";
  return ForEachField(v, kWhere, [&](const raw_json_string& key, value& item) {
    if (Is(key, "key")) return ReadString(item, kWhere, cx, &taint->key);
    if (Is(key, "value")) return ReadString(item, kWhere, cx, &taint->value);
    if (Is(key, "effect")) return ReadString(item, kWhere, cx, &taint->effect);
    return absl::OkStatus();
  });
}

absl::Status DecodeNode(value& root, Context& cx, Node* node) {
  return ForEachField(root, "node", [&](const raw_json_string& key, value& item) -> absl::Status {
    if (Is(key, "metadata")) return ReadMeta(item, cx, &node->meta);
    if (Is(key, "spec")) {
      return ForEachField(item, "spec", [&](const raw_json_string& k, value& field) {
        if (Is(k, "unschedulable")) {
          return ReadBool(field, "spec.unschedulable", &node->unschedulable);
        }
        if (Is(k, "taints")) {
          return ReadMemoList(
              field, "spec.taints", cx.taints,
              [&](value& t, Taint* out) { return ReadTaint(t, cx, out); }, &node->taints);
        }
        return absl::OkStatus();
      });
    }
    if (Is(key, "status")) {
      return ForEachField(item, "status", [&](const raw_json_string& k, value& field) {
        if (Is(k, "allocatable")) {
          return ReadResourceList(field, "status.allocatable", cx, &node->allocatable);
        }
        if (Is(k, "conditions")) {
          return ForEachCondition(field, [&](std::string_view type, std::string_view status) {
            if (type == "Ready") node->ready = status == "True";
          });
        }
        return absl::OkStatus();
      });
    }
    return absl::OkStatus();
  });
}

// --- Pod ------------------------------------------------------------------------------------

// Reads a container's `resources` text (and, for an init container, its name and whether it is
// a sidecar) into cx.containers; the requests are computed from those texts at the end of the
// spec.
absl::Status ReadContainer(value& v, std::string_view where, bool init, Context& cx) {
  ContainerRequests& c = cx.containers.emplace_back();
  c.kind = init ? 'I' : 'C';
  bool seen_resources = false;
  bool seen_policy = !init;
  bool seen_name = !init;
  return ForEachField(
      v, where,
      [&](const raw_json_string& key, value& item) -> absl::Status {
        if (init && Is(key, "name")) {
          seen_name = true;
          return ReadView(item, where, &c.name);
        }
        if (Is(key, "resources")) {
          seen_resources = true;
          object obj;
          bool present = false;
          RETURN_IF_ERROR(OpenObject(item, where, &obj, &present));
          if (present) KUBE_JSON_TRY(obj.raw_json().get(c.resources), where);
        } else if (init && Is(key, "restartPolicy")) {
          seen_policy = true;
          std::string_view policy;
          RETURN_IF_ERROR(ReadView(item, where, &policy));
          if (policy == "Always") c.kind = 'S';
        }
        return absl::OkStatus();
      },
      [&] { return seen_resources && seen_policy && seen_name; });
}

// Parses the `requests` of a `resources` text (or a whole `overhead` text). Runs once per
// distinct signature, so it reads the text again with a parser of its own, plainly.
absl::Status ParseRequests(Context& cx, const ContainerRequests& c, phalanx::ResourceList* out) {
  if (c.resources.empty()) return absl::OkStatus();
  const std::string_view where = c.kind == 'O'   ? "spec.overhead"
                                 : c.kind == 'C' ? "spec.containers"
                                                 : "spec.initContainers";
  cx.side_buffer.reserve(c.resources.size() + simdjson::SIMDJSON_PADDING);
  cx.side_buffer.assign(c.resources);
  simdjson::ondemand::document doc;
  KUBE_JSON_TRY(cx.side_parser
                    .iterate(cx.side_buffer.data(), cx.side_buffer.size(),
                             cx.side_buffer.capacity())
                    .get(doc),
                where);
  object root;
  KUBE_JSON_TRY(doc.get_object().get(root), where);
  auto add = [&](object& requests) {
    return ReadQuantities(requests, where, [&](std::string_view name, int64_t amount) {
      out->insert_or_assign(std::string(name), amount);
    });
  };
  if (c.kind == 'O') return add(root);
  for (auto field : root) {
    raw_json_string key;
    KUBE_JSON_TRY(field.key().get(key), where);
    if (!Is(key, "requests")) continue;
    value requests;
    KUBE_JSON_TRY(field.value().get(requests), where);
    object obj;
    bool present = false;
    RETURN_IF_ERROR(OpenObject(requests, where, &obj, &present));
    if (present) RETURN_IF_ERROR(add(obj));
  }
  return absl::OkStatus();
}

// Effective requests as kube-scheduler computes them (resourcehelper.PodRequests): containers
// plus sidecars, at least the largest init step (phalanx::PodResourceSum), plus overhead. Every
// resource a container names is listed, zeros too.
absl::Status ComputeRequests(Context& cx, phalanx::ResourceList* out) {
  phalanx::PodResourceSum sum;
  phalanx::ResourceList overhead;
  for (const ContainerRequests& c : cx.containers) {
    phalanx::ResourceList r;
    RETURN_IF_ERROR(ParseRequests(cx, c, &r));
    switch (c.kind) {
      case 'C':
        sum.AddContainer(r);
        break;
      case 'O': phalanx::AddTo(overhead, r); break;
      case 'S':
        sum.AddSidecar(r);
        break;
      default:
        sum.AddInit(std::move(r));
    }
  }
  *out = std::move(sum).Total();
  phalanx::AddTo(*out, overhead);
  return absl::OkStatus();
}

absl::Status ReadToleration(value& v, Context& cx, Toleration* t) {
  constexpr std::string_view kWhere = "spec.tolerations";
  return ForEachField(v, kWhere, [&](const raw_json_string& key, value& item) {
    if (Is(key, "key")) return ReadString(item, kWhere, cx, &t->key);
    if (Is(key, "operator")) return ReadString(item, kWhere, cx, &t->operator_);
    if (Is(key, "value")) return ReadString(item, kWhere, cx, &t->value);
    if (Is(key, "effect")) return ReadString(item, kWhere, cx, &t->effect);
    return absl::OkStatus();
  });
}

// Calls read(element) for each element of the array in `v` (nothing for null).
template <typename Fn>
absl::Status ForEachIn(value& v, std::string_view where, Fn&& read) {
  array arr;
  bool present = false;
  RETURN_IF_ERROR(OpenArray(v, where, &arr, &present));
  if (!present) return absl::OkStatus();
  return ForEachElement(arr, where, std::forward<Fn>(read));
}

absl::Status DecodePodSpec(value& spec, Context& cx, Pod* pod) {
  cx.containers.clear();
  RETURN_IF_ERROR(
      ForEachField(spec, "spec", [&](const raw_json_string& key, value& item) -> absl::Status {
        if (Is(key, "nodeName")) return ReadString(item, "spec.nodeName", cx, &pod->node_name);
        if (Is(key, "schedulerName")) {
          return ReadString(item, "spec.schedulerName", cx, &pod->scheduler_name);
        }
        if (Is(key, "priorityClassName")) {
          return ReadString(item, "spec.priorityClassName", cx, &pod->priority_class_name);
        }
        if (Is(key, "priority")) {
          int64_t priority = 0;
          KUBE_JSON_TRY(item.get_int64().get(priority), "spec.priority");
          pod->priority = static_cast<int32_t>(priority);
          return absl::OkStatus();
        }
        if (Is(key, "nodeSelector")) {
          return ReadStringMap(item, "spec.nodeSelector", cx, &pod->node_selector);
        }
        if (Is(key, "tolerations")) {
          return ReadMemoList(
              item, "spec.tolerations", cx.tolerations,
              [&](value& t, Toleration* out) { return ReadToleration(t, cx, out); },
              &pod->tolerations);
        }
        if (Is(key, "overhead")) {
          object obj;
          bool present = false;
          RETURN_IF_ERROR(OpenObject(item, "spec.overhead", &obj, &present));
          if (present) {
            ContainerRequests& c = cx.containers.emplace_back();
            c.kind = 'O';
            KUBE_JSON_TRY(obj.raw_json().get(c.resources), "spec.overhead");
          }
          return absl::OkStatus();
        }
        if (Is(key, "containers")) {
          return ForEachIn(item, "spec.containers", [&](value& c) {
            return ReadContainer(c, "spec.containers", /*init=*/false, cx);
          });
        }
        if (Is(key, "initContainers")) {
          return ForEachIn(item, "spec.initContainers", [&](value& c) {
            return ReadContainer(c, "spec.initContainers", /*init=*/true, cx);
          });
        }
        return absl::OkStatus();
      }));
  // The requests are a function of the containers' kinds and resources texts, in order: pods of
  // one job or DaemonSet share them, computed once.
  cx.signature.clear();
  for (const ContainerRequests& c : cx.containers) {
    cx.signature.push_back(c.kind);  // then a JSON object, whose text says where it ends
    cx.signature.append(c.resources.empty() ? std::string_view("{}") : c.resources);
  }
  if (const Shared<phalanx::ResourceList>* known = cx.resources.Find(cx.signature)) {
    pod->requests = *known;
  } else {
    phalanx::ResourceList requests;
    RETURN_IF_ERROR(ComputeRequests(cx, &requests));
    pod->requests = cx.resources.Put(cx.signature, std::move(requests));
  }
  return absl::OkStatus();
}

// Adds the entry of a containerStatuses array in `c` to pod->exits if its container ended with a
// non-zero exit code.
absl::Status ReadContainerExit(value& c, std::string_view where, bool init, Context& cx,
                               Pod* pod) {
  ContainerExit exit;
  exit.init = init;
  bool terminated = false;
  RETURN_IF_ERROR(ForEachField(c, where, [&](const raw_json_string& key, value& item) {
    if (Is(key, "name")) return ReadString(item, where, cx, &exit.name);
    if (!Is(key, "state")) return absl::OkStatus();
    return ForEachField(item, where, [&](const raw_json_string& state, value& detail) {
      if (!Is(state, "terminated")) return absl::OkStatus();
      terminated = true;
      return ForEachField(detail, where, [&](const raw_json_string& f, value& v) -> absl::Status {
        if (Is(f, "exitCode")) {
          int64_t code = 0;
          KUBE_JSON_TRY(v.get_int64().get(code), where);
          exit.exit_code = static_cast<int32_t>(code);
        }
        if (Is(f, "reason")) return ReadString(v, where, cx, &exit.reason);
        if (Is(f, "finishedAt")) return ReadString(v, where, &exit.finished_at);
        return absl::OkStatus();
      });
    });
  }));
  if (terminated && exit.exit_code != 0) pod->exits.push_back(std::move(exit));
  return absl::OkStatus();
}

absl::Status ReadPodFields(value& root, Context& cx, Pod* pod) {
  return ForEachField(root, "pod", [&](const raw_json_string& key, value& item) -> absl::Status {
    if (Is(key, "metadata")) return ReadMeta(item, cx, &pod->meta);
    if (Is(key, "spec")) return DecodePodSpec(item, cx, pod);
    if (Is(key, "status")) {
      bool seen_phase = false, seen_conditions = false, seen_ip = false;
      RETURN_IF_ERROR(ForEachField(
          item, "status",
          [&](const raw_json_string& k, value& field) {
            if (Is(k, "phase")) {
              seen_phase = true;
              return ReadString(field, "status.phase", cx, &pod->phase);
            }
            if (Is(k, "podIP")) {
              seen_ip = true;
              return ReadString(field, "status.podIP", &pod->pod_ip);
            }
            if (Is(k, "conditions")) {
              seen_conditions = true;
              // Why a pod is not scheduled is read on: the pods-ready timeout's message says it.
              return ForEachCondition(
                  field,
                  [&](std::string_view type, std::string_view status, std::string_view message) {
                    if (type == "Ready") pod->ready = status == "True";
                    if (type == "PodScheduled") {
                      pod->unschedulable = status == "False";
                      if (pod->unschedulable) pod->unschedulable_message = std::string(message);
                    }
                    if (type == "DisruptionTarget") pod->disruption_target = status == "True";
                  },
                  [](std::string_view type, std::string_view status) {
                    return type == "PodScheduled" && status == "False";
                  });
            }
            if (Is(k, "reason")) return ReadString(field, "status.reason", cx, &pod->status_reason);
            if (Is(k, "message")) return ReadString(field, "status.message", &pod->status_message);
            if (Is(k, "containerStatuses")) {
              return ForEachIn(field, "status.containerStatuses", [&](value& c) {
                return ReadContainerExit(c, "status.containerStatuses", false, cx, pod);
              });
            }
            if (Is(k, "initContainerStatuses")) {
              return ForEachIn(field, "status.initContainerStatuses", [&](value& c) {
                return ReadContainerExit(c, "status.initContainerStatuses", true, cx, pod);
              });
            }
            return absl::OkStatus();
          },
          // podIP follows phase and conditions in the API server's field order; a pod without
          // one (not started yet) is read to the end of its status, and so is a Failed pod,
          // for its containers' exit codes.
          [&] { return seen_phase && seen_conditions && seen_ip && pod->phase != "Failed"; }));
      // The API server writes initContainerStatuses first; a Job's podFailurePolicy, which
      // TrainingJob's failure rules follow, looks at the regular containers first.
      std::stable_partition(pod->exits.begin(), pod->exits.end(),
                            [](const ContainerExit& e) { return !e.init; });
      return absl::OkStatus();
    }
    return absl::OkStatus();
  });
}

absl::Status DecodePod(value& root, Context& cx, Pod* pod) {
  cx.containers.clear();  // a pod without a spec has no sidecars
  RETURN_IF_ERROR(ReadPodFields(root, cx, pod));
  // A container's status does not say whether it is a sidecar; its spec does.
  for (ContainerExit& exit : pod->exits) {
    if (!exit.init) continue;
    for (const ContainerRequests& c : cx.containers) {
      if (c.kind == 'S' && c.name == exit.name.str()) exit.sidecar = true;
    }
  }
  return absl::OkStatus();
}

// --- RawObject ------------------------------------------------------------------------------

absl::Status DecodeRaw(value& root, Context& cx, RawObject* raw) {
  object obj;
  KUBE_JSON_TRY(root.get_object().get(obj), "object");
  std::string_view text;
  KUBE_JSON_TRY(obj.raw_json().get(text), "object");
  raw->json.assign(text);
  bool rewound = false;
  KUBE_JSON_TRY(obj.reset().get(rewound), "object");
  for (auto field : obj) {
    raw_json_string key;
    KUBE_JSON_TRY(field.key().get(key), "object");
    if (!Is(key, "metadata")) continue;
    value meta;
    KUBE_JSON_TRY(field.value().get(meta), "metadata");
    return ReadMeta(meta, cx, &raw->meta);
  }
  return absl::OkStatus();
}

// The memos are checked for size at object boundaries, never in the middle of a lookup.
absl::Status DecodeInto(value& v, Context& cx, Pod* out) {
  cx.Trim();
  return DecodePod(v, cx, out);
}
absl::Status DecodeInto(value& v, Context& cx, Node* out) {
  cx.Trim();
  return DecodeNode(v, cx, out);
}
absl::Status DecodeInto(value& v, Context& cx, RawObject* out) {
  cx.Trim();
  return DecodeRaw(v, cx, out);
}

}  // namespace

static_assert(Decoder::kPadding == simdjson::SIMDJSON_PADDING);

struct Decoder::Impl {
  simdjson::ondemand::parser parser;
  std::string buffer;
  Context context;
  // Items in the last list decoded: lists come in pages of one size, so reserving that many
  // saves growing (and faulting in) the vector every time.
  size_t last_list_size = 0;

  // simdjson reads up to SIMDJSON_PADDING bytes past the end: text whose allocation (`capacity`
  // bytes from json.data()) does not have them is copied into a buffer that does.
  simdjson::error_code Iterate(std::string_view json, size_t capacity,
                               simdjson::ondemand::document* doc) {
    if (capacity >= json.size() + simdjson::SIMDJSON_PADDING) {
      return parser.iterate(json.data(), json.size(), capacity).get(*doc);
    }
    buffer.reserve(json.size() + simdjson::SIMDJSON_PADDING);
    buffer.assign(json.data(), json.size());
    return parser.iterate(buffer.data(), buffer.size(), buffer.capacity()).get(*doc);
  }

  template <typename T>
  absl::StatusOr<DecodedList<T>> DecodeList(std::string_view json, size_t capacity);
};

Decoder::Decoder() : impl_(new Impl) {}
Decoder::~Decoder() { delete impl_; }

template <typename T>
absl::StatusOr<T> Decoder::Decode(std::string_view json) {
  simdjson::ondemand::document doc;
  KUBE_JSON_TRY(impl_->Iterate(json, 0, &doc), "document");
  value root;
  KUBE_JSON_TRY(doc.get_value().get(root), "document");
  T out;
  RETURN_IF_ERROR(DecodeInto(root, impl_->context, &out));
  return out;
}

template <typename T>
absl::StatusOr<DecodedList<T>> Decoder::DecodeList(std::string_view json) {
  return impl_->DecodeList<T>(json, 0);
}

template <typename T, typename S>
  requires std::same_as<S, std::string>
absl::StatusOr<DecodedList<T>> Decoder::DecodeList(const S& json) {
  return impl_->DecodeList<T>(json, json.capacity());
}

template <typename T>
absl::StatusOr<DecodedList<T>> Decoder::Impl::DecodeList(std::string_view json, size_t capacity) {
  simdjson::ondemand::document doc;
  KUBE_JSON_TRY(Iterate(json, capacity, &doc), "list");
  value root;
  KUBE_JSON_TRY(doc.get_value().get(root), "list");
  DecodedList<T> list;
  RETURN_IF_ERROR(
      ForEachField(root, "list", [&](const raw_json_string& key, value& item) -> absl::Status {
        if (Is(key, "metadata")) {
          return ForEachField(item, "list.metadata", [&](const raw_json_string& k, value& field) {
            if (Is(k, "resourceVersion")) {
              return ReadString(field, "list.metadata.resourceVersion", &list.resource_version);
            }
            if (Is(k, "continue")) {
              return ReadString(field, "list.metadata.continue", &list.continue_token);
            }
            return absl::OkStatus();
          });
        }
        if (Is(key, "items")) {
          if (IsNull(item)) return absl::OkStatus();
          array items;
          KUBE_JSON_TRY(item.get_array().get(items), "items");
          // No count_elements(): counting walks every token of every item, a fifth of the
          // whole decode. The last list's size is a better guess than nothing.
          list.items.reserve(last_list_size);
          for (auto element : items) {
            value v;
            KUBE_JSON_TRY(element.get(v), "items");
            T& out = list.items.emplace_back();
            absl::Status status = DecodeInto(v, context, &out);
            if (!status.ok()) {
              return phalanx::Annotate(status, internal::Cat("items[", list.items.size() - 1, "]"));
            }
          }
          last_list_size = list.items.size();
          return absl::OkStatus();
        }
        return absl::OkStatus();
      }));
  return list;
}

namespace {

absl::StatusOr<ListMeta> ParseListMeta(std::string_view json) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc;
  object root;
  KUBE_JSON_TRY(parser.iterate(padded).get(doc), "list");
  KUBE_JSON_TRY(doc.get_object().get(root), "list");
  ListMeta meta;
  for (auto field : root) {
    raw_json_string key;
    KUBE_JSON_TRY(field.key().get(key), "list");
    if (!Is(key, "metadata")) continue;
    value v;
    KUBE_JSON_TRY(field.value().get(v), "list.metadata");
    RETURN_IF_ERROR(ForEachField(v, "list.metadata", [&](const raw_json_string& k, value& item) {
      if (Is(k, "resourceVersion")) {
        return ReadString(item, "resourceVersion", &meta.resource_version);
      }
      if (Is(k, "continue")) return ReadString(item, "continue", &meta.continue_token);
      return absl::OkStatus();
    }));
    break;
  }
  return meta;
}

}  // namespace

absl::StatusOr<ListMeta> DecodeListMeta(std::string_view json) {
  // The API server writes {"kind":..,"apiVersion":..,"metadata":{..},"items":[..]}: parse only
  // the head up to "items" (closed with '}') instead of indexing megabytes of items. Anything
  // else, or a head that does not parse, falls back to the whole document.
  if (size_t items = json.find("\"items\":"); items != std::string_view::npos) {
    std::string head(json.substr(0, items));
    while (!head.empty() && (head.back() == ' ' || head.back() == '\n' || head.back() == '\t' ||
                             head.back() == '\r')) {
      head.pop_back();
    }
    if (!head.empty() && head.back() == ',') {
      head.back() = '}';
      absl::StatusOr<ListMeta> meta = ParseListMeta(head);
      if (meta.ok() && !meta->resource_version.empty()) return meta;
    }
  }
  return ParseListMeta(json);
}

template <typename T>
absl::StatusOr<T> Decode(std::string_view json) {
  Decoder decoder;
  return decoder.Decode<T>(json);
}

template <typename T>
absl::StatusOr<DecodedList<T>> DecodeList(std::string_view json) {
  Decoder decoder;
  return decoder.DecodeList<T>(json);
}

#define PHALANX_KUBE_DECODE_INSTANTIATE(T)                                            \
  template absl::StatusOr<T> Decoder::Decode<T>(std::string_view);                    \
  template absl::StatusOr<DecodedList<T>> Decoder::DecodeList<T>(std::string_view);   \
  template absl::StatusOr<DecodedList<T>> Decoder::DecodeList<T>(const std::string&); \
  template absl::StatusOr<T> Decode<T>(std::string_view);                             \
  template absl::StatusOr<DecodedList<T>> DecodeList<T>(std::string_view);
PHALANX_KUBE_DECODE_INSTANTIATE(Pod)
PHALANX_KUBE_DECODE_INSTANTIATE(Node)
PHALANX_KUBE_DECODE_INSTANTIATE(RawObject)
#undef PHALANX_KUBE_DECODE_INSTANTIATE

}  // namespace kube
