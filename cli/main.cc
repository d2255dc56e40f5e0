// `phalanx`: simulate, plan, bench, version. Dispatches to the longest registered command name
// that prefixes the arguments ("bench placement --nodes 10" -> "bench placement").
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"

namespace phalanx::cli {

std::vector<Command>& Registry() {
  static std::vector<Command> commands;
  return commands;
}

bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

namespace {

void PrintHelp(FILE* out) {
  std::fprintf(out,
               "phalanx: topology-aware gang scheduling for distributed training on Kubernetes\n\n"
               "Usage: phalanx <command> [flags]\n\nCommands:\n");
  for (const Command& command : Registry()) {
    std::fprintf(out, "  %-20s %s\n", command.name.c_str(), command.summary.c_str());
  }
  std::fprintf(out, "\nRun 'phalanx <command> --help' for a command's flags.\n");
}

// The registered command whose words match the longest prefix of args; null if none.
const Command* Match(const std::vector<std::string>& args, size_t* words) {
  const Command* best = nullptr;
  *words = 0;
  for (const Command& command : Registry()) {
    std::vector<std::string> parts = absl::StrSplit(command.name, ' ');
    if (parts.size() > args.size() || parts.size() <= *words) continue;
    bool match = true;
    for (size_t i = 0; i < parts.size(); ++i) match = match && parts[i] == args[i];
    if (match) {
      best = &command;
      *words = parts.size();
    }
  }
  return best;
}

}  // namespace
}  // namespace phalanx::cli

int main(int argc, char** argv) {
  using namespace phalanx::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintHelp(stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  size_t words = 0;
  const Command* command = Match(args, &words);
  if (command == nullptr) {
    std::fprintf(stderr, "phalanx: unknown command \"%s\"\n\n", absl::StrJoin(args, " ").c_str());
    PrintHelp(stderr);
    return kExitBadInput;
  }
  std::vector<std::string> rest(args.begin() + static_cast<long>(words), args.end());
  if (WantsHelp(rest)) {
    std::printf("%s\n", command->usage.c_str());
    return kExitOk;
  }
  return command->run(rest);
}
