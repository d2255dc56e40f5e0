#include "kube/watch_stream.h"

#include "kube/internal/strings.h"
#include "simdjson.h"

namespace kube {

std::string_view WatchEventTypeName(WatchEvent::Type type) {
  switch (type) {
    case WatchEvent::Type::kAdded:
      return "ADDED";
    case WatchEvent::Type::kModified:
      return "MODIFIED";
    case WatchEvent::Type::kDeleted:
      return "DELETED";
    case WatchEvent::Type::kBookmark:
      return "BOOKMARK";
    case WatchEvent::Type::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

namespace {

absl::Status BadEvent(std::string_view what, std::string_view line) {
  return absl::DataLossError(
      internal::Cat("malformed watch event (", what, "): ", line.substr(0, 200)));
}

// The object's metadata.resourceVersion, or "" if it has none.
std::string ResourceVersionOf(simdjson::ondemand::object& obj) {
  simdjson::ondemand::object meta;
  if (obj["metadata"].get_object().get(meta) != simdjson::SUCCESS) return "";
  std::string_view rv;
  if (meta["resourceVersion"].get_string().get(rv) != simdjson::SUCCESS) return "";
  return std::string(rv);
}

}  // namespace

absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view line) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(line);
  simdjson::ondemand::document doc;
  simdjson::ondemand::object root;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(root) != simdjson::SUCCESS) {
    return BadEvent("not a JSON object", line);
  }
  WatchEvent event;
  bool have_type = false, have_object = false;
  for (auto field : root) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return BadEvent("bad key", line);
    if (key == "type") {
      std::string_view type;
      if (field.value().get_string().get(type) != simdjson::SUCCESS) {
        return BadEvent("type is not a string", line);
      }
      if (type == "ADDED") {
        event.type = WatchEvent::Type::kAdded;
      } else if (type == "MODIFIED") {
        event.type = WatchEvent::Type::kModified;
      } else if (type == "DELETED") {
        event.type = WatchEvent::Type::kDeleted;
      } else if (type == "BOOKMARK") {
        event.type = WatchEvent::Type::kBookmark;
      } else if (type == "ERROR") {
        event.type = WatchEvent::Type::kError;
      } else {
        return BadEvent(internal::Cat("unknown type ", type), line);
      }
      have_type = true;
    } else if (key == "object") {
      simdjson::ondemand::object obj;
      std::string_view raw;
      if (field.value().get_object().get(obj) != simdjson::SUCCESS ||
          obj.raw_json().get(raw) != simdjson::SUCCESS) {
        return BadEvent("object is not an object", line);
      }
      event.object.assign(raw);
      bool rewound = false;
      if (obj.reset().get(rewound) != simdjson::SUCCESS) return BadEvent("object", line);
      event.resource_version = ResourceVersionOf(obj);
      have_object = true;
    }
  }
  if (!have_type || !have_object) return BadEvent("missing type or object", line);
  if (event.type == WatchEvent::Type::kError) event.resource_version.clear();
  return event;
}

WatchStreamParser::WatchStreamParser() = default;
WatchStreamParser::~WatchStreamParser() = default;

absl::Status WatchStreamParser::Feed(std::string_view chunk, std::vector<WatchEvent>* events) {
  size_t start = 0;
  while (true) {
    size_t newline = chunk.find('\n', start);
    if (newline == std::string_view::npos) {
      partial_.append(chunk.substr(start));
      return absl::OkStatus();
    }
    std::string_view piece = chunk.substr(start, newline - start);
    start = newline + 1;
    std::string_view line;
    if (partial_.empty()) {
      line = piece;
    } else {
      partial_.append(piece);
      line = partial_;
    }
    std::string_view trimmed = line;
    while (!trimmed.empty() &&
           (trimmed.back() == '\r' || trimmed.back() == ' ' || trimmed.back() == '\t')) {
      trimmed.remove_suffix(1);
    }
    if (!trimmed.empty()) {
      absl::StatusOr<WatchEvent> event = ParseWatchEvent(trimmed);
      if (!event.ok()) {
        partial_.clear();
        return event.status();
      }
      events->push_back(*std::move(event));
    }
    partial_.clear();
  }
}

}  // namespace kube
