// `phalanx`: simulate, plan, bench, placement, the cluster views, version (cli/command.h).
// Installed (or linked) as `kubectl-phalanx` it is a kubectl plugin: kubectl runs
// `kubectl phalanx jobs -A` as `kubectl-phalanx jobs -A`, and the commands are the same.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"

int main(int argc, char** argv) {
  std::string_view argv0 = argc > 0 ? argv[0] : "phalanx";
  std::string_view base = argv0.substr(argv0.rfind('/') + 1);  // npos + 1 == 0
  const std::string program = base == "kubectl-phalanx" ? "kubectl phalanx" : "phalanx";
  return phalanx::cli::Main(program, std::vector<std::string>(argv + 1, argv + argc), stdout,
                            stderr);
}
