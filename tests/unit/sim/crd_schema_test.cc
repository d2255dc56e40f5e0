#include "sim/crd_schema.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/trainingjob_crd.h"

namespace phalanx::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), {});
}

TEST(TrainingJobCrdTest, TheEmbeddedCrdIsTheOneInCrds) {
  EXPECT_EQ(TrainingJobCrdYaml(),
            ReadFile(std::string(PHALANX_SOURCE_DIR) + "/crds/phalanx.dev_trainingjobs.yaml"));
}

// Each CEL rule of the CRD that plan can check (all but transition rules, which compare with
// the stored object) is broken by some manifest of tests/e2e/cluster/invalid/ whose "# expect:"
// names its message: CliTest.PlanRejectsEveryInvalidTrainingJobManifestLikeTheCrd then shows
// plan gives that message, and the e2e test that the API server does.
TEST(TrainingJobCrdTest, EveryCelRuleIsExercisedByAnInvalidManifest) {
  absl::StatusOr<CrdSchema> schema = CrdSchema::Parse(TrainingJobCrdYaml(), "crd");
  ASSERT_TRUE(schema.ok()) << schema.status();
  std::set<std::string> expected;
  const std::string dir = std::string(PHALANX_SOURCE_DIR) + "/tests/e2e/cluster/invalid";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream file(entry.path());
    for (std::string line; std::getline(file, line);) {
      if (line.rfind("# expect: ", 0) == 0) expected.insert(line.substr(10));
    }
  }
  int transition = 0, checked = 0;
  for (const CrdSchema::Rule& rule : schema->Rules()) {
    if (rule.transition) {
      ++transition;
      continue;
    }
    bool named = false;
    for (const std::string& text : expected) named = named || rule.message.find(text) == 0;
    EXPECT_TRUE(named) << "no invalid manifest expects \"" << rule.message << "\"";
    ++checked;
  }
  // spec.queueName, activeDeadlineSeconds, template, replicas, elastic, topology and
  // priorityClassName cannot change while the job is admitted
  EXPECT_EQ(transition, 7);
  EXPECT_EQ(checked, 11);
}

// A small schema exercising every keyword the walker knows, with the API server's messages.
TEST(CrdSchemaTest, ReportsEveryErrorInTheApiServersWords) {
  absl::StatusOr<CrdSchema> schema = CrdSchema::Parse(R"(
spec:
  versions:
  - schema:
      openAPIV3Schema:
        type: object
        required: [size]
        properties:
          metadata: {type: object}
          size: {type: integer, minimum: 1, maximum: 8}
          mode: {type: string, enum: [A, B]}
          name: {type: string, minLength: 1, maxLength: 3, pattern: '^[a-z]+$'}
          list: {type: array, minItems: 1, maxItems: 2, items: {type: string}}
          free: {type: object, x-kubernetes-preserve-unknown-fields: true}
          tags: {type: object, additionalProperties: {type: string}}
        x-kubernetes-validations:
        - {rule: 'self.size != 3', message: size must not be 3}
        - {rule: 'self.size == oldSelf.size', message: size is immutable}
)",
                                                      "test");
  ASSERT_TRUE(schema.ok()) << schema.status();
  const RuleChecks rules = {{"size must not be 3", [](const YAML::Node& self) {
                               return self["size"].as<int>(0) != 3;
                             }}};
  auto messages = [&](const std::string& yaml) {
    std::vector<std::string> out;
    for (const SchemaError& e : schema->Validate(YAML::Load(yaml), rules)) {
      out.push_back(e.message);
    }
    return out;
  };
  EXPECT_THAT(messages("{size: 2, metadata: {name: x, anything: y}, free: {a: {b: 1}}}"),
              ElementsAre());
  EXPECT_THAT(messages("{mode: A}"), ElementsAre("size: Required value"));
  EXPECT_THAT(messages("{size: 0}"),
              ElementsAre("size: Invalid value: 0: size in body should be greater than or equal "
                          "to 1"));
  EXPECT_THAT(messages("{size: 9}"),
              ElementsAre("size: Invalid value: 9: size in body should be less than or equal "
                          "to 8"));
  EXPECT_THAT(messages("{size: '2'}"),
              ElementsAre("size: Invalid value: \"2\": size in body must be of type integer: "
                          "\"string\""));
  EXPECT_THAT(messages("{size: 2, mode: C}"),
              ElementsAre("mode: Unsupported value: \"C\": supported values: \"A\", \"B\""));
  EXPECT_THAT(messages("{size: 2, name: ''}"),
              ElementsAre("name: Invalid value: \"\": name in body should be at least 1 chars "
                          "long",
                          "name: Invalid value: \"\": name in body should match '^[a-z]+$'"));
  EXPECT_THAT(messages("{size: 2, name: abcd}"),
              ElementsAre("name: Too long: may not be more than 3 bytes"));
  EXPECT_THAT(messages("{size: 2, list: []}"),
              ElementsAre("list: Invalid value: 0: list in body should have at least 1 items"));
  EXPECT_THAT(messages("{size: 2, list: [a, b, c]}"),
              ElementsAre("list: Too many: 3: must have at most 2 items"));
  EXPECT_THAT(messages("{size: 2, list: [1]}"),
              ElementsAre("list[0]: Invalid value: 1: list[0] in body must be of type string: "
                          "\"integer\""));
  EXPECT_THAT(messages("{size: 2, tags: {a: x, b: [1]}}"),
              ElementsAre("tags.b: Invalid value: \"array\": tags.b in body must be of type "
                          "string: \"array\""));
  EXPECT_THAT(messages("{size: 2, sise: 2, \"\\e\": 1}"),
              ElementsAre("unknown field \"sise\"", "unknown field \"\\x1b\""));
  EXPECT_THAT(messages("{size: 3}"),
              ElementsAre("<root>: Invalid value: \"object\": size must not be 3"));
  // A rule nobody implemented is an error of its own, not a pass.
  const std::vector<SchemaError> unchecked = schema->Validate(YAML::Load("{size: 2}"), {});
  ASSERT_EQ(unchecked.size(), 1u);
  EXPECT_TRUE(unchecked[0].unimplemented_rule);
  EXPECT_EQ(unchecked[0].message, "<root>: CEL rule with no native check: size must not be 3");
  // Plain scalars are typed as YAML 1.2 core does; huge values do not crash the pattern check.
  EXPECT_THAT(messages("{size: 2, name: 1.5e3}"),
              ElementsAre("name: Invalid value: 1.5e3: name in body must be of type string: "
                          "\"number\""));
  EXPECT_THAT(messages("{size: +2}"), ElementsAre());
  EXPECT_THAT(messages("{size: 2, name: " + std::string(1 << 20, 'a') + "}"),
              ElementsAre("name: Too long: may not be more than 3 bytes"));
  EXPECT_THAT(messages("{size: " + std::string(1 << 20, '7') + "}"),
              ElementsAre("size: Invalid value: " + std::string(64, '7') +
                          "...: size in body must be a 64-bit integer"));
  // Lines point into the manifest.
  EXPECT_THAT(schema->Validate(YAML::Load("size: 2\nmode: C\n"), rules),
              ElementsAre(Field(&SchemaError::line, 2)));
}

}  // namespace
}  // namespace phalanx::sim
