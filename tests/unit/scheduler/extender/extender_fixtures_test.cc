// The extender against bodies recorded from the real kube-scheduler v1.34.4
// (testdata/, record_fixtures.sh): both node modes (NodeNames; Nodes with "NodeNames":null),
// prioritize and bind. Expected values that a re-recording changes (uids, node order) are read
// from the fixture with RapidJSON, independently of the codec under test.
#include <string>
#include <vector>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "scheduler/extender/extender.h"
#include "scheduler/extender/extender_codec.h"
#include "scheduler/in_process_placement_service.h"
#include "tests/mocks/scheduler/mock_binder.h"
#include "tests/unit/scheduler/extender/extender_bodies.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::extender {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Return;
using ::testing::StrictMock;
using namespace ::phalanx::extender::testing;    // NOLINT
using namespace ::phalanx::placement::testing;  // NOLINT

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  EXPECT_FALSE(doc.HasParseError());
  return doc;
}

std::vector<std::string> Strings(const std::vector<std::string_view>& views) {
  return {views.begin(), views.end()};
}

// What the recording pod is: rank 0 of TrainingJob default/llama, scheduled by `phalanx`.
void ExpectRecordedPod(const PodView& pod, const rapidjson::Document& doc) {
  EXPECT_EQ(pod.ns, "default");
  EXPECT_EQ(pod.name, "llama-0");
  EXPECT_EQ(pod.uid, doc["Pod"]["metadata"]["uid"].GetString());
  EXPECT_EQ(pod.scheduler_name, "phalanx");
  ASSERT_TRUE(pod.job.has_value());
  EXPECT_EQ(*pod.job, "llama");
  ASSERT_TRUE(pod.rank.has_value());
  EXPECT_EQ(*pod.rank, doc["Pod"]["metadata"]["labels"]["phalanx.dev/rank"].GetString());
}

class ExtenderFixturesTest : public ::testing::Test {
 protected:
  // Decodes the recorded ExtenderArgs body `file` into args_, and parses it into doc_.
  void Decode(const char* file) {
    body_ = ReadFixture(file);
    doc_.Parse(body_.c_str(), body_.size());
    ASSERT_FALSE(doc_.HasParseError()) << file;
    ASSERT_OK(decoder_.DecodeArgs(body_, &args_)) << file;
  }

  std::string body_;
  rapidjson::Document doc_;
  ExtenderDecoder decoder_;
  ExtenderArgs args_;
};

TEST_F(ExtenderFixturesTest, FilterWithNodeNames) {
  ASSERT_NO_FATAL_FAILURE(Decode("filter_node_names.json"));
  ASSERT_TRUE(doc_["Nodes"].IsNull());  // what nodeCacheCapable: true sends
  ExpectRecordedPod(args_.pod, doc_);
  std::vector<std::string> names;
  for (const auto& name : doc_["NodeNames"].GetArray()) names.push_back(name.GetString());
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(Strings(args_.node_names), names);
  EXPECT_FALSE(args_.from_node_list);
}

TEST_F(ExtenderFixturesTest, FilterWithNodesAndNullNodeNames) {
  ASSERT_NO_FATAL_FAILURE(Decode("filter_nodes.json"));
  ASSERT_TRUE(doc_["NodeNames"].IsNull());  // what nodeCacheCapable: false sends
  EXPECT_EQ(args_.pod.name, "llama-1");
  EXPECT_TRUE(args_.from_node_list);
  const auto& items = doc_["Nodes"]["items"];
  ASSERT_EQ(args_.node_names.size(), items.Size());
  ASSERT_EQ(args_.node_objects.size(), items.Size());
  for (rapidjson::SizeType i = 0; i < items.Size(); ++i) {
    EXPECT_EQ(args_.node_names[i], items[i]["metadata"]["name"].GetString());
    // Each kept object is exactly that whole node, so it can be handed back.
    rapidjson::Document object = Parse(std::string(args_.node_objects[i]));
    EXPECT_TRUE(object == items[i]) << args_.node_objects[i];
  }
}

TEST_F(ExtenderFixturesTest, PrioritizeBodiesDecodeLikeFilterBodies) {
  for (const char* file : {"prioritize_node_names.json", "prioritize_nodes.json"}) {
    ASSERT_NO_FATAL_FAILURE(Decode(file));
    EXPECT_EQ(args_.node_names.size(), 4u) << file;
    EXPECT_TRUE(args_.pod.job.has_value()) << file;
  }
}

TEST_F(ExtenderFixturesTest, Bind) {
  const std::string body = ReadFixture("bind.json");
  rapidjson::Document doc = Parse(body);
  ExtenderDecoder decoder;
  BindingArgs args;
  ASSERT_OK(decoder.DecodeBinding(body, &args));
  EXPECT_EQ(args.pod_name, "llama-0");
  EXPECT_EQ(args.pod_namespace, "default");
  EXPECT_EQ(args.pod_uid, doc["PodUID"].GetString());
  EXPECT_EQ(args.node, doc["Node"].GetString());
}

// The recorded cluster (four kwok p5 nodes) with TrainingJob default/llama reserved on the node
// kube-scheduler bound rank 0 to in the recording, and rank 1 on another one.
class ExtenderOnRecordedClusterTest : public ::testing::Test {
 protected:
  ExtenderOnRecordedClusterTest()
      : service_(MakeSnapshot()), extender_(service_, binder_) {
    bound_node_ = Parse(ReadFixture("bind.json"))["Node"].GetString();
    for (const char* name : {"p5-0000", "p5-0001", "p5-0002", "p5-0003"}) {
      if (name != bound_node_ && other_node_.empty()) other_node_ = name;
    }
    EXPECT_OK(service_.Update([&](placement::ClusterSnapshot& snapshot) {
      placement::Placement placement{"default/llama", {}, {bound_node_, other_node_}};
      return snapshot.Restore(Gang("default/llama", 2, 8), placement).status();
    }));
  }

  static placement::ClusterSnapshot MakeSnapshot() {
    placement::ClusterSnapshot snapshot(Eks());
    for (const char* name : {"p5-0000", "p5-0001", "p5-0002", "p5-0003"}) {
      EXPECT_OK(snapshot.AddNode(GpuNode(snapshot.topology(), name, {"l1", "l2", "l3"})));
    }
    return snapshot;
  }

  StrictMock<MockBinder> binder_;
  placement::InProcessPlacementService service_;
  Extender extender_;
  std::string bound_node_;  // where kube-scheduler bound llama-0 in the recording
  std::string other_node_;
};

TEST_F(ExtenderOnRecordedClusterTest, PinsTheRecordedPodInBothNodeModes) {
  Reply reply = extender_.HandleFilter(ReadFixture("filter_node_names.json"));
  EXPECT_EQ(reply.outcome, Outcome::kPinned);
  ParsedFilterResult result = ParseFilterResult(reply.response.body);
  EXPECT_THAT(*result.node_names, ElementsAre(bound_node_));
  EXPECT_THAT(result.failed_and_unresolvable, IsEmpty());

  // llama-1 is rank 1: reserved on other_node_. In Nodes mode the reply carries that whole node
  // object as kube-scheduler sent it.
  const std::string body = ReadFixture("filter_nodes.json");
  reply = extender_.HandleFilter(body);
  EXPECT_EQ(reply.outcome, Outcome::kPinned);
  result = ParseFilterResult(reply.response.body);
  EXPECT_FALSE(result.node_names.has_value());
  ASSERT_TRUE(result.nodes.has_value());
  EXPECT_THAT(*result.nodes, ElementsAre(other_node_));
  rapidjson::Document request = Parse(body);
  rapidjson::Document answer = Parse(reply.response.body);
  for (const auto& item : request["Nodes"]["items"].GetArray()) {
    if (std::string(item["metadata"]["name"].GetString()) == other_node_) {
      EXPECT_TRUE(answer["Nodes"]["items"][0] == item);
    }
  }
}

TEST_F(ExtenderOnRecordedClusterTest, PrioritizeScoresTheReservedNode) {
  Reply reply = extender_.HandlePrioritize(ReadFixture("prioritize_node_names.json"));
  EXPECT_EQ(reply.outcome, Outcome::kPinned);
  EXPECT_THAT(ParsePriorities(reply.response.body), ElementsAre(::testing::Pair(bound_node_, 10)));
}

TEST_F(ExtenderOnRecordedClusterTest, BindsTheRecordedBinding) {
  extender_.HandleFilter(ReadFixture("filter_node_names.json"));
  const std::string body = ReadFixture("bind.json");
  rapidjson::Document doc = Parse(body);
  EXPECT_CALL(binder_, Bind("default", "llama-0", doc["PodUID"].GetString(), bound_node_))
      .WillOnce(Return(absl::OkStatus()));
  Reply reply = extender_.HandleBind(body);
  EXPECT_EQ(reply.outcome, Outcome::kPinned);
  EXPECT_EQ(ParseBindingError(reply.response.body), "");
}

TEST_F(ExtenderOnRecordedClusterTest, AJobWithoutReservationFailsEveryRecordedCandidate) {
  ASSERT_OK(service_.Release("default/llama"));
  Reply reply = extender_.HandleFilter(ReadFixture("filter_node_names.json"));
  EXPECT_EQ(reply.outcome, Outcome::kNoReservation);
  ParsedFilterResult result = ParseFilterResult(reply.response.body);
  EXPECT_THAT(*result.node_names, IsEmpty());
  EXPECT_EQ(result.failed_and_unresolvable.size(), 4u);
}

}  // namespace
}  // namespace phalanx::extender
