// Flags and YAML config files for the long-running binaries (phalanx-scheduler,
// phalanx-operator): defaults, then a YAML file (--config), then flags, each overriding the one
// before. Every option has one camelCase name that is both its config-file key and, dashed,
// its flag ("grpcAddress" <-> --grpc-address). An unknown flag or key is an error naming it.
//
//   MyConfig config;
//   ConfigFlags flags("phalanx-operator");
//   flags.String("kubeconfig", &config.kubeconfig).Address("healthAddress", &config.health);
//   ASSIGN_OR_RETURN(ConfigFlags::Parsed parsed, flags.Parse(args));
//   if (parsed.help) ...
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace phalanx {

// "host:port" -> {host, port}; InvalidArgument names `field` when malformed. "[::1]:80" works.
struct HostPort {
  std::string host;
  int port = 0;
};
absl::StatusOr<HostPort> ParseHostPort(const std::string& text, const std::string& field);

// A decimal integer in [min, max]; the error names `field`.
absl::StatusOr<int> ParseIntInRange(const std::string& text, const std::string& field, int min,
                                    int max);

class ConfigFlags {
 public:
  // Sets the option from its text; errors should name the option.
  using Setter = std::function<absl::Status(const std::string& value)>;

  // `program` names the binary in errors ("see <program> --help").
  explicit ConfigFlags(std::string program) : program_(std::move(program)) {}

  ConfigFlags& Add(const std::string& key, Setter setter);
  ConfigFlags& String(const std::string& key, std::string* target);
  ConfigFlags& Int(const std::string& key, int* target, int min, int max);
  // host:port, validated with ParseHostPort.
  ConfigFlags& Address(const std::string& key, std::string* target);
  // true|false (flags and file alike).
  ConfigFlags& Bool(const std::string& key, bool* target);

  // Applies a YAML mapping file's keys. Unknown keys and non-scalar values are errors naming the
  // file and the key.
  absl::Status ApplyFile(const std::string& path) const;

  struct Parsed {
    bool help = false;
    bool version = false;
  };
  // Parses argv without argv[0] (--name=value or --name value; -h/--help; --version). --config
  // FILE is applied first, whatever its position, so flags override the file.
  absl::StatusOr<Parsed> Parse(const std::vector<std::string>& args) const;

 private:
  const Setter* FlagSetter(const std::string& flag) const;

  std::string program_;
  std::map<std::string, Setter> options_;  // camelCase key -> setter
};

}  // namespace phalanx
