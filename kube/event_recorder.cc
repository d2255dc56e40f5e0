#include "kube/event_recorder.h"

#include <iterator>
#include <utility>

#include "common/status.h"
#include "kube/errors.h"
#include "kube/internal/strings.h"
#include "kube/json.h"

namespace kube {
namespace {

std::string FormatRfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

std::string_view TypeName(EventType type) {
  return type == EventType::kWarning ? "Warning" : "Normal";
}

}  // namespace

EventRecorder::EventRecorder(Client& client, EventRecorderOptions options, Clock& clock)
    : client_(client), options_(std::move(options)), clock_(clock) {}

absl::Status EventRecorder::Record(const ObjectReference& object, EventType type,
                                   std::string_view reason, std::string_view message) {
  absl::Time now = clock_.Now();
  std::string ns = object.namespace_.empty() ? "default" : object.namespace_;
  Key key{object.uid.empty() ? internal::Cat(object.kind, "/", ns, "/", object.name) : object.uid,
          std::string(TypeName(type)), std::string(reason), std::string(message)};
  Seen seen;
  bool repeat = false;
  if (options_.aggregation_window > absl::ZeroDuration()) {
    std::lock_guard<std::mutex> lock(mu_);
    ForgetExpired(now);
    auto it = seen_.find(key);
    if (it != seen_.end() && now - it->second.last < options_.aggregation_window) {
      repeat = true;
      it->second.count++;
      it->second.last = now;
      seen = it->second;
    }
  }
  if (!repeat) return Create(object, ns, type, reason, message, now, key);

  rapidjson::Document patch(rapidjson::kObjectType);
  auto& alloc = patch.GetAllocator();
  patch.AddMember("count", rapidjson::Value(seen.count), alloc);
  patch.AddMember("lastTimestamp", JsonString(FormatRfc3339(now), alloc), alloc);
  absl::Status status =
      client_.Patch(Events(), seen.namespace_, seen.name, PatchType::kMerge, ToJson(patch))
          .status();
  // The Event may have expired (the API server keeps them an hour by default): start afresh.
  if (IsNotFound(status)) return Create(object, ns, type, reason, message, now, key);
  return status;
}

size_t EventRecorder::remembered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_.size();
}

void EventRecorder::ForgetExpired(absl::Time now) {
  if (now - forgotten_ < options_.aggregation_window) return;
  forgotten_ = now;
  for (auto it = seen_.begin(); it != seen_.end();) {
    it = now - it->second.last >= options_.aggregation_window ? seen_.erase(it) : std::next(it);
  }
}

absl::Status EventRecorder::Create(const ObjectReference& object, std::string_view ns,
                                   EventType type, std::string_view reason,
                                   std::string_view message, absl::Time now, const Key& key) {
  // Unique per event, readable, and sorted by time like client-go's "<name>.<hex nanos>".
  std::string name = internal::Cat(object.name, ".", absl::Hex(absl::ToUnixNanos(now)));
  rapidjson::Document doc = NewApiObject("v1", "Event", name, ns);
  auto& alloc = doc.GetAllocator();
  rapidjson::Value involved(rapidjson::kObjectType);
  involved.AddMember("apiVersion", JsonString(object.api_version, alloc), alloc);
  involved.AddMember("kind", JsonString(object.kind, alloc), alloc);
  if (!object.namespace_.empty()) {
    involved.AddMember("namespace", JsonString(object.namespace_, alloc), alloc);
  }
  involved.AddMember("name", JsonString(object.name, alloc), alloc);
  if (!object.uid.empty()) involved.AddMember("uid", JsonString(object.uid, alloc), alloc);
  if (!object.resource_version.empty()) {
    involved.AddMember("resourceVersion", JsonString(object.resource_version, alloc), alloc);
  }
  doc.AddMember("involvedObject", involved, alloc);
  doc.AddMember("reason", JsonString(reason, alloc), alloc);
  doc.AddMember("message", JsonString(message, alloc), alloc);
  doc.AddMember("type", JsonString(TypeName(type), alloc), alloc);
  rapidjson::Value source(rapidjson::kObjectType);
  source.AddMember("component", JsonString(options_.component, alloc), alloc);
  if (!options_.host.empty()) source.AddMember("host", JsonString(options_.host, alloc), alloc);
  doc.AddMember("source", source, alloc);
  doc.AddMember("reportingComponent", JsonString(options_.component, alloc), alloc);
  doc.AddMember("reportingInstance", JsonString(options_.host, alloc), alloc);
  doc.AddMember("firstTimestamp", JsonString(FormatRfc3339(now), alloc), alloc);
  doc.AddMember("lastTimestamp", JsonString(FormatRfc3339(now), alloc), alloc);
  doc.AddMember("count", 1, alloc);
  RETURN_IF_ERROR(client_.Create(Events(), ns, ToJson(doc)).status());
  if (options_.aggregation_window > absl::ZeroDuration()) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_[key] = Seen{.name = name, .namespace_ = std::string(ns), .count = 1, .last = now};
  }
  return absl::OkStatus();
}

}  // namespace kube
