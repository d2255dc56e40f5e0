// Reading user-written YAML with errors that name the file, the line and the field, which is
// what `phalanx simulate --cluster` and `phalanx plan -f` promise (exit code 2).
//
//   ASSIGN_OR_RETURN(YAML::Node root, LoadYamlFile(path));
//   YamlReader in(path);
//   ASSIGN_OR_RETURN(int32_t count, in.Int(group, "count", "nodeGroups[0].count"));
//   // error: "cluster.yaml:7: nodeGroups[0].count: want an integer, got \"many\""
//
// yaml-cpp reports problems by throwing; this file is the one place that catches, so the rest of
// the simulator only sees absl::Status.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace phalanx::sim {

// The whole file as text (common/text_input.h: ReadInputFile): InvalidArgument naming the path
// and what is wrong with it (missing, a directory, unreadable, binary, not UTF-8).
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

// Parses a whole file (or text, with `source` naming it in errors).
absl::StatusOr<YAML::Node> LoadYamlFile(const std::string& path);
absl::StatusOr<YAML::Node> LoadYamlText(const std::string& text, const std::string& source);
// Every document of a multi-document stream ("---" separated).
absl::StatusOr<std::vector<YAML::Node>> LoadAllYamlText(const std::string& text,
                                                        const std::string& source);

class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  // InvalidArgument "<source>:<line>: <field>: <message>" (line of `node`, 1-based).
  absl::Status Error(const YAML::Node& node, const std::string& field,
                     const std::string& message) const;

  // Optional keys return `fallback` when absent; a present key of the wrong type is an error.
  absl::StatusOr<std::string> String(const YAML::Node& map, const char* key,
                                     const std::string& field,
                                     std::optional<std::string> fallback = std::nullopt) const;
  absl::StatusOr<int64_t> Int(const YAML::Node& map, const char* key, const std::string& field,
                              std::optional<int64_t> fallback = std::nullopt) const;
  absl::StatusOr<double> Double(const YAML::Node& map, const char* key, const std::string& field,
                                std::optional<double> fallback = std::nullopt) const;
  absl::StatusOr<bool> Bool(const YAML::Node& map, const char* key, const std::string& field,
                            std::optional<bool> fallback = std::nullopt) const;

  // The node at `key`, which must be a map / sequence if present; an undefined node if absent.
  absl::StatusOr<YAML::Node> Map(const YAML::Node& map, const char* key, const std::string& field,
                                 bool required = false) const;
  absl::StatusOr<YAML::Node> Sequence(const YAML::Node& map, const char* key,
                                      const std::string& field, bool required = false) const;

  // Rejects keys of `map` not in `known`: a typo ("replica:") should not be silently ignored.
  absl::Status OnlyKeys(const YAML::Node& map, const std::string& field,
                        const std::vector<std::string>& known) const;

  // A scalar node as text / integer (for values inside maps like nominalQuota).
  absl::StatusOr<std::string> Scalar(const YAML::Node& node, const std::string& field) const;
  absl::StatusOr<int64_t> IntValue(const YAML::Node& node, const std::string& field) const;
  absl::StatusOr<double> DoubleValue(const YAML::Node& node, const std::string& field) const;

 private:
  std::string source_;
};

}  // namespace phalanx::sim
