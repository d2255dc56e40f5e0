#include "kube/transport.h"

#include "absl/strings/match.h"

namespace kube {

std::string FindHeader(const HttpHeaders& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, absl::string_view(name.data(), name.size()))) return value;
  }
  return "";
}

}  // namespace kube
