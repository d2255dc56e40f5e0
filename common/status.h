// Status helpers shared by every Phalanx component.
//
// Debian bookworm's Abseil (20220623) has absl::Status and absl::StatusOr but no status macros,
// so Phalanx carries its own:
//
//   absl::StatusOr<Config> Load(std::string_view path) {
//     ASSIGN_OR_RETURN(std::string text, ReadFile(path));
//     RETURN_IF_ERROR(Validate(text));
//     return Parse(text);
//   }
//
// `fmt` can format an absl::Status directly: `spdlog::warn("watch failed: {}", status);`.
#pragma once

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"

#define PHALANX_STATUS_CONCAT_INNER_(a, b) a##b
#define PHALANX_STATUS_CONCAT_(a, b) PHALANX_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the enclosing function if not OK.
#define RETURN_IF_ERROR(expr)                                        \
  do {                                                               \
    ::absl::Status phalanx_status_ = (expr);                         \
    if (!phalanx_status_.ok()) return phalanx_status_;               \
  } while (0)

#define PHALANX_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                   \
  if (!tmp.ok()) return std::move(tmp).status();        \
  lhs = std::move(tmp).value()

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status, otherwise assigns or
// declares `lhs` from the value. `lhs` may be a declaration: ASSIGN_OR_RETURN(auto x, F());
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  PHALANX_ASSIGN_OR_RETURN_IMPL_(PHALANX_STATUS_CONCAT_(phalanx_statusor_, __LINE__), lhs, rexpr)

namespace phalanx {

// Prefixes the message of a non-OK status with `context`, keeping its code and payloads:
// Annotate(NotFound("no such node"), "reserving job a/b") -> "reserving job a/b: no such node".
absl::Status Annotate(const absl::Status& status, std::string_view context);

}  // namespace phalanx

template <>
struct fmt::formatter<absl::Status> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const absl::Status& status, FormatContext& ctx) const {
    // Payloads (kube::KubeError's code and reason) are for code, not for readers of the log.
    std::string text = status.ToString(absl::StatusToStringMode::kWithNoExtraData);
    return fmt::formatter<std::string_view>::format(text, ctx);
  }
};

template <>
struct fmt::formatter<absl::StatusCode> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(absl::StatusCode code, FormatContext& ctx) const {
    std::string text = absl::StatusCodeToString(code);
    return fmt::formatter<std::string_view>::format(text, ctx);
  }
};
