// Splits a watch response body into events. The API server writes one JSON object per line,
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}, but the transport hands over
// whatever bytes arrived: a chunk may end mid-line or hold several lines.
//
//   kube::WatchStreamParser parser;
//   std::vector<kube::WatchEvent> events;
//   RETURN_IF_ERROR(parser.Feed(chunk, &events));   // complete lines only; the rest is kept
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kube {

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  // The object's JSON text (for kError, a metav1.Status).
  std::string object;
  // The object's metadata.resourceVersion (empty for kError).
  std::string resource_version;
};

std::string_view WatchEventTypeName(WatchEvent::Type type);

// Parses one line of a watch stream.
absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view line);

class WatchStreamParser {
 public:
  WatchStreamParser();
  ~WatchStreamParser();

  // Appends the events of every line completed by `chunk`. A malformed line is an error; the
  // caller should drop the watch and resume from the last good resourceVersion.
  absl::Status Feed(std::string_view chunk, std::vector<WatchEvent>* events);
  // Bytes of an unfinished line held back for the next chunk.
  size_t pending_bytes() const { return partial_.size(); }

 private:
  std::string partial_;
};

}  // namespace kube
