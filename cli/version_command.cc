#include <cstdio>

#include "cli/command.h"
#include "cli/flags.h"

namespace phalanx::cli {
namespace {

int RunVersion(const std::vector<std::string>& args) {
  if (absl::Status parsed = FlagSet().Parse(args); !parsed.ok()) return BadInput("version", parsed);
  std::printf("phalanx %s\n", PHALANX_VERSION);
  return kExitOk;
}

PHALANX_COMMAND("version", "print the version", "Usage: phalanx version", RunVersion);

}  // namespace
}  // namespace phalanx::cli
