// The main() of a long-running binary: parse the flags, answer --help and --version, set up
// logging, run. Exit codes: 0 done, 2 bad flags or config, else what `run` returns.
//
//   int main(int argc, char** argv) {
//     return phalanx::DaemonMain<OperatorConfig>("phalanx-operator", PHALANX_VERSION, argc, argv,
//                                                ParseOperatorFlags, OperatorUsage, Run);
//   }
//
// Config needs the fields show_help, show_version and log_level.
#pragma once

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/logging.h"

namespace phalanx {

inline constexpr int kExitBadInput = 2;

template <typename Config>
int DaemonMain(std::string_view program, std::string_view version, int argc, char** argv,
               absl::StatusOr<Config> (*parse)(const std::vector<std::string>&),
               std::string (*usage)(), int (*run)(const Config&)) {
  absl::StatusOr<Config> config = parse(std::vector<std::string>(argv + 1, argv + argc));
  if (!config.ok()) {
    std::cerr << program << ": " << config.status().message() << "\n";
    return kExitBadInput;
  }
  if (config->show_help) {
    std::cout << usage();
    return 0;
  }
  if (config->show_version) {
    std::cout << program << " " << version << "\n";
    return 0;
  }
  if (absl::Status s = InitLogging(config->log_level); !s.ok()) {
    std::cerr << program << ": --log-level: " << s.message() << "\n";
    return kExitBadInput;
  }
  return run(*config);
}

}  // namespace phalanx
