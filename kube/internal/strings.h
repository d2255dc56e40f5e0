// absl::StrCat / StrAppend that also take std::string_view. Debian's Abseil (20220623) has its
// own absl::string_view, distinct from std::string_view, so StrCat rejects the latter.
//
//   std::string path = kube::internal::Cat("/api/v1/namespaces/", ns, "/pods");  // ns: string_view
#pragma once

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace kube::internal {

inline absl::string_view Piece(std::string_view s) { return absl::string_view(s.data(), s.size()); }
template <typename T>
const T& Piece(const T& value) {
  return value;
}

template <typename... Args>
std::string Cat(const Args&... args) {
  return absl::StrCat(Piece(args)...);
}

template <typename... Args>
void Append(std::string* out, const Args&... args) {
  absl::StrAppend(out, Piece(args)...);
}

}  // namespace kube::internal
