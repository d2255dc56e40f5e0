#include <cstdio>

#include "cli/command.h"

namespace phalanx::cli {
namespace {

int RunVersion(const std::vector<std::string>&) {
  std::printf("phalanx %s\n", PHALANX_VERSION);
  return kExitOk;
}

PHALANX_COMMAND("version", "print the version", "Usage: phalanx version", RunVersion);

}  // namespace
}  // namespace phalanx::cli
