// The `phalanx` command line: each subcommand lives in its own file and registers itself.
//
//   // cli/version_command.cc
//   PHALANX_COMMAND("version", "print the version", "Usage: phalanx version", RunVersion);
//
// A command gets its arguments after the command word(s) and returns the process exit code:
// 0 success, 1 runtime failure, 2 bad input (with a message naming the file, line and field).
// Commands with two words ("bench placement") register the joined name "bench placement"; the
// first word is then a group: `phalanx bench --help` lists its subcommands.
//
// Help is answered here, not by the commands: `phalanx CMD --help`, `phalanx CMD -h` and
// `phalanx help CMD` all print CMD's usage (which starts "Usage: phalanx CMD") and exit 0.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

struct Command {
  std::string name;     // "simulate", "bench placement"
  std::string summary;  // one line for `phalanx --help`
  std::string usage;    // full usage text for `phalanx <name> --help`
  std::function<int(const std::vector<std::string>& args)> run;
};

// Commands in registration order. Registration happens during static initialisation, so the
// command files are linked as objects (cli/CMakeLists.txt), not from a static library.
std::vector<Command>& Registry();

struct Registrar {
  explicit Registrar(Command command) { Registry().push_back(std::move(command)); }
};

// The groups: first words of two-word commands ("bench", "placement"), in registration order.
std::vector<std::string> Groups();

// What `phalanx <group> --help` prints: the group's subcommands and their summaries.
std::string GroupUsage(const std::string& group);

// The whole command line: `program` is what the user typed to run us ("phalanx", or "kubectl
// phalanx" for the plugin), `args` what followed. Help and usage go to `out`, errors to `err`;
// commands themselves print to stdout and stderr.
int Main(const std::string& program, const std::vector<std::string>& args, FILE* out, FILE* err);

}  // namespace phalanx::cli

#define PHALANX_COMMAND_CONCAT_INNER_(a, b) a##b
#define PHALANX_COMMAND_CONCAT_(a, b) PHALANX_COMMAND_CONCAT_INNER_(a, b)
#define PHALANX_COMMAND(name, summary, usage, fn)                                    \
  static ::phalanx::cli::Registrar PHALANX_COMMAND_CONCAT_(phalanx_command_, __LINE__)( \
      ::phalanx::cli::Command{name, summary, usage, fn})
