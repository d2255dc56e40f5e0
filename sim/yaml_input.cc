#include "sim/yaml_input.h"

#include <cmath>
#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "common/text_input.h"

namespace phalanx::sim {

namespace {

// yaml-cpp keeps both entries of a key given twice in a map, and a lookup silently picks one;
// kubectl apply --validate=strict refuses such a manifest, and so do we: the second one is named
// by its line. Walked with an explicit stack and a bound, so that neither deep nesting nor an
// alias cycle can run away.
absl::Status CheckDuplicateKeys(const YAML::Node& root, const std::string& source) {
  constexpr size_t kMaxNodes = 1'000'000;
  std::vector<YAML::Node> stack = {root};
  for (size_t visited = 0; !stack.empty() && visited < kMaxNodes; ++visited) {
    const YAML::Node node = stack.back();
    stack.pop_back();
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) stack.push_back(item);
    } else if (node.IsMap()) {
      std::set<std::string> keys;
      for (const auto& entry : node) {
        if (entry.first.IsScalar() && !keys.insert(entry.first.Scalar()).second) {
          return absl::InvalidArgumentError(absl::StrCat(
              Printable(source), ":", entry.first.Mark().line + 1, ":",
              entry.first.Mark().column + 1, ": duplicate key \"",
              Printable(entry.first.Scalar()), "\""));
        }
        stack.push_back(entry.second);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<YAML::Node> LoadYamlText(const std::string& text, const std::string& source) {
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(Printable(source), ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
  RETURN_IF_ERROR(CheckDuplicateKeys(node, source));
  return node;
}

namespace {

// A line (with its newline) that starts a document ("---", "--- value") or ends one ("..."):
// the marker at column 0, followed by white space or the end of the line.
bool IsMarker(std::string_view line, std::string_view marker) {
  return line.substr(0, 3) == marker &&
         (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' ||
          line[3] == '\n');
}
bool IsDocumentStart(std::string_view line) { return IsMarker(line, "---"); }
bool IsDocumentEnd(std::string_view line) { return IsMarker(line, "..."); }

}  // namespace

// Not YAML::LoadAll: Debian's yaml-cpp 0.7 never returns from LoadAll on some malformed input
// (a document starting with ",": it adds empty documents forever, until memory runs out; found
// by tests/fuzz/fuzz_sim_yaml). The text is cut at its document markers, which YAML only
// recognises at column 0, and each document is loaded alone; empty documents are left out.
absl::StatusOr<std::vector<YAML::Node>> LoadAllYamlText(const std::string& text,
                                                        const std::string& source) {
  std::vector<YAML::Node> docs;
  std::string_view rest(text);
  int line_no = 0;  // of the first line of `doc`
  int next_line = 0;
  std::string doc;
  auto flush = [&]() -> absl::Status {
    if (!doc.empty()) {
      YAML::Node node;
      try {
        // The lines before the document, as empty lines, so that every node's mark is its
        // line in the file: errors about a later document's fields name their own line.
        node = YAML::Load(std::string(line_no, '\n') + doc);
      } catch (const YAML::Exception& e) {
        return absl::InvalidArgumentError(absl::StrCat(Printable(source), ":", e.mark.line + 1,
                                                       ":", e.mark.column + 1, ": ", e.msg));
      }
      RETURN_IF_ERROR(CheckDuplicateKeys(node, source));
      if (!node.IsNull()) docs.push_back(std::move(node));
    }
    doc.clear();
    line_no = next_line;
    return absl::OkStatus();
  };
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end == std::string_view::npos ? rest.size() : end + 1);
    rest.remove_prefix(line.size());
    if (IsDocumentStart(line)) {
      absl::Status flushed = flush();
      if (!flushed.ok()) return flushed;
    }
    doc.append(line);
    ++next_line;
    if (IsDocumentEnd(line)) {
      absl::Status flushed = flush();
      if (!flushed.ok()) return flushed;
    }
  }
  absl::Status flushed = flush();
  if (!flushed.ok()) return flushed;
  return docs;
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) { return ReadInputFile(path); }

absl::StatusOr<YAML::Node> LoadYamlFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return LoadYamlText(*text, path);
}

absl::Status YamlReader::Error(const YAML::Node& node, const std::string& field,
                               const std::string& message) const {
  const int line = node.IsDefined() ? node.Mark().line + 1 : 0;
  if (line <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat(Printable(source_), ": ", Printable(field), ": ", message));
  return absl::InvalidArgumentError(
      absl::StrCat(Printable(source_), ":", line, ": ", Printable(field), ": ", message));
}

namespace {

std::string Describe(const YAML::Node& node) {
  if (node.IsScalar()) return absl::StrCat("\"", Printable(node.Scalar()), "\"");
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  return "nothing";
}

}  // namespace

absl::StatusOr<std::string> YamlReader::Scalar(const YAML::Node& node,
                                               const std::string& field) const {
  if (!node.IsScalar())
    return Error(node, field, absl::StrCat("want a value, got ", Describe(node)));
  return node.Scalar();
}

absl::StatusOr<int64_t> YamlReader::IntValue(const YAML::Node& node,
                                             const std::string& field) const {
  int64_t value = 0;
  if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, value)) {
    return Error(node, field, absl::StrCat("want an integer, got ", Describe(node)));
  }
  return value;
}

absl::StatusOr<double> YamlReader::DoubleValue(const YAML::Node& node,
                                               const std::string& field) const {
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value)) {
    return Error(node, field, absl::StrCat("want a number, got ", Describe(node)));
  }
  if (!std::isfinite(value)) {
    return Error(node, field, absl::StrCat("want a finite number, got ", Describe(node)));
  }
  return value;
}

namespace {

// yaml-cpp throws BadSubscript for a key looked up in a scalar (a list item written as `- foo`
// where a map is wanted; found by tests/fuzz/fuzz_sim_yaml): refused here instead.
absl::Status CheckLookup(const YamlReader& in, const YAML::Node& map, const std::string& field) {
  if (!map.IsScalar()) return absl::OkStatus();
  return in.Error(map, field, absl::StrCat("want a field of a map, got ", Describe(map)));
}

// An optional scalar field: `fallback` when absent, otherwise `parse` of the node.
template <typename T, typename Parse>
absl::StatusOr<T> OptionalField(const YamlReader& in, const YAML::Node& map, const char* key,
                                const std::string& field, const std::optional<T>& fallback,
                                Parse parse) {
  RETURN_IF_ERROR(CheckLookup(in, map, field));
  const YAML::Node node = map[key];
  if (!node.IsDefined() || node.IsNull()) {
    if (fallback) return *fallback;
    return in.Error(map, field, "required field is missing");
  }
  return parse(node);
}

}  // namespace

absl::StatusOr<std::string> YamlReader::String(const YAML::Node& map, const char* key,
                                               const std::string& field,
                                               std::optional<std::string> fallback) const {
  return OptionalField<std::string>(*this, map, key, field, fallback,
                                    [&](const YAML::Node& n) { return Scalar(n, field); });
}

absl::StatusOr<int64_t> YamlReader::Int(const YAML::Node& map, const char* key,
                                        const std::string& field,
                                        std::optional<int64_t> fallback) const {
  return OptionalField<int64_t>(*this, map, key, field, fallback,
                                [&](const YAML::Node& n) { return IntValue(n, field); });
}

absl::StatusOr<double> YamlReader::Double(const YAML::Node& map, const char* key,
                                          const std::string& field,
                                          std::optional<double> fallback) const {
  return OptionalField<double>(*this, map, key, field, fallback,
                               [&](const YAML::Node& n) { return DoubleValue(n, field); });
}

absl::StatusOr<bool> YamlReader::Bool(const YAML::Node& map, const char* key,
                                      const std::string& field,
                                      std::optional<bool> fallback) const {
  return OptionalField<bool>(
      *this, map, key, field, fallback, [&](const YAML::Node& n) -> absl::StatusOr<bool> {
        bool value = false;
        if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value)) {
          return Error(n, field, absl::StrCat("want true or false, got ", Describe(n)));
        }
        return value;
      });
}

absl::StatusOr<YAML::Node> YamlReader::Map(const YAML::Node& map, const char* key,
                                           const std::string& field, bool required) const {
  RETURN_IF_ERROR(CheckLookup(*this, map, field));
  YAML::Node node = map[key];
  if (!node.IsDefined() || node.IsNull()) {
    if (required) return Error(map, field, "required field is missing");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  if (!node.IsMap()) return Error(node, field, absl::StrCat("want a map, got ", Describe(node)));
  return node;
}

absl::StatusOr<YAML::Node> YamlReader::Sequence(const YAML::Node& map, const char* key,
                                                const std::string& field, bool required) const {
  RETURN_IF_ERROR(CheckLookup(*this, map, field));
  YAML::Node node = map[key];
  if (!node.IsDefined() || node.IsNull()) {
    if (required) return Error(map, field, "required field is missing");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  if (!node.IsSequence())
    return Error(node, field, absl::StrCat("want a list, got ", Describe(node)));
  return node;
}

absl::Status YamlReader::OnlyKeys(const YAML::Node& map, const std::string& field,
                                  const std::vector<std::string>& known) const {
  if (!map.IsMap()) return Error(map, field, absl::StrCat("want a map, got ", Describe(map)));
  for (const auto& entry : map) {
    const std::string key = entry.first.as<std::string>("");
    bool ok = false;
    for (const std::string& k : known) ok = ok || k == key;
    if (!ok) {
      return Error(entry.first, field.empty() ? key : absl::StrCat(field, ".", key),
                   absl::StrCat("unknown field (known: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace phalanx::sim
