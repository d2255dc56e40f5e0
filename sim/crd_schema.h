// Checks a manifest against a CustomResourceDefinition's openAPIV3Schema the way the API
// server does when `kubectl apply` sends it (field validation Strict, kubectl's default): types,
// required fields, unknown fields, minimum/maximum, minLength/maxLength, pattern, enum,
// minItems/maxItems, and the CEL rules (x-kubernetes-validations). The schema is read from the
// CRD itself, so `phalanx plan` and the API server share one source of truth; CEL rules are not
// interpreted but matched by their message to a native check the caller supplies, and a rule
// without one is an error of its own (a new rule in the CRD cannot be missed silently).
//
//   ASSIGN_OR_RETURN(CrdSchema schema, CrdSchema::Parse(TrainingJobCrdYaml(), "crd.yaml"));
//   std::vector<SchemaError> errors = schema.Validate(doc, rules);
//   // {line 9, "spec.queueName: Required value"}
//
// Messages are the API server's ("spec.replicas: Invalid value: 0: spec.replicas in body should
// be greater than or equal to 1"). Not checked: transition rules (they compare with the stored
// object, oldSelf), ObjectMeta beyond the CRD's own rules, and fields under
// x-kubernetes-preserve-unknown-fields (a PodSpec), which the API server validates only when the
// pods are created.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace phalanx::sim {

struct SchemaError {
  int line = 0;          // 1-based line of the offending node in the manifest, 0 if unknown
  std::string message;   // "spec.queueName: Required value"
  bool unimplemented_rule = false;  // a CEL rule with no native check: the caller's bug
};

// A CEL rule's native twin: true if `self` (the object the rule sits on) passes it.
using RuleCheck = std::function<bool(const YAML::Node& self)>;

// Native checks by the rule's message. A rule mapped to nullptr is checked elsewhere by the
// caller (and skipped here).
using RuleChecks = std::map<std::string, RuleCheck>;

class CrdSchema {
 public:
  // The first version's openAPIV3Schema of the CRD in `crd_yaml`.
  static absl::StatusOr<CrdSchema> Parse(const std::string& crd_yaml, const std::string& source);

  // Every error of `object`, in document order.
  std::vector<SchemaError> Validate(const YAML::Node& object, const RuleChecks& rules) const;

  // Every CEL rule of the schema: {path, rule, message}; transition rules included.
  struct Rule {
    std::string path, rule, message;
    bool transition = false;  // compares with oldSelf: only on update
  };
  std::vector<Rule> Rules() const;

 private:
  explicit CrdSchema(YAML::Node schema) : schema_(std::move(schema)) {}
  YAML::Node schema_;
};

}  // namespace phalanx::sim
