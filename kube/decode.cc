#include "kube/decode.h"

#include <algorithm>
#include <cstring>
#include <utility>

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

// Null stands for "absent" anywhere in Kubernetes JSON (e.g. "creationTimestamp": null).
bool IsNull(value& v) {
  json_type type;
  return v.type().get(type) == simdjson::SUCCESS && type == json_type::null;
}

// Calls fn(key, value) for every field of the object held in `v` (nothing for null).
template <typename Fn>
absl::Status ForEachField(value& v, std::string_view where, Fn&& fn) {
  if (IsNull(v)) return absl::OkStatus();
  object obj;
  KUBE_JSON_TRY(v.get_object().get(obj), where);
  for (auto field : obj) {
    std::string_view key;
    KUBE_JSON_TRY(field.unescaped_key().get(key), where);
    value child;
    KUBE_JSON_TRY(field.value().get(child), where);
    RETURN_IF_ERROR(fn(key, child));
  }
  return absl::OkStatus();
}

// Calls fn(element) for every element of the array held in `v` (nothing for null).
template <typename Fn>
absl::Status ForEachElement(value& v, std::string_view where, Fn&& fn) {
  if (IsNull(v)) return absl::OkStatus();
  array arr;
  KUBE_JSON_TRY(v.get_array().get(arr), where);
  for (auto element : arr) {
    value child;
    KUBE_JSON_TRY(element.get(child), where);
    RETURN_IF_ERROR(fn(child));
  }
  return absl::OkStatus();
}

absl::Status ReadString(value& v, std::string_view where, std::string* out) {
  if (IsNull(v)) {
    out->clear();
    return absl::OkStatus();
  }
  std::string_view text;
  KUBE_JSON_TRY(v.get_string().get(text), where);
  out->assign(text);
  return absl::OkStatus();
}

absl::Status ReadStringMap(value& v, std::string_view where, StringMap* out) {
  return ForEachField(v, where, [&](std::string_view key, value& item) -> absl::Status {
    // Copy the key before reading the value: unescaped keys live in a scratch buffer.
    std::string k(key);
    std::string text;
    RETURN_IF_ERROR(ReadString(item, where, &text));
    out->Set(std::move(k), std::move(text));
    return absl::OkStatus();
  });
}

absl::Status ReadQuantities(value& v, std::string_view where, phalanx::ResourceList* out) {
  return ForEachField(v, where, [&](std::string_view key, value& item) -> absl::Status {
    std::string name(key);
    std::string text;
    RETURN_IF_ERROR(ReadString(item, where, &text));
    absl::StatusOr<phalanx::Quantity> quantity = phalanx::Quantity::Parse(text);
    if (!quantity.ok()) {
      return phalanx::Annotate(quantity.status(), internal::Cat(where, "[", name, "]"));
    }
    (*out)[name] = phalanx::CanonicalAmount(name, *quantity);
    return absl::OkStatus();
  });
}

absl::Status ReadOwnerReference(value& v, OwnerReference* ref) {
  return ForEachField(v, "metadata.ownerReferences", [&](std::string_view key, value& item) {
    if (key == "apiVersion") return ReadString(item, key, &ref->api_version);
    if (key == "kind") return ReadString(item, key, &ref->kind);
    if (key == "name") return ReadString(item, key, &ref->name);
    if (key == "uid") return ReadString(item, key, &ref->uid);
    if (key == "controller") {
      KUBE_JSON_TRY(item.get_bool().get(ref->controller), "ownerReferences.controller");
    } else if (key == "blockOwnerDeletion") {
      KUBE_JSON_TRY(item.get_bool().get(ref->block_owner_deletion),
                    "ownerReferences.blockOwnerDeletion");
    }
    return absl::OkStatus();
  });
}

absl::Status ReadMeta(value& v, ObjectMeta* meta) {
  return ForEachField(v, "metadata", [&](std::string_view key, value& item) -> absl::Status {
    if (key == "name") return ReadString(item, "metadata.name", &meta->name);
    if (key == "namespace") return ReadString(item, "metadata.namespace", &meta->namespace_);
    if (key == "uid") return ReadString(item, "metadata.uid", &meta->uid);
    if (key == "resourceVersion") {
      return ReadString(item, "metadata.resourceVersion", &meta->resource_version);
    }
    if (key == "generation") {
      KUBE_JSON_TRY(item.get_int64().get(meta->generation), "metadata.generation");
      return absl::OkStatus();
    }
    if (key == "creationTimestamp") {
      return ReadString(item, "metadata.creationTimestamp", &meta->creation_timestamp);
    }
    if (key == "deletionTimestamp") {
      return ReadString(item, "metadata.deletionTimestamp", &meta->deletion_timestamp);
    }
    if (key == "labels") return ReadStringMap(item, "metadata.labels", &meta->labels);
    if (key == "annotations")
      return ReadStringMap(item, "metadata.annotations", &meta->annotations);
    if (key == "finalizers") {
      return ForEachElement(item, "metadata.finalizers", [&](value& f) {
        return ReadString(f, "metadata.finalizers", &meta->finalizers.emplace_back());
      });
    }
    if (key == "ownerReferences") {
      return ForEachElement(item, "metadata.ownerReferences", [&](value& r) {
        return ReadOwnerReference(r, &meta->owner_references.emplace_back());
      });
    }
    return absl::OkStatus();  // managedFields and the rest are skipped unparsed
  });
}

// Calls fn(type, status) for each entry of a conditions array.
template <typename Fn>
absl::Status ForEachCondition(value& v, Fn&& fn) {
  return ForEachElement(v, "status.conditions", [&](value& c) -> absl::Status {
    std::string type, status;
    RETURN_IF_ERROR(ForEachField(c, "status.conditions", [&](std::string_view key, value& item) {
      if (key == "type") return ReadString(item, "conditions.type", &type);
      if (key == "status") return ReadString(item, "conditions.status", &status);
      return absl::OkStatus();
    }));
    fn(type, status);
    return absl::OkStatus();
  });
}

// --- Node -----------------------------------------------------------------------------------

absl::Status DecodeNode(value& root, Node* node) {
  return ForEachField(root, "node", [&](std::string_view key, value& item) -> absl::Status {
    if (key == "metadata") return ReadMeta(item, &node->meta);
    if (key == "spec") {
      return ForEachField(item, "spec", [&](std::string_view k, value& field) -> absl::Status {
        if (k == "unschedulable") {
          KUBE_JSON_TRY(field.get_bool().get(node->unschedulable), "spec.unschedulable");
        } else if (k == "taints") {
          return ForEachElement(field, "spec.taints", [&](value& t) {
            Taint& taint = node->taints.emplace_back();
            return ForEachField(t, "spec.taints", [&](std::string_view tk, value& tv) {
              if (tk == "key") return ReadString(tv, "taints.key", &taint.key);
              if (tk == "value") return ReadString(tv, "taints.value", &taint.value);
              if (tk == "effect") return ReadString(tv, "taints.effect", &taint.effect);
              return absl::OkStatus();
            });
          });
        }
        return absl::OkStatus();
      });
    }
    if (key == "status") {
      return ForEachField(item, "status", [&](std::string_view k, value& field) -> absl::Status {
        if (k == "allocatable")
          return ReadQuantities(field, "status.allocatable", &node->allocatable);
        if (k == "conditions") {
          return ForEachCondition(field, [&](const std::string& type, const std::string& status) {
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

struct ContainerRequests {
  phalanx::ResourceList requests;
  bool restartable = false;  // an init container with restartPolicy: Always (a sidecar)
};

absl::Status ReadContainer(value& v, std::string_view where, ContainerRequests* out) {
  return ForEachField(v, where, [&](std::string_view key, value& item) -> absl::Status {
    if (key == "resources") {
      return ForEachField(item, where, [&](std::string_view k, value& field) -> absl::Status {
        if (k == "requests") return ReadQuantities(field, where, &out->requests);
        return absl::OkStatus();
      });
    }
    if (key == "restartPolicy") {
      std::string policy;
      RETURN_IF_ERROR(ReadString(item, where, &policy));
      out->restartable = policy == "Always";
    }
    return absl::OkStatus();
  });
}

void MaxInto(phalanx::ResourceList& a, const phalanx::ResourceList& b) {
  for (const auto& [name, amount] : b) {
    int64_t& slot = a[name];
    slot = std::max(slot, amount);
  }
}

absl::Status ReadToleration(value& v, Toleration* t) {
  return ForEachField(v, "spec.tolerations", [&](std::string_view key, value& item) {
    if (key == "key") return ReadString(item, "tolerations.key", &t->key);
    if (key == "operator") return ReadString(item, "tolerations.operator", &t->operator_);
    if (key == "value") return ReadString(item, "tolerations.value", &t->value);
    if (key == "effect") return ReadString(item, "tolerations.effect", &t->effect);
    return absl::OkStatus();
  });
}

absl::Status DecodePodSpec(value& spec, Pod* pod) {
  phalanx::ResourceList containers;
  phalanx::ResourceList sidecars;
  phalanx::ResourceList init_max;
  phalanx::ResourceList overhead;
  RETURN_IF_ERROR(
      ForEachField(spec, "spec", [&](std::string_view key, value& item) -> absl::Status {
        if (key == "nodeName") return ReadString(item, "spec.nodeName", &pod->node_name);
        if (key == "schedulerName")
          return ReadString(item, "spec.schedulerName", &pod->scheduler_name);
        if (key == "priorityClassName") {
          return ReadString(item, "spec.priorityClassName", &pod->priority_class_name);
        }
        if (key == "priority") {
          int64_t priority = 0;
          KUBE_JSON_TRY(item.get_int64().get(priority), "spec.priority");
          pod->priority = static_cast<int32_t>(priority);
          return absl::OkStatus();
        }
        if (key == "nodeSelector")
          return ReadStringMap(item, "spec.nodeSelector", &pod->node_selector);
        if (key == "tolerations") {
          return ForEachElement(item, "spec.tolerations", [&](value& t) {
            return ReadToleration(t, &pod->tolerations.emplace_back());
          });
        }
        if (key == "overhead") return ReadQuantities(item, "spec.overhead", &overhead);
        if (key == "containers") {
          return ForEachElement(item, "spec.containers", [&](value& c) -> absl::Status {
            ContainerRequests r;
            RETURN_IF_ERROR(ReadContainer(c, "spec.containers", &r));
            phalanx::AddTo(containers, r.requests);
            return absl::OkStatus();
          });
        }
        if (key == "initContainers") {
          // Init containers run in order; sidecars started earlier keep running alongside later
          // ones, so each step needs its own request plus the sidecars so far (kube-scheduler's
          // resourcehelper.PodRequests).
          return ForEachElement(item, "spec.initContainers", [&](value& c) -> absl::Status {
            ContainerRequests r;
            RETURN_IF_ERROR(ReadContainer(c, "spec.initContainers", &r));
            phalanx::ResourceList step;
            if (r.restartable) {
              phalanx::AddTo(sidecars, r.requests);
              step = sidecars;
            } else {
              step = r.requests;
              phalanx::AddTo(step, sidecars);
            }
            MaxInto(init_max, step);
            return absl::OkStatus();
          });
        }
        return absl::OkStatus();
      }));
  pod->requests = std::move(containers);
  phalanx::AddTo(pod->requests, sidecars);
  MaxInto(pod->requests, init_max);
  phalanx::AddTo(pod->requests, overhead);
  return absl::OkStatus();
}

absl::Status DecodePod(value& root, Pod* pod) {
  return ForEachField(root, "pod", [&](std::string_view key, value& item) -> absl::Status {
    if (key == "metadata") return ReadMeta(item, &pod->meta);
    if (key == "spec") return DecodePodSpec(item, pod);
    if (key == "status") {
      return ForEachField(item, "status", [&](std::string_view k, value& field) -> absl::Status {
        if (k == "phase") return ReadString(field, "status.phase", &pod->phase);
        if (k == "conditions") {
          return ForEachCondition(field, [&](const std::string& type, const std::string& status) {
            if (type == "Ready") pod->ready = status == "True";
            if (type == "PodScheduled") pod->unschedulable = status == "False";
          });
        }
        return absl::OkStatus();
      });
    }
    return absl::OkStatus();
  });
}

// --- RawObject ------------------------------------------------------------------------------

absl::Status DecodeRaw(value& root, RawObject* raw) {
  object obj;
  KUBE_JSON_TRY(root.get_object().get(obj), "object");
  std::string_view text;
  KUBE_JSON_TRY(obj.raw_json().get(text), "object");
  raw->json.assign(text);
  bool rewound = false;
  KUBE_JSON_TRY(obj.reset().get(rewound), "object");
  for (auto field : obj) {
    std::string_view key;
    KUBE_JSON_TRY(field.unescaped_key().get(key), "object");
    if (key != "metadata") continue;
    value meta;
    KUBE_JSON_TRY(field.value().get(meta), "metadata");
    return ReadMeta(meta, &raw->meta);
  }
  return absl::OkStatus();
}

absl::Status DecodeInto(value& v, Pod* out) { return DecodePod(v, out); }
absl::Status DecodeInto(value& v, Node* out) { return DecodeNode(v, out); }
absl::Status DecodeInto(value& v, RawObject* out) { return DecodeRaw(v, out); }

}  // namespace

struct Decoder::Impl {
  simdjson::ondemand::parser parser;
  std::string buffer;

  // simdjson reads up to SIMDJSON_PADDING bytes past the end: copy into a buffer that has them.
  simdjson::error_code Iterate(std::string_view json, simdjson::ondemand::document* doc) {
    buffer.reserve(json.size() + simdjson::SIMDJSON_PADDING);
    buffer.assign(json.data(), json.size());
    return parser.iterate(buffer.data(), buffer.size(), buffer.capacity()).get(*doc);
  }
};

Decoder::Decoder() : impl_(new Impl) {}
Decoder::~Decoder() { delete impl_; }

template <typename T>
absl::StatusOr<T> Decoder::Decode(std::string_view json) {
  simdjson::ondemand::document doc;
  KUBE_JSON_TRY(impl_->Iterate(json, &doc), "document");
  value root;
  KUBE_JSON_TRY(doc.get_value().get(root), "document");
  T out;
  RETURN_IF_ERROR(DecodeInto(root, &out));
  return out;
}

template <typename T>
absl::StatusOr<DecodedList<T>> Decoder::DecodeList(std::string_view json) {
  simdjson::ondemand::document doc;
  KUBE_JSON_TRY(impl_->Iterate(json, &doc), "list");
  value root;
  KUBE_JSON_TRY(doc.get_value().get(root), "list");
  DecodedList<T> list;
  RETURN_IF_ERROR(
      ForEachField(root, "list", [&](std::string_view key, value& item) -> absl::Status {
        if (key == "metadata") {
          return ForEachField(item, "list.metadata", [&](std::string_view k, value& field) {
            if (k == "resourceVersion") {
              return ReadString(field, "list.metadata.resourceVersion", &list.resource_version);
            }
            if (k == "continue")
              return ReadString(field, "list.metadata.continue", &list.continue_token);
            return absl::OkStatus();
          });
        }
        if (key == "items") {
          if (IsNull(item)) return absl::OkStatus();
          array items;
          KUBE_JSON_TRY(item.get_array().get(items), "items");
          // Counting walks only simdjson's structural index; it saves re-moving every decoded
          // object each time the vector grows.
          size_t count = 0;
          if (items.count_elements().get(count) == simdjson::SUCCESS) list.items.reserve(count);
          for (auto element : items) {
            value v;
            KUBE_JSON_TRY(element.get(v), "items");
            T& out = list.items.emplace_back();
            absl::Status status = DecodeInto(v, &out);
            if (!status.ok()) {
              return phalanx::Annotate(status, internal::Cat("items[", list.items.size() - 1, "]"));
            }
          }
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
    std::string_view key;
    KUBE_JSON_TRY(field.unescaped_key().get(key), "list");
    if (key != "metadata") continue;
    value v;
    KUBE_JSON_TRY(field.value().get(v), "list.metadata");
    RETURN_IF_ERROR(ForEachField(v, "list.metadata", [&](std::string_view k, value& item) {
      if (k == "resourceVersion") {
        return ReadString(item, "resourceVersion", &meta.resource_version);
      }
      if (k == "continue") return ReadString(item, "continue", &meta.continue_token);
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

#define PHALANX_KUBE_DECODE_INSTANTIATE(T)                                          \
  template absl::StatusOr<T> Decoder::Decode<T>(std::string_view);                  \
  template absl::StatusOr<DecodedList<T>> Decoder::DecodeList<T>(std::string_view); \
  template absl::StatusOr<T> Decode<T>(std::string_view);                           \
  template absl::StatusOr<DecodedList<T>> DecodeList<T>(std::string_view);
PHALANX_KUBE_DECODE_INSTANTIATE(Pod)
PHALANX_KUBE_DECODE_INSTANTIATE(Node)
PHALANX_KUBE_DECODE_INSTANTIATE(RawObject)
#undef PHALANX_KUBE_DECODE_INSTANTIATE

}  // namespace kube
