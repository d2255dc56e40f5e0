// `phalanx`: simulate, plan, bench, version. Dispatches to the longest registered command name
// that prefixes the arguments ("bench placement --nodes 10" -> "bench placement").
// Installed (or linked) as `kubectl-phalanx` it is a kubectl plugin: kubectl runs
// `kubectl phalanx jobs -A` as `kubectl-phalanx jobs -A`, and the commands are the same.
#include <cstdio>
#include <string>
#include <string_view>
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

// "kubectl phalanx" when run as the kubectl plugin, else "phalanx": what the user typed.
std::string ProgramName(std::string_view argv0) {
  std::string_view base = argv0.substr(argv0.rfind('/') + 1);  // npos + 1 == 0
  return base == "kubectl-phalanx" ? "kubectl phalanx" : "phalanx";
}

void PrintHelp(FILE* out, const std::string& program) {
  std::fprintf(out,
               "%s: topology-aware gang scheduling for distributed training on Kubernetes\n\n"
               "Usage: %s <command> [flags]\n\nCommands:\n",
               program.c_str(), program.c_str());
  for (const Command& command : Registry()) {
    std::fprintf(out, "  %-20s %s\n", command.name.c_str(), command.summary.c_str());
  }
  std::fprintf(out, "\nRun '%s <command> --help' for a command's flags.\n", program.c_str());
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
  const std::string program = ProgramName(argc > 0 ? argv[0] : "phalanx");
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintHelp(stdout, program);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  size_t words = 0;
  const Command* command = Match(args, &words);
  if (command == nullptr) {
    std::fprintf(stderr, "%s: unknown command \"%s\"\n\n", program.c_str(),
                 absl::StrJoin(args, " ").c_str());
    PrintHelp(stderr, program);
    return kExitBadInput;
  }
  std::vector<std::string> rest(args.begin() + static_cast<long>(words), args.end());
  if (WantsHelp(rest)) {
    std::printf("%s\n", command->usage.c_str());
    return kExitOk;
  }
  return command->run(rest);
}
