// A local, indexed cache of one resource kept current by a Reflector, with add/update/delete
// handlers and periodic resync: the C++ counterpart of client-go's SharedIndexInformer.
//
//   kube::Informer<kube::Pod> pods(client, kube::Pods(), {.reflector = {.namespace_ = "ml"}});
//   pods.AddIndexer("node", [](const kube::Pod& p) { return std::vector<std::string>{p.node_name};
//   }); pods.AddIndexer(kube::kIndexByOwner, kube::OwnerUidIndex<kube::Pod>);
//   pods.AddEventHandlers({.on_add = [&](const kube::Pod& p) { queue.Add(p.meta.Key()); }});
//   std::thread t([&] { pods.Run(&stop); });
//   pods.WaitForSync(absl::Seconds(30), &stop);
//   for (auto& pod : pods.ByIndex("node", "node-7")) ...
//
// T is one of the decoded types (kube::Pod, kube::Node, kube::RawObject). Objects are shared
// immutable snapshots: readers keep a std::shared_ptr<const T> and never see it change. Handlers
// run one at a time on the informer's threads, after the cache has been updated.
#pragma once

#include <condition_variable>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status.h"
#include "kube/decode.h"
#include "kube/reflector.h"
#include "spdlog/spdlog.h"

namespace kube {

template <typename T>
struct EventHandlers {
  std::function<void(const T& obj)> on_add;
  // On resync, old and now are the same object.
  std::function<void(const T& old, const T& now)> on_update;
  // `obj` is the last state seen (for a relist that found it gone, the cached one).
  std::function<void(const T& obj)> on_delete;
};

inline constexpr char kIndexByNamespace[] = "namespace";
inline constexpr char kIndexByOwner[] = "owner-uid";

template <typename T>
std::vector<std::string> NamespaceIndex(const T& obj) {
  return {obj.meta.namespace_};
}
template <typename T>
std::vector<std::string> OwnerUidIndex(const T& obj) {
  std::vector<std::string> uids;
  for (const OwnerReference& ref : obj.meta.owner_references) uids.push_back(ref.uid);
  return uids;
}
// Indexes objects by the value of label `key` (objects without it are not indexed).
template <typename T>
std::function<std::vector<std::string>(const T&)> LabelIndex(std::string key) {
  return [key = std::move(key)](const T& obj) {
    const std::string* value = obj.meta.labels.Find(key);
    return value == nullptr ? std::vector<std::string>{} : std::vector<std::string>{*value};
  };
}

struct InformerOptions {
  ReflectorOptions reflector;
  // Every resync period, on_update(obj, obj) is called for every cached object so that
  // controllers re-check state they may have given up on. Zero disables.
  absl::Duration resync_period = absl::ZeroDuration();
};

template <typename T>
class Informer : private ReflectorSink {
 public:
  using Ptr = std::shared_ptr<const T>;
  using IndexFunc = std::function<std::vector<std::string>(const T&)>;

  Informer(Client& client, Resource resource, InformerOptions options = {},
           Clock& clock = RealClock())
      : options_(options),
        clock_(clock),
        reflector_(client, std::move(resource), options.reflector, *this, clock) {}

  // Indexers and handlers must be added before Run.
  void AddIndexer(std::string name, IndexFunc fn) {
    indexers_.emplace(std::move(name), std::move(fn));
  }
  void AddEventHandlers(EventHandlers<T> handlers) { handlers_.push_back(std::move(handlers)); }

  // Lists, watches and resyncs until `cancel` fires.
  void Run(const Cancellation* cancel) {
    std::thread resync;
    if (options_.resync_period > absl::ZeroDuration()) {
      resync = std::thread([this, cancel] {
        while (clock_.SleepFor(options_.resync_period, cancel)) Resync();
      });
    }
    reflector_.Run(cancel);
    if (resync.joinable()) resync.join();
  }

  // True once the first complete list has been applied.
  bool HasSynced() const {
    std::lock_guard<std::mutex> lock(mu_);
    return synced_;
  }
  // Waits (real time) for HasSynced(); false on timeout or cancel.
  bool WaitForSync(absl::Duration timeout, const Cancellation* cancel = nullptr) const {
    absl::Time deadline = absl::Now() + timeout;
    std::unique_lock<std::mutex> lock(mu_);
    while (!synced_) {
      if ((cancel != nullptr && cancel->cancelled()) || absl::Now() >= deadline) return false;
      synced_cv_.wait_for(lock, std::chrono::milliseconds(50));
    }
    return true;
  }

  // Empty once synced; otherwise why not, for a log line: "limitranges (list failed: ...)" or
  // "nodes (not listed yet)".
  std::string SyncProblem() const {
    if (HasSynced()) return "";
    const absl::Status error = reflector_.last_list_error();
    return error.ok()
               ? absl::StrCat(reflector_.resource().plural, " (not listed yet)")
               : absl::StrCat(reflector_.resource().plural, " (list failed: ",
                              error.ToString(absl::StatusToStringMode::kWithNoExtraData), ")");
  }

  Ptr Get(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second;
  }
  std::vector<Ptr> List() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Ptr> out;
    out.reserve(items_.size());
    for (const auto& [key, obj] : items_) out.push_back(obj);
    return out;
  }
  std::vector<Ptr> ByIndex(const std::string& index, const std::string& value) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Ptr> out;
    auto idx = indices_.find(index);
    if (idx == indices_.end()) return out;
    auto keys = idx->second.find(value);
    if (keys == idx->second.end()) return out;
    for (const std::string& key : keys->second) out.push_back(items_.at(key));
    return out;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.size();
  }

  // Calls on_update(obj, obj) for every cached object.
  void Resync() {
    for (const Ptr& obj : List())
      Dispatch([&](const EventHandlers<T>& h) {
        if (h.on_update) h.on_update(*obj, *obj);
      });
  }

  const Reflector& reflector() const { return reflector_; }

 private:
  // --- ReflectorSink (reflector thread) ---
  absl::Status ListPage(std::string_view page) override {
    ASSIGN_OR_RETURN(DecodedList<T> list, decoder_.DecodeList<T>(page));
    for (T& obj : list.items) staging_.push_back(std::make_shared<const T>(std::move(obj)));
    return absl::OkStatus();
  }

  void AbortList() override { staging_.clear(); }

  void EndList(std::string_view) override {
    std::vector<Ptr> added, deleted;
    std::vector<std::pair<Ptr, Ptr>> updated;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::unordered_set<std::string> listed;
      for (const Ptr& obj : staging_) {
        std::string key = obj->meta.Key();
        listed.insert(key);
        auto it = items_.find(key);
        if (it == items_.end()) {
          added.push_back(obj);
        } else if (it->second->meta.resource_version != obj->meta.resource_version) {
          updated.emplace_back(it->second, obj);
        } else {
          continue;  // unchanged: keep the cached snapshot
        }
        PutLocked(key, obj);
      }
      for (auto it = items_.begin(); it != items_.end();) {
        if (listed.count(it->first) != 0) {
          ++it;
          continue;
        }
        deleted.push_back(it->second);
        UnindexLocked(it->first, *it->second);
        it = items_.erase(it);
      }
      synced_ = true;
    }
    synced_cv_.notify_all();
    staging_.clear();
    for (const Ptr& obj : added)
      Dispatch([&](const EventHandlers<T>& h) {
        if (h.on_add) h.on_add(*obj);
      });
    for (const auto& [old, now] : updated) {
      Dispatch([&](const EventHandlers<T>& h) {
        if (h.on_update) h.on_update(*old, *now);
      });
    }
    for (const Ptr& obj : deleted) {
      Dispatch([&](const EventHandlers<T>& h) {
        if (h.on_delete) h.on_delete(*obj);
      });
    }
  }

  void Event(const WatchEvent& event) override {
    absl::StatusOr<T> decoded = decoder_.Decode<T>(event.object);
    if (!decoded.ok()) {
      spdlog::error("informer: cannot decode {} event: {}", WatchEventTypeName(event.type),
                    decoded.status());
      return;
    }
    auto obj = std::make_shared<const T>(*std::move(decoded));
    std::string key = obj->meta.Key();
    Ptr old;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = items_.find(key);
      if (it != items_.end()) old = it->second;
      if (event.type == WatchEvent::Type::kDeleted) {
        if (old != nullptr) {
          UnindexLocked(key, *old);
          items_.erase(it);
        }
      } else {
        PutLocked(key, obj);
      }
    }
    if (event.type == WatchEvent::Type::kDeleted) {
      Dispatch([&](const EventHandlers<T>& h) {
        if (h.on_delete) h.on_delete(*obj);
      });
    } else if (old == nullptr) {
      Dispatch([&](const EventHandlers<T>& h) {
        if (h.on_add) h.on_add(*obj);
      });
    } else {
      Dispatch([&](const EventHandlers<T>& h) {
        if (h.on_update) h.on_update(*old, *obj);
      });
    }
  }

  void PutLocked(const std::string& key, const Ptr& obj) {
    auto it = items_.find(key);
    if (it != items_.end()) {
      UnindexLocked(key, *it->second);
      it->second = obj;
    } else {
      items_.emplace(key, obj);
    }
    for (const auto& [name, fn] : indexers_) {
      for (std::string& value : fn(*obj)) indices_[name][std::move(value)].insert(key);
    }
  }

  void UnindexLocked(const std::string& key, const T& obj) {
    for (const auto& [name, fn] : indexers_) {
      auto& index = indices_[name];
      for (const std::string& value : fn(obj)) {
        auto it = index.find(value);
        if (it == index.end()) continue;
        it->second.erase(key);
        if (it->second.empty()) index.erase(it);
      }
    }
  }

  // Handlers never run concurrently (watch events and resync come from different threads).
  template <typename Fn>
  void Dispatch(Fn&& fn) {
    std::lock_guard<std::mutex> lock(dispatch_mu_);
    for (const EventHandlers<T>& h : handlers_) fn(h);
  }

  const InformerOptions options_;
  Clock& clock_;
  Reflector reflector_;
  Decoder decoder_;  // reflector thread only
  std::map<std::string, IndexFunc> indexers_;
  std::vector<EventHandlers<T>> handlers_;
  std::vector<Ptr> staging_;  // the list being received, in server order; reflector thread only

  mutable std::mutex mu_;
  mutable std::condition_variable synced_cv_;
  bool synced_ = false;
  std::unordered_map<std::string, Ptr> items_;
  // index name -> value -> keys
  std::map<std::string, std::unordered_map<std::string, std::set<std::string>>> indices_;

  std::mutex dispatch_mu_;
};

// The non-empty problems of several informers (Informer::SyncProblem), "; "-separated, and
// what their errors usually mean, for the log line of a daemon that gives up waiting.
inline std::string JoinSyncProblems(std::initializer_list<std::string> problems) {
  std::string out;
  for (const std::string& p : problems) {
    if (!p.empty()) absl::StrAppend(&out, out.empty() ? "" : "; ", p);
  }
  return out;
}
inline std::string SyncHint(std::string_view problems) {
  if (problems.find("PERMISSION_DENIED") != std::string_view::npos) {
    return "a list was forbidden: the service account's ClusterRole lacks list and watch on that "
           "resource (the chart's RBAC and the binary must be of one release)";
  }
  if (problems.find("NOT_FOUND") != std::string_view::npos) {
    return "a resource is not served: are the CRDs installed (crds/)?";
  }
  return "is the API server reachable and are the CRDs installed (crds/)?";
}

}  // namespace kube
