// The last pod create the API server refused, per TrainingJob: written by the job controller,
// read by the admission controller's pods-ready timeout, so that "rank 2 has no pod" can say
// why (a ResourceQuota exceeded, a PriorityClass that is gone, a webhook's refusal) instead of
// leaving the user to find the FailedCreate event. Thread-safe: the two controllers run on
// their own threads.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace phalanx::operator_server {

class CreateFailures {
 public:
  // `job` ("namespace/name")'s latest refused pod create, in the FailedCreate event's words.
  void Set(const std::string& job, std::string message) {
    std::lock_guard<std::mutex> lock(mu_);
    last_[job] = std::move(message);
  }
  // Its pods were created since, or it is gone.
  void Clear(const std::string& job) {
    std::lock_guard<std::mutex> lock(mu_);
    last_.erase(job);
  }
  std::optional<std::string> Get(const std::string& job) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = last_.find(job);
    if (it == last_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> last_;
};

}  // namespace phalanx::operator_server
