// Records core/v1 Events about objects, the way `kubectl describe` shows them. Repeats of the
// same (object, type, reason, message) within the aggregation window bump `count` and
// `lastTimestamp` on the existing Event instead of creating another. What it remembers for that
// is forgotten once the window has passed, so a long-running operator's memory does not grow
// with every job it ever saw.
//
//   kube::EventRecorder recorder(client, {.component = "phalanx-operator", .host = pod_name});
//   recorder.Record({.api_version = "phalanx.dev/v1alpha1", .kind = "TrainingJob",
//                    .namespace_ = "ml", .name = "llama", .uid = uid},
//                   kube::EventType::kNormal, "Admitted", "admitted to cluster queue gpu-a");
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kube/client.h"
#include "kube/clock.h"

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
};

class EventRecorder {
 public:
  EventRecorder(Client& client, EventRecorderOptions options, Clock& clock = RealClock());

  // Creates (or, for a repeat, updates) the Event. Events of cluster-scoped objects go to the
  // "default" namespace, as client-go does.
  absl::Status Record(const ObjectReference& object, EventType type, std::string_view reason,
                      std::string_view message);

  // How many Events it remembers for aggregation (for tests).
  size_t remembered() const;

 private:
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
  absl::Status Create(const ObjectReference& object, std::string_view ns, EventType type,
                      std::string_view reason, std::string_view message, absl::Time now,
                      const Key& key);

  Client& client_;
  const EventRecorderOptions options_;
  Clock& clock_;
  mutable std::mutex mu_;
  std::map<Key, Seen> seen_;
  absl::Time forgotten_ = absl::InfinitePast();  // the last ForgetExpired
};

}  // namespace kube
