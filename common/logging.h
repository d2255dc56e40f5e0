// Process-wide logging setup on spdlog.
//
//   RETURN_IF_ERROR(phalanx::InitLogging("info"));   // or "debug", "warn", ... from --log-level
//   spdlog::info("admitted {} workloads in {} ms", n, ms);
//
// Logs go to stderr, so stdout stays clean for command output (tables, JSON).
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace phalanx {

// Sets the default logger to a colour-when-terminal stderr sink at `level`
// (trace, debug, info, warn, error, critical, off). Unknown levels are InvalidArgument.
absl::Status InitLogging(std::string_view level);

}  // namespace phalanx
