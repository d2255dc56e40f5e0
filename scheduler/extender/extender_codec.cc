#include "scheduler/extender/extender_codec.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <utility>

#include "common/api_labels.h"
#include "common/status.h"
#include "fmt/format.h"
#include "simdjson.h"
#include "spdlog/spdlog.h"

namespace phalanx::extender {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::document;
using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

absl::Status Invalid(std::string_view field, std::string_view problem) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", field, problem));
}

absl::Status JsonError(simdjson::error_code error, std::string_view field,
                       std::string_view expected) {
  if (error == simdjson::INCORRECT_TYPE) {
    return Invalid(field, fmt::format("expected {}", expected));
  }
  return absl::InvalidArgumentError(
      fmt::format("malformed JSON at {}: {}", field, simdjson::error_message(error)));
}

#define EXTENDER_JSON_TRY(expr, field, expected)                                      \
  do {                                                                                \
    simdjson::error_code extender_json_error_ = (expr);                               \
    if (extender_json_error_) return JsonError(extender_json_error_, field, expected); \
  } while (0)

// Go writes a nil pointer, slice or map as null; for us that is the same as absent.
absl::StatusOr<bool> IsNull(value& v, std::string_view field) {
  json_type type;
  simdjson::error_code error = v.type().get(type);
  if (error) return JsonError(error, field, "a JSON value");
  return type == json_type::null;
}

// Calls fn(key, value) for every field of the object in `v`; nothing for null. Any key order.
template <typename Fn>
absl::Status ForEachField(value& v, std::string_view field, Fn&& fn) {
  ASSIGN_OR_RETURN(bool null, IsNull(v, field));
  if (null) return absl::OkStatus();
  object obj;
  EXTENDER_JSON_TRY(v.get_object().get(obj), field, "an object");
  for (auto member : obj) {
    std::string_view key;
    EXTENDER_JSON_TRY(member.unescaped_key().get(key), field, "an object key");
    value child;
    EXTENDER_JSON_TRY(member.value().get(child), field, "a value");
    RETURN_IF_ERROR(fn(key, child));
  }
  return absl::OkStatus();
}

// Reads a string; null reads as "". The view lives in the parser's string buffer.
absl::Status ReadString(value& v, std::string_view field, std::string_view* out) {
  ASSIGN_OR_RETURN(bool null, IsNull(v, field));
  if (null) {
    *out = {};
    return absl::OkStatus();
  }
  EXTENDER_JSON_TRY(v.get_string().get(*out), field, "a string");
  if (out->size() > kMaxNameBytes) {
    return Invalid(field, fmt::format("longer than {} bytes", kMaxNameBytes));
  }
  return absl::OkStatus();
}

// Reads a name that must be there: a non-empty string of at most kMaxNameBytes.
absl::Status ReadName(value& v, std::string_view field, std::string_view* out) {
  RETURN_IF_ERROR(ReadString(v, field, out));
  if (out->empty()) return Invalid(field, "empty name");
  return absl::OkStatus();
}

// The field path of element `index` of `array_field`, built only when reporting an error.
std::string Element(std::string_view array_field, size_t index, std::string_view suffix = "") {
  return fmt::format("{}[{}]{}", array_field, index, suffix);
}

absl::Status TooManyNodes(std::string_view field) {
  return Invalid(field, fmt::format("more than {} nodes", kMaxNodeNames));
}

// Only the two gang labels are read (and type-checked); the others are skipped.
absl::Status DecodeLabels(value& v, PodView* pod) {
  return ForEachField(v, "Pod.metadata.labels", [&](std::string_view label, value& text) {
    std::optional<std::string_view>* slot = nullptr;
    if (label == kJobLabel) {
      slot = &pod->job;
    } else if (label == kRankLabel) {
      slot = &pod->rank;
    } else {
      return absl::OkStatus();
    }
    std::string_view read;
    RETURN_IF_ERROR(ReadString(text, fmt::format("Pod.metadata.labels[\"{}\"]", label), &read));
    *slot = read;
    return absl::OkStatus();
  });
}

// The uid of the ownerReferences entry with controller: true; the other entries are skipped.
absl::Status DecodeController(value& v, PodView* pod) {
  constexpr std::string_view kField = "Pod.metadata.ownerReferences";
  ASSIGN_OR_RETURN(bool null, IsNull(v, kField));
  if (null) return absl::OkStatus();
  array owners;
  EXTENDER_JSON_TRY(v.get_array().get(owners), kField, "an array");
  for (auto element : owners) {
    value owner;
    EXTENDER_JSON_TRY(element.get(owner), kField, "an object");
    bool controller = false;
    std::string_view uid;
    RETURN_IF_ERROR(ForEachField(owner, kField, [&](std::string_view key, value& item) {
      if (key == "uid") return ReadString(item, "Pod.metadata.ownerReferences[].uid", &uid);
      if (key != "controller") return absl::OkStatus();
      ASSIGN_OR_RETURN(bool absent, IsNull(item, "Pod.metadata.ownerReferences[].controller"));
      if (absent) return absl::OkStatus();
      EXTENDER_JSON_TRY(item.get_bool().get(controller),
                        "Pod.metadata.ownerReferences[].controller", "a boolean");
      return absl::OkStatus();
    }));
    if (controller) pod->controller_uid = uid;
  }
  return absl::OkStatus();
}

absl::Status DecodeMetadata(value& v, PodView* pod, bool* has_name, bool* has_namespace) {
  return ForEachField(v, "Pod.metadata", [&](std::string_view key, value& item) -> absl::Status {
    if (key == "name") {
      *has_name = true;
      return ReadName(item, "Pod.metadata.name", &pod->name);
    }
    if (key == "namespace") {
      *has_namespace = true;
      return ReadName(item, "Pod.metadata.namespace", &pod->ns);
    }
    if (key == "uid") return ReadString(item, "Pod.metadata.uid", &pod->uid);
    if (key == "labels") return DecodeLabels(item, pod);
    if (key == "ownerReferences") return DecodeController(item, pod);
    return absl::OkStatus();
  });
}

absl::Status DecodePod(value& v, PodView* pod) {
  ASSIGN_OR_RETURN(bool null, IsNull(v, "Pod"));
  if (null) return Invalid("Pod", "missing");
  bool has_name = false;
  bool has_namespace = false;
  RETURN_IF_ERROR(ForEachField(v, "Pod", [&](std::string_view key, value& item) -> absl::Status {
    if (key == "metadata") return DecodeMetadata(item, pod, &has_name, &has_namespace);
    if (key == "spec") {
      return ForEachField(item, "Pod.spec", [&](std::string_view k, value& field) {
        if (k == "schedulerName") {
          return ReadString(field, "Pod.spec.schedulerName", &pod->scheduler_name);
        }
        return absl::OkStatus();
      });
    }
    return absl::OkStatus();
  }));
  if (!has_name || pod->name.empty()) return Invalid("Pod.metadata.name", "missing");
  if (!has_namespace || pod->ns.empty()) return Invalid("Pod.metadata.namespace", "missing");
  return absl::OkStatus();
}

absl::Status DecodeNodeNames(value& v, std::vector<std::string_view>* names) {
  array elements;
  EXTENDER_JSON_TRY(v.get_array().get(elements), "NodeNames", "an array of strings");
  for (auto element : elements) {
    value item;
    EXTENDER_JSON_TRY(element.get(item), "NodeNames", "a string");
    std::string_view name;
    simdjson::error_code error = item.get_string().get(name);
    // The element's path is built only on these error paths: this loop runs 5,000 times a call.
    if (error) return JsonError(error, Element("NodeNames", names->size()), "a string");
    if (name.empty()) return Invalid(Element("NodeNames", names->size()), "empty name");
    if (name.size() > kMaxNameBytes) {
      return Invalid(Element("NodeNames", names->size()),
                     fmt::format("longer than {} bytes", kMaxNameBytes));
    }
    names->push_back(name);
    if (names->size() > kMaxNodeNames) return TooManyNodes("NodeNames");
  }
  return absl::OkStatus();
}

// Nodes is a v1.NodeList ({"metadata":{},"items":[Node...]}): each item's name, and its JSON
// text, which runs from its opening brace to the token after it (',' or ']').
absl::Status DecodeNodeList(document& doc, value& v, std::vector<std::string_view>* names,
                            std::vector<std::string_view>* objects) {
  return ForEachField(v, "Nodes", [&](std::string_view key, value& items_value) -> absl::Status {
    if (key != "items") return absl::OkStatus();
    ASSIGN_OR_RETURN(bool null, IsNull(items_value, "Nodes.items"));
    if (null) return absl::OkStatus();
    array items;
    EXTENDER_JSON_TRY(items_value.get_array().get(items), "Nodes.items", "an array of Nodes");
    for (auto element : items) {
      value node;
      EXTENDER_JSON_TRY(element.get(node), "Nodes.items", "a Node");
      const char* begin = node.raw_json_token().data();
      std::optional<std::string_view> name;
      absl::Status status = ForEachField(node, "item", [&](std::string_view k, value& meta) {
        if (k != "metadata") return absl::OkStatus();
        return ForEachField(meta, "metadata", [&](std::string_view field, value& text) {
          if (field != "name") return absl::OkStatus();
          std::string_view read;
          RETURN_IF_ERROR(ReadName(text, "metadata.name", &read));
          name = read;
          return absl::OkStatus();
        });
      });
      // Annotated here rather than passed down: a path string per node would cost an
      // allocation each for 5,000 nodes.
      if (!status.ok()) return Annotate(status, Element("Nodes.items", names->size()));
      if (!name) return Invalid(Element("Nodes.items", names->size(), ".metadata.name"), "missing");
      const char* end = nullptr;
      EXTENDER_JSON_TRY(doc.current_location().get(end), "Nodes.items", "',' or ']'");
      while (end > begin && std::isspace(static_cast<unsigned char>(end[-1]))) --end;
      names->push_back(*name);
      objects->emplace_back(begin, static_cast<size_t>(end - begin));
      if (names->size() > kMaxNodeNames) return TooManyNodes("Nodes.items");
    }
    return absl::OkStatus();
  });
}

// kube-scheduler sends exactly one JSON object; anything after it is not its request.
absl::Status CheckAtEnd(document& doc) {
  const char* location = nullptr;
  if (doc.current_location().get(location) == simdjson::OUT_OF_BOUNDS) return absl::OkStatus();
  return absl::InvalidArgumentError("malformed JSON: trailing content after the object");
}

}  // namespace

struct ExtenderDecoder::Impl {
  simdjson::ondemand::parser parser;
  std::string buffer;
  std::vector<std::string_view> node_list_names;  // scratch for Nodes, reused between calls
  std::vector<std::string_view> node_list_objects;
  // Validates whole bodies that carry Nodes; allocated on first use, which a kube-scheduler
  // with nodeCacheCapable: true never makes.
  std::unique_ptr<simdjson::dom::parser> validator;

  absl::Status Validate(size_t size) {
    if (!validator) validator = std::make_unique<simdjson::dom::parser>();
    simdjson::dom::element root;
    simdjson::error_code error = validator->parse(buffer.data(), size, false).get(root);
    if (error) return JsonError(error, "body", "a JSON object");
    return absl::OkStatus();
  }

  simdjson::ondemand::document doc;  // the body being decoded

  // Parses `body` as one JSON object (kube-scheduler's `type`) and calls fn(key, value) for each
  // field, in whatever order they come.
  template <typename Fn>
  absl::Status ForEachRootField(std::string_view body, std::string_view type, Fn&& fn) {
    // simdjson reads up to SIMDJSON_PADDING bytes past the end: copy into a buffer that has them.
    buffer.assign(body.data(), body.size());
    buffer.append(simdjson::SIMDJSON_PADDING, ' ');
    simdjson::error_code error = parser.iterate(buffer.data(), body.size(), buffer.size()).get(doc);
    if (error) return JsonError(error, "body", "a JSON object");
    object root;
    error = doc.get_object().get(root);
    if (error) return JsonError(error, "body", fmt::format("a JSON object ({})", type));
    for (auto member : root) {
      std::string_view key;
      EXTENDER_JSON_TRY(member.unescaped_key().get(key), "body", "an object key");
      value item;
      EXTENDER_JSON_TRY(member.value().get(item), key, "a value");
      RETURN_IF_ERROR(fn(key, item));
    }
    return CheckAtEnd(doc);
  }
};

ExtenderDecoder::ExtenderDecoder() : impl_(std::make_unique<Impl>()) {}
ExtenderDecoder::~ExtenderDecoder() = default;

absl::Status ExtenderDecoder::DecodeArgs(std::string_view body, ExtenderArgs* args) {
  args->pod = PodView{};
  args->node_names.clear();
  args->from_node_list = false;
  args->node_objects.clear();
  std::vector<std::string_view>& list_names = impl_->node_list_names;
  std::vector<std::string_view>& list_objects = impl_->node_list_objects;
  list_names.clear();
  list_objects.clear();

  bool has_pod = false;
  bool has_names = false;
  bool has_list = false;
  RETURN_IF_ERROR(impl_->ForEachRootField(body, "ExtenderArgs", [&](std::string_view key,
                                                                    value& item) -> absl::Status {
    if (key == "Pod") {
      has_pod = true;
      args->pod = PodView{};
      return DecodePod(item, &args->pod);
    }
    if (key == "NodeNames") {
      ASSIGN_OR_RETURN(bool null, IsNull(item, "NodeNames"));
      args->node_names.clear();
      has_names = !null;
      return null ? absl::OkStatus() : DecodeNodeNames(item, &args->node_names);
    }
    if (key == "Nodes") {
      ASSIGN_OR_RETURN(bool null, IsNull(item, "Nodes"));
      list_names.clear();
      list_objects.clear();
      has_list = !null;
      return null ? absl::OkStatus()
                  : DecodeNodeList(impl_->doc, item, &list_names, &list_objects);
    }
    return absl::OkStatus();
  }));
  if (!has_pod) return Invalid("Pod", "missing");
  if (!has_names) {
    if (!has_list) return Invalid("NodeNames", "missing, and no Nodes either");
    RETURN_IF_ERROR(impl_->Validate(body.size()));
    args->node_names.swap(list_names);
    args->node_objects.swap(list_objects);
    args->from_node_list = true;
  }
  return absl::OkStatus();
}

absl::Status ExtenderDecoder::DecodeBinding(std::string_view body, BindingArgs* args) {
  *args = BindingArgs{};
  RETURN_IF_ERROR(impl_->ForEachRootField(
      body, "ExtenderBindingArgs", [&](std::string_view key, value& item) -> absl::Status {
        if (key == "PodName") return ReadString(item, "PodName", &args->pod_name);
        if (key == "PodNamespace") return ReadString(item, "PodNamespace", &args->pod_namespace);
        if (key == "PodUID") return ReadString(item, "PodUID", &args->pod_uid);
        if (key == "Node") return ReadString(item, "Node", &args->node);
        return absl::OkStatus();
      }));
  if (args->pod_name.empty()) return Invalid("PodName", "missing");
  if (args->pod_namespace.empty()) return Invalid("PodNamespace", "missing");
  if (args->node.empty()) return Invalid("Node", "missing");
  return absl::OkStatus();
}

namespace {

// The encoders size their output exactly first, then fill one allocation with plain copies: a
// gang pod's filter reply repeats one reason for thousands of nodes (~400 KB for 5,000), and
// piece-by-piece appends were most of the call's cost.

// How many bytes each byte grows by when escaped inside a JSON string.
constexpr std::array<uint8_t, 256> MakeEscapeGrowth() {
  std::array<uint8_t, 256> growth{};
  for (int c = 0; c < 0x20; ++c) growth[c] = 5;  // \u00XX
  for (char c : {'"', '\\', '\n', '\r', '\t', '\b', '\f'}) {
    growth[static_cast<unsigned char>(c)] = 1;  // \" \\ \n ...
  }
  return growth;
}
constexpr std::array<uint8_t, 256> kEscapeGrowth = MakeEscapeGrowth();

// True if a byte of `word` is below 0x20, '"' or '\\' (bit tricks from "Bit Twiddling Hacks":
// exact as a yes/no answer for thresholds up to 0x80).
bool WordNeedsEscape(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  auto has_zero = [](uint64_t v) { return ((v - kOnes) & ~v & kHigh) != 0; };
  const bool below_space = ((word - kOnes * 0x20) & ~word & kHigh) != 0;
  return below_space || has_zero(word ^ (kOnes * '"')) || has_zero(word ^ (kOnes * '\\'));
}

// The size of `text` as a JSON string literal, quotes included. Names almost never need an
// escape, so they are checked eight bytes at a time before any byte is looked at alone.
size_t QuotedSize(std::string_view text) {
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    if (WordNeedsEscape(word)) break;
  }
  size_t size = text.size() + 2;
  for (; i < text.size(); ++i) size += kEscapeGrowth[static_cast<unsigned char>(text[i])];
  return size;
}

char* Put(char* out, std::string_view text) {
  std::memcpy(out, text.data(), text.size());
  return out + text.size();
}

// Writes `text` as a JSON string literal of `quoted_size` bytes (QuotedSize(text)).
char* PutQuoted(char* out, std::string_view text, size_t quoted_size) {
  static constexpr char kHex[] = "0123456789abcdef";
  *out++ = '"';
  if (quoted_size == text.size() + 2) {
    out = Put(out, text);
  } else {
    for (char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if (kEscapeGrowth[byte] == 0) {
        *out++ = c;
        continue;
      }
      *out++ = '\\';
      switch (byte) {
        case '"': *out++ = '"'; break;
        case '\\': *out++ = '\\'; break;
        case '\n': *out++ = 'n'; break;
        case '\r': *out++ = 'r'; break;
        case '\t': *out++ = 't'; break;
        case '\b': *out++ = 'b'; break;
        case '\f': *out++ = 'f'; break;
        default:
          out = Put(out, "u00");
          *out++ = kHex[byte >> 4];
          *out++ = kHex[byte & 0xf];
      }
    }
  }
  *out++ = '"';
  return out;
}

// A FailedNodesMap: {"node":"reason",...}. A reason shared by consecutive failures (the usual
// case: one reason for every node) is sized once and copied from where it was first written.
class FailuresWriter {
 public:
  explicit FailuresWriter(const std::vector<NodeFailure>& failures) : failures_(failures) {}

  size_t Size() {
    size_t size = 2 + (failures_.empty() ? 0 : failures_.size() - 1);  // braces and commas
    for (const NodeFailure& failure : failures_) {
      const size_t node_size = QuotedSize(failure.node);
      plain_nodes_ = plain_nodes_ && node_size == failure.node.size() + 2;
      size += node_size + 1 + ReasonSize(failure.reason);
    }
    return size;
  }

  char* Write(char* out) {
    *out++ = '{';
    const char* written = nullptr;  // where the current reason's literal was written
    std::string_view current;
    size_t current_size = 0;
    for (size_t i = 0; i < failures_.size(); ++i) {
      const NodeFailure& failure = failures_[i];
      if (i > 0) *out++ = ',';
      out = PutQuoted(out, failure.node,
                      plain_nodes_ ? failure.node.size() + 2 : QuotedSize(failure.node));
      *out++ = ':';
      if (written == nullptr || !Same(failure.reason, current)) {
        current = failure.reason;
        current_size = QuotedSize(current);
        written = out;
        out = PutQuoted(out, current, current_size);
      } else {
        std::memcpy(out, written, current_size);
        out += current_size;
      }
    }
    *out++ = '}';
    return out;
  }

 private:
  static bool Same(std::string_view a, std::string_view b) {
    return a.data() == b.data() && a.size() == b.size();
  }

  size_t ReasonSize(std::string_view reason) {
    if (!Same(reason, sized_reason_)) {
      sized_reason_ = reason;
      sized_reason_size_ = QuotedSize(reason);
    }
    return sized_reason_size_;
  }

  const std::vector<NodeFailure>& failures_;
  bool plain_nodes_ = true;  // no node name needs an escape: Write() need not look again
  std::string_view sized_reason_;
  size_t sized_reason_size_ = 0;
};

// Fills `size` bytes of a new string with `write(char*) -> end`, and checks the size was right:
// a wrong size is a bug in this file, and writing past the end must never go unnoticed.
template <typename Write>
std::string Build(size_t size, Write&& write) {
  std::string out(size, '\0');
  char* end = write(out.data());
  if (end != out.data() + size) {
    spdlog::critical("extender codec: sized {} bytes, wrote {}", size, end - out.data());
    std::abort();
  }
  return out;
}

}  // namespace

void AppendJsonString(std::string_view text, std::string* out) {
  const size_t at = out->size();
  const size_t size = QuotedSize(text);
  out->resize(at + size);
  PutQuoted(out->data() + at, text, size);
}

std::string EncodeFilterResult(const FilterResult& result) {
  // Field order as Go's encoding/json writes ExtenderFilterResult.
  static constexpr std::string_view kNodeListOpen = R"({"Nodes":{"metadata":{},"items":[)";
  static constexpr std::string_view kNodeListClose = R"(]},"NodeNames":null)";
  static constexpr std::string_view kNamesOpen = R"({"Nodes":null,"NodeNames":[)";
  static constexpr std::string_view kNamesClose = "]";
  static constexpr std::string_view kFailed = R"(,"FailedNodes":)";
  static constexpr std::string_view kUnresolvable = R"(,"FailedAndUnresolvableNodes":)";
  static constexpr std::string_view kError = R"(,"Error":)";

  const std::vector<std::string_view>& items =
      result.as_node_list ? result.node_objects : result.node_names;
  size_t size = items.empty() ? 0 : items.size() - 1;  // commas
  bool plain_names = true;  // no name needs an escape: the writing loop need not look again
  if (result.as_node_list) {
    size += kNodeListOpen.size() + kNodeListClose.size();
    for (std::string_view object : items) size += object.size();
  } else {
    size += kNamesOpen.size() + kNamesClose.size();
    for (std::string_view name : items) {
      const size_t name_size = QuotedSize(name);
      plain_names = plain_names && name_size == name.size() + 2;
      size += name_size;
    }
  }
  FailuresWriter failed(result.failed);
  FailuresWriter unresolvable(result.failed_and_unresolvable);
  const size_t error_size = QuotedSize(result.error);
  size += kFailed.size() + failed.Size() + kUnresolvable.size() + unresolvable.Size() +
          kError.size() + error_size + 1;

  return Build(size, [&](char* out) {
    out = Put(out, result.as_node_list ? kNodeListOpen : kNamesOpen);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) *out++ = ',';
      if (result.as_node_list) {
        out = Put(out, items[i]);
      } else {
        out = PutQuoted(out, items[i], plain_names ? items[i].size() + 2 : QuotedSize(items[i]));
      }
    }
    out = Put(out, result.as_node_list ? kNodeListClose : kNamesClose);
    out = Put(out, kFailed);
    out = failed.Write(out);
    out = Put(out, kUnresolvable);
    out = unresolvable.Write(out);
    out = Put(out, kError);
    out = PutQuoted(out, result.error, error_size);
    *out++ = '}';
    return out;
  });
}

std::string EncodeHostPriorityList(const std::vector<HostPriority>& priorities) {
  std::string out = "[";
  bool first = true;
  for (const HostPriority& priority : priorities) {
    out.append(first ? R"({"Host":)" : R"(,{"Host":)");
    first = false;
    AppendJsonString(priority.host, &out);
    fmt::format_to(std::back_inserter(out), R"(,"Score":{}}})", priority.score);
  }
  out.push_back(']');
  return out;
}

std::string EncodeBindingResult(std::string_view error) {
  std::string out = R"({"Error":)";
  AppendJsonString(error, &out);
  out.push_back('}');
  return out;
}

}  // namespace phalanx::extender
