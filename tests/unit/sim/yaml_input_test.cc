#include "sim/yaml_input.h"

#include <string>
#include <vector>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::sim {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;

TEST(LoadAllYamlTextTest, SplitsDocuments) {
  ASSERT_OK_AND_ASSIGN(std::vector<YAML::Node> docs,
                       LoadAllYamlText("a: 1\n---\nb: 2\n--- {c: 3}\n...\nd: 4\n", "in.yaml"));
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[0]["a"].as<int>(), 1);
  EXPECT_EQ(docs[1]["b"].as<int>(), 2);
  EXPECT_EQ(docs[2]["c"].as<int>(), 3);
  EXPECT_EQ(docs[3]["d"].as<int>(), 4);
}

TEST(LoadAllYamlTextTest, LeavesOutEmptyDocuments) {
  ASSERT_OK_AND_ASSIGN(std::vector<YAML::Node> docs,
                       LoadAllYamlText("---\n# only a comment\n---\nkind: TrainingJob\n", "in"));
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["kind"].as<std::string>(), "TrainingJob");
}

TEST(LoadAllYamlTextTest, ErrorsNameTheLineInTheWholeFile) {
  // The unclosed list is reported where the text ends: line 4 of the file, not of its document.
  EXPECT_THAT(LoadAllYamlText("a: 1\n---\nb: [1, 2\n", "in.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("in.yaml:4:")));
}

// Every node's mark is its line in the file, in later documents too: errors a reader finds in
// a field (the CRD check, YamlReader::Error) once named its line within its own document.
TEST(LoadAllYamlTextTest, MarksAreLinesOfTheWholeFile) {
  ASSERT_OK_AND_ASSIGN(std::vector<YAML::Node> docs,
                       LoadAllYamlText("kind: Namespace\n---\nkind: A\n---\n\nspec:\n  x: 1\n",
                                       "in.yaml"));
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[1]["kind"].Mark().line + 1, 3);
  EXPECT_EQ(docs[2]["spec"]["x"].Mark().line + 1, 7);
}

// As kubectl apply --validate=strict: a key given twice in one map is an error naming the
// second one's line in the whole file, at any depth; the same key in two maps is not.
TEST(LoadAllYamlTextTest, DuplicateKeysAreRefused) {
  EXPECT_THAT(LoadAllYamlText("a: 1\n---\nspec:\n  replicas: 2\n  replicas: 3\n", "job.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("job.yaml:5:3: duplicate key \"replicas\"")));
  EXPECT_THAT(LoadYamlText("jobs:\n- {name: a, name: b}\n", "t.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duplicate key \"name\"")));
  EXPECT_TRUE(LoadYamlText("a: {x: 1}\nb: {x: 2}\n", "ok.yaml").ok());
  EXPECT_TRUE(LoadAllYamlText("x: 1\n---\nx: 2\n", "ok.yaml").ok());
}

// Found by tests/fuzz/fuzz_sim_yaml: YAML::LoadAll(",") of Debian's yaml-cpp 0.7 appends empty
// documents forever; each document is now loaded on its own, which returns.
TEST(LoadAllYamlTextTest, LeadingFlowEntryReturns) {
  for (const char* text : {",", ",@", "a: b\n---\n,@\n", ",,,@h100\nx,y\n"}) {
    absl::StatusOr<std::vector<YAML::Node>> docs = LoadAllYamlText(text, "in");
    if (docs.ok()) {
      EXPECT_LE(docs->size(), 2u) << text;
    }
  }
}

// Found by tests/fuzz/fuzz_sim_yaml: a field read from a scalar (a toleration written as
// `- foo`) let yaml-cpp's BadSubscript escape and terminate the process.
TEST(YamlReaderTest, FieldOfAScalarIsAnError) {
  YamlReader in("in.yaml");
  ASSERT_OK_AND_ASSIGN(YAML::Node doc, LoadYamlText("tolerations: [foo]\n", "in.yaml"));
  EXPECT_THAT(in.String(doc["tolerations"][0], "key", "tolerations[0].key", ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tolerations[0].key")));
  EXPECT_THAT(in.Map(doc["tolerations"][0], "spec", "tolerations[0].spec", true),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(in.Int(doc["tolerations"][0], "count", "tolerations[0].count"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("got \"foo\"")));
}

}  // namespace
}  // namespace phalanx::sim
