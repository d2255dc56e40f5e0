#include "sim/crd_schema.h"

#include <regex>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text_input.h"
#include "sim/yaml_input.h"

namespace phalanx::sim {
namespace {

bool IsDigits(const std::string& text, size_t from, size_t to) {
  if (from >= to) return false;
  for (size_t i = from; i < to; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

// [-+]?digits, or a decimal with fraction and/or exponent. Written out rather than as a
// std::regex: libstdc++'s regex recurses per character, and a scalar can be megabytes long.
bool IsInteger(const std::string& text) {
  const size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+');
  return IsDigits(text, sign, text.size()) && (text.size() == sign + 1 || text[sign] != '0');
}

bool IsNumber(const std::string& text) {
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+');
  const size_t e = text.find_first_of("eE", i);
  const std::string mantissa = text.substr(i, e == std::string::npos ? std::string::npos : e - i);
  const size_t dot = mantissa.find('.');
  const bool digits =
      dot == std::string::npos
          ? IsDigits(mantissa, 0, mantissa.size())
          : (IsDigits(mantissa, 0, dot) || dot == 0) &&
                (IsDigits(mantissa, dot + 1, mantissa.size()) || dot + 1 == mantissa.size()) &&
                mantissa.size() > 1;
  if (!digits) return false;
  if (e == std::string::npos) return true;
  i = e + 1 + (e + 1 < text.size() && (text[e + 1] == '-' || text[e + 1] == '+'));
  return IsDigits(text, i, text.size());
}

// A plain (unquoted) YAML scalar's JSON type, as sigs.k8s.io/yaml converts it; quoted scalars
// are strings.
std::string JsonType(const YAML::Node& node) {
  if (node.IsMap()) return "object";
  if (node.IsSequence()) return "array";
  if (node.IsNull()) return "null";
  if (node.Tag() != "?") return "string";  // quoted, or explicitly tagged
  const std::string& text = node.Scalar();
  if (IsInteger(text)) return "integer";
  if (IsNumber(text)) return "number";
  if (text == "true" || text == "false" || text == "True" || text == "False" || text == "TRUE" ||
      text == "FALSE") {
    return "boolean";
  }
  return "string";
}

// How the API server shows a value in "Invalid value: ...".
// Long values are cut to their first 64 bytes.
std::string Shown(const YAML::Node& node) {
  const std::string type = JsonType(node);
  std::string text = node.IsScalar() ? node.Scalar() : "";
  if (text.size() > 64) text = text.substr(0, 64) + "...";
  if (type == "integer" || type == "number" || type == "boolean") return Printable(text);
  if (type == "string") return absl::StrCat("\"", Printable(text), "\"");
  return absl::StrCat("\"", type, "\"");
}

// Longer strings are not matched against a pattern (every pattern of our CRDs sits on a field
// with a much smaller maxLength).
constexpr size_t kMaxPatternInput = 4096;

size_t Characters(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

class Walker {
 public:
  Walker(const RuleChecks& rules, std::vector<SchemaError>* errors)
      : rules_(rules), errors_(errors) {}

  // Returns whether `value` at `path` is free of errors.
  bool Walk(const YAML::Node& value, const YAML::Node& schema, const std::string& path,
            bool root = false) {
    const size_t before = errors_->size();
    const std::string type = schema["type"].IsDefined() ? schema["type"].Scalar() : "";
    const std::string actual = JsonType(value);
    if (!type.empty() && actual != type && !(type == "number" && actual == "integer")) {
      Add(value, absl::StrCat(path, ": Invalid value: ", Shown(value), ": ", path,
                              " in body must be of type ", type, ": \"", actual, "\""));
      return false;
    }
    if (value.IsScalar()) Scalar(value, schema, path);
    if (value.IsSequence()) Array(value, schema, path);
    if (value.IsMap()) Object(value, schema, path, root);
    if (errors_->size() == before) Rules(value, schema, path);
    return errors_->size() == before;
  }

 private:
  void Add(const YAML::Node& node, std::string message, bool unimplemented = false) {
    errors_->push_back({node.IsDefined() ? node.Mark().line + 1 : 0, std::move(message),
                        unimplemented});
  }

  void Scalar(const YAML::Node& value, const YAML::Node& schema, const std::string& path) {
    const std::string& text = value.Scalar();
    if (const YAML::Node e = schema["enum"]; e.IsDefined()) {
      std::vector<std::string> allowed;
      bool found = false;
      for (const YAML::Node& option : e) {
        allowed.push_back(absl::StrCat("\"", option.Scalar(), "\""));
        found = found || option.Scalar() == text;
      }
      if (!found) {
        Add(value, absl::StrCat(path, ": Unsupported value: ", Shown(value),
                                ": supported values: ", absl::StrJoin(allowed, ", ")));
        return;
      }
    }
    int64_t number = 0;
    if (JsonType(value) == "integer" && !absl::SimpleAtoi(text, &number)) {
      Add(value, absl::StrCat(path, ": Invalid value: ", Shown(value), ": ", path,
                              " in body must be a 64-bit integer"));
      return;
    }
    if (JsonType(value) == "integer") {
      int64_t bound = 0;
      if (schema["minimum"].IsDefined() && absl::SimpleAtoi(schema["minimum"].Scalar(), &bound) &&
          number < bound) {
        Add(value, absl::StrCat(path, ": Invalid value: ", number, ": ", path,
                                " in body should be greater than or equal to ", bound));
      }
      if (schema["maximum"].IsDefined() && absl::SimpleAtoi(schema["maximum"].Scalar(), &bound) &&
          number > bound) {
        Add(value, absl::StrCat(path, ": Invalid value: ", number, ": ", path,
                                " in body should be less than or equal to ", bound));
      }
    }
    if (JsonType(value) != "string") return;
    int64_t length = 0;
    if (schema["maxLength"].IsDefined() &&
        absl::SimpleAtoi(schema["maxLength"].Scalar(), &length) &&
        Characters(text) > static_cast<size_t>(length)) {
      // The pattern is not tried on it: std::regex recurses per character.
      Add(value, absl::StrCat(path, ": Too long: may not be more than ", length, " bytes"));
      return;
    }
    if (schema["minLength"].IsDefined() &&
        absl::SimpleAtoi(schema["minLength"].Scalar(), &length) &&
        Characters(text) < static_cast<size_t>(length)) {
      Add(value, absl::StrCat(path, ": Invalid value: ", Shown(value), ": ", path,
                              " in body should be at least ", length, " chars long"));
    }
    if (schema["pattern"].IsDefined() && text.size() <= kMaxPatternInput) {
      const std::string& pattern = schema["pattern"].Scalar();
      if (!std::regex_search(text, std::regex(pattern, std::regex::ECMAScript))) {
        Add(value, absl::StrCat(path, ": Invalid value: ", Shown(value), ": ", path,
                                " in body should match '", pattern, "'"));
      }
    }
  }

  void Array(const YAML::Node& value, const YAML::Node& schema, const std::string& path) {
    int64_t bound = 0;
    const int64_t size = static_cast<int64_t>(value.size());
    if (schema["minItems"].IsDefined() && absl::SimpleAtoi(schema["minItems"].Scalar(), &bound) &&
        size < bound) {
      Add(value, absl::StrCat(path, ": Invalid value: ", size, ": ", path,
                              " in body should have at least ", bound, " items"));
    }
    if (schema["maxItems"].IsDefined() && absl::SimpleAtoi(schema["maxItems"].Scalar(), &bound) &&
        size > bound) {
      Add(value, absl::StrCat(path, ": Too many: ", size, ": must have at most ", bound, " items"));
    }
    if (!schema["items"].IsDefined()) return;
    for (size_t i = 0; i < value.size(); ++i) {
      Walk(value[i], schema["items"], absl::StrCat(path, "[", i, "]"));
    }
  }

  void Object(const YAML::Node& value, const YAML::Node& schema, const std::string& path,
              bool root) {
    const std::string prefix = path.empty() ? "" : path + ".";
    if (const YAML::Node required = schema["required"]; required.IsDefined()) {
      for (const YAML::Node& key : required) {
        const YAML::Node field = value[key.Scalar()];
        if (!field.IsDefined() || field.IsNull()) {
          Add(value, absl::StrCat(prefix, key.Scalar(), ": Required value"));
        }
      }
    }
    const YAML::Node properties = schema["properties"];
    const YAML::Node additional = schema["additionalProperties"];
    const bool preserve = schema["x-kubernetes-preserve-unknown-fields"].IsDefined() &&
                          schema["x-kubernetes-preserve-unknown-fields"].as<bool>(false);
    for (const auto& entry : value) {
      const std::string key = entry.first.Scalar();
      const std::string field = prefix + key;
      // null is dropped by the API server before validation.
      if (entry.second.IsNull()) continue;
      // The root's metadata is ObjectMeta, which the API server checks by its own rules.
      if (root && key == "metadata") {
        if (!entry.second.IsMap()) {
          Add(entry.second, absl::StrCat("metadata: Invalid value: ", Shown(entry.second),
                                         ": metadata in body must be of type object: \"",
                                         JsonType(entry.second), "\""));
        }
        continue;
      }
      if (properties.IsDefined() && properties[key].IsDefined()) {
        Walk(entry.second, properties[key], field);
      } else if (additional.IsDefined() && additional.IsMap()) {
        Walk(entry.second, additional, field);
      } else if (!preserve) {
        Add(entry.first, absl::StrCat("unknown field \"", Printable(field), "\""));
      }
    }
  }

  void Rules(const YAML::Node& value, const YAML::Node& schema, const std::string& path) {
    const YAML::Node rules = schema["x-kubernetes-validations"];
    if (!rules.IsDefined()) return;
    for (const YAML::Node& rule : rules) {
      const std::string text = rule["rule"].as<std::string>("");
      const std::string message = rule["message"].as<std::string>(text);
      if (absl::StrContains(text, "oldSelf")) continue;  // transition rule: updates only
      auto check = rules_.find(message);
      if (check == rules_.end()) {
        Add(value, absl::StrCat(path.empty() ? "<root>" : path, ": CEL rule with no native check: ",
                                message),
            /*unimplemented=*/true);
        continue;
      }
      if (check->second && !check->second(value)) {
        Add(value, absl::StrCat(path.empty() ? "<root>" : path, ": Invalid value: \"object\": ",
                                message));
      }
    }
  }

  const RuleChecks& rules_;
  std::vector<SchemaError>* errors_;
};

void CollectRules(const YAML::Node& schema, const std::string& path,
                  std::vector<CrdSchema::Rule>* out) {
  if (!schema.IsMap()) return;
  for (const YAML::Node& rule : schema["x-kubernetes-validations"]) {
    const std::string text = rule["rule"].as<std::string>("");
    out->push_back({path, text, rule["message"].as<std::string>(text),
                    absl::StrContains(text, "oldSelf")});
  }
  const std::string prefix = path.empty() ? "" : path + ".";
  for (const auto& property : schema["properties"]) {
    CollectRules(property.second, prefix + property.first.Scalar(), out);
  }
  if (schema["items"].IsDefined()) CollectRules(schema["items"], path + "[]", out);
}

}  // namespace

absl::StatusOr<CrdSchema> CrdSchema::Parse(const std::string& crd_yaml, const std::string& source) {
  absl::StatusOr<YAML::Node> crd = LoadYamlText(crd_yaml, source);
  if (!crd.ok()) return crd.status();
  const YAML::Node schema = (*crd)["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
  if (!schema.IsDefined() || !schema.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": spec.versions[0].schema.openAPIV3Schema: missing"));
  }
  return CrdSchema(schema);
}

std::vector<SchemaError> CrdSchema::Validate(const YAML::Node& object,
                                             const RuleChecks& rules) const {
  std::vector<SchemaError> errors;
  Walker(rules, &errors).Walk(object, schema_, "", /*root=*/true);
  return errors;
}

std::vector<CrdSchema::Rule> CrdSchema::Rules() const {
  std::vector<Rule> rules;
  CollectRules(schema_, "", &rules);
  return rules;
}

}  // namespace phalanx::sim
