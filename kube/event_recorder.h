// Records core/v1 Events about objects, the way `kubectl describe` shows them. Repeats of the
// same (object, type, reason, message) within the aggregation window bump `count` and
// `lastTimestamp` on the existing Event instead of creating another. What it remembers for that
// is forgotten once the window has passed, so a long-running operator's memory does not grow
// with every job it ever saw.
//
// With async_writers > 0, Record() only queues the Event and returns: writer threads send it
// (every Event of one object on the same thread, in order), so a controller's own writes never
// wait behind its Events. A full queue drops the Event (counted by dropped()), as client-go's
// broadcaster does: an Event is a note for people, never state.
//
//   kube::EventRecorder recorder(client, {.component = "phalanx-operator", .host = pod_name});
//   recorder.Record({.api_version = "phalanx.dev/v1alpha1", .kind = "TrainingJob",
//                    .namespace_ = "ml", .name = "llama", .uid = uid},
//                   kube::EventType::kNormal, "Admitted", "admitted to cluster queue gpu-a");
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kube/client.h"
#include "kube/clock.h"
#include "kube/write_gate.h"

namespace kube {

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;  // "" for cluster-scoped objects
  std::string name;
  std::string uid;
  std::string resource_version;
};

enum class EventType { kNormal, kWarning };

struct EventRecorderOptions {
  std::string component;  // source.component / reportingComponent
  std::string host;       // source.host / reportingInstance
  // Repeats within this window update the existing Event; zero disables aggregation.
  absl::Duration aggregation_window = absl::Minutes(10);
  // 0: Record() writes before it returns. N > 0: N writer threads send queued Events.
  int async_writers = 0;
  // Queued Events beyond this (all writers together) are dropped.
  size_t max_queued = 4096;
  // Async only: each writer yields to `yield_to` (up to `max_yield`) before it sends an Event,
  // so a burst of more urgent writes (an admission cycle's statuses) goes first.
  WriteGate* yield_to = nullptr;
  absl::Duration max_yield = absl::Seconds(5);
};

class EventRecorder {
 public:
  EventRecorder(Client& client, EventRecorderOptions options, Clock& clock = RealClock());
  // Async: Events still queued are dropped; the one being written is finished first.
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Creates (or, for a repeat, updates) the Event, stamped now. Events of cluster-scoped objects
  // go to the "default" namespace, as client-go does. Async: OK once queued (the write's own
  // error is logged), ResourceExhausted when the queue is full and the Event was dropped.
  absl::Status Record(const ObjectReference& object, EventType type, std::string_view reason,
                      std::string_view message);

  // Async: waits until every Event queued so far is written or `timeout` passes; true if all
  // were. At once true when synchronous.
  bool Flush(absl::Duration timeout);

  // How many Events it remembers for aggregation (for tests).
  size_t remembered() const;
  // Events dropped because the queue was full, since construction.
  int64_t dropped() const;
  // Async: Events recorded and not yet written.
  size_t queued() const;

 private:
  struct Pending {
    ObjectReference object;
    EventType type;
    std::string reason;
    std::string message;
    absl::Time at;
  };
  struct Writer {
    std::deque<Pending> queue;
    std::thread thread;
  };
  struct Seen {
    std::string name;
    std::string namespace_;
    int64_t count = 0;
    absl::Time last;
  };
  using Key = std::tuple<std::string, std::string, std::string, std::string>;

  // Forgets the Events last recorded a window ago or earlier; at most once per window, so the
  // cost is amortized over the Events of a window. Needs mu_.
  void ForgetExpired(absl::Time now);
  absl::Status Write(const Pending& event);
  void WriterLoop(Writer& writer);
  absl::Status Create(const ObjectReference& object, std::string_view ns, EventType type,
                      std::string_view reason, std::string_view message, absl::Time now,
                      const Key& key);

  Client& client_;
  const EventRecorderOptions options_;
  Clock& clock_;
  mutable std::mutex mu_;
  std::map<Key, Seen> seen_;
  absl::Time forgotten_ = absl::InfinitePast();  // the last ForgetExpired

  // Async only: one queue per writer thread, all guarded by queue_mu_.
  mutable std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::vector<std::unique_ptr<Writer>> writers_;
  size_t queued_ = 0;
  int64_t dropped_ = 0;
  bool stopping_ = false;
  Cancellation stop_;  // cancelled by the destructor: ends a writer's yield at once
};

}  // namespace kube
