#include "kube/event_recorder.h"

#include <functional>
#include <iterator>
#include <utility>

#include "common/status.h"
#include "kube/errors.h"
#include "kube/internal/strings.h"
#include "kube/internal/wait.h"
#include "kube/json.h"
#include "spdlog/spdlog.h"

namespace kube {
namespace {

std::string FormatRfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// Who an Event is about, for aggregation and for picking its writer: the object's uid, else
// kind/namespace/name.
std::string Identity(const ObjectReference& object) {
  return object.uid.empty() ? internal::Cat(object.kind, "/", object.namespace_, "/", object.name)
                            : object.uid;
}

std::string_view TypeName(EventType type) {
  return type == EventType::kWarning ? "Warning" : "Normal";
}

}  // namespace

EventRecorder::EventRecorder(Client& client, EventRecorderOptions options, Clock& clock)
    : client_(client), options_(std::move(options)), clock_(clock) {
  for (int i = 0; i < options_.async_writers; ++i) {
    writers_.push_back(std::make_unique<Writer>());
    Writer& w = *writers_.back();
    w.thread = std::thread([this, &w] { WriterLoop(w); });
  }
}

EventRecorder::~EventRecorder() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  stop_.Cancel();
  queue_cv_.notify_all();
  for (auto& w : writers_) w->thread.join();
}

absl::Status EventRecorder::Record(const ObjectReference& object, EventType type,
                                   std::string_view reason, std::string_view message) {
  Pending event{object, type, std::string(reason), std::string(message), clock_.Now()};
  if (writers_.empty()) return Write(event);
  // One object's Events go to one writer, so they are written (and aggregated) in order.
  const size_t shard = std::hash<std::string>{}(Identity(object)) % writers_.size();
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (stopping_ || queued_ >= options_.max_queued) {
      ++dropped_;
      return absl::ResourceExhaustedError(
          internal::Cat("event queue full (", options_.max_queued, "): dropped ", reason,
                        " for ", object.kind, " ", object.namespace_, "/", object.name));
    }
    writers_[shard]->queue.push_back(std::move(event));
    ++queued_;
  }
  queue_cv_.notify_all();
  return absl::OkStatus();
}

void EventRecorder::WriterLoop(Writer& writer) {
  std::unique_lock<std::mutex> lock(queue_mu_);
  while (true) {
    queue_cv_.wait(lock, [&] { return stopping_ || !writer.queue.empty(); });
    if (stopping_) return;
    Pending event = std::move(writer.queue.front());
    writer.queue.pop_front();
    lock.unlock();
    if (options_.yield_to != nullptr) options_.yield_to->Yield(options_.max_yield, &stop_);
    absl::Status written = Write(event);
    if (!written.ok()) {
      spdlog::warn("event {} for {} {}/{} not written: {}", event.reason, event.object.kind,
                   event.object.namespace_, event.object.name, written.ToString());
    }
    lock.lock();
    --queued_;
    queue_cv_.notify_all();
  }
}

bool EventRecorder::Flush(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(queue_mu_);
  return queue_cv_.wait_for(lock, internal::WaitTimeout(timeout), [&] { return queued_ == 0; });
}

size_t EventRecorder::queued() const {
  std::lock_guard<std::mutex> lock(queue_mu_);
  return queued_;
}

int64_t EventRecorder::dropped() const {
  std::lock_guard<std::mutex> lock(queue_mu_);
  return dropped_;
}

absl::Status EventRecorder::Write(const Pending& event) {
  const ObjectReference& object = event.object;
  const EventType type = event.type;
  const std::string_view reason = event.reason;
  const std::string_view message = event.message;
  const absl::Time now = event.at;
  std::string ns = object.namespace_.empty() ? "default" : object.namespace_;
  Key key{Identity(object), std::string(TypeName(type)), std::string(reason),
          std::string(message)};
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
