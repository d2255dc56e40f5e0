#include "common/logging.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace phalanx {

absl::Status InitLogging(std::string_view level) {
  spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  // from_str answers `off` for anything it does not know; only accept `off` when asked for.
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--log-level: unknown level \"", absl::string_view(level.data(), level.size()),
        "\" (want trace, debug, info, warn, error, critical or off)"));
  }
  spdlog::drop("phalanx");  // a second call replaces the first logger instead of throwing
  auto logger = spdlog::stderr_color_mt("phalanx");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ %v");
  logger->set_level(parsed);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

}  // namespace phalanx
