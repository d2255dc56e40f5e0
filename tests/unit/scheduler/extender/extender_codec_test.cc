// The extender wire codec: what it reads from kube-scheduler's bodies, what it refuses (and how
// it names the field), and that what it writes is what kube-scheduler's Go decoder expects.
#include "scheduler/extender/extender_codec.h"

#include <string>
#include <vector>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/scheduler/extender/extender_bodies.h"

namespace phalanx::extender {
namespace {

using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using namespace ::phalanx::extender::testing;  // NOLINT

std::vector<std::string> Strings(const std::vector<std::string_view>& views) {
  return {views.begin(), views.end()};
}

TEST(ExtenderCodecTest, DecodesNodeNamesAndThePodFieldsItNeeds) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  ASSERT_OK(decoder.DecodeArgs(ArgsBody(GangPod("ml", "llama-3", "llama", "3"), {"n0", "n1", "n2"}),
                               &args));
  EXPECT_EQ(args.pod.ns, "ml");
  EXPECT_EQ(args.pod.name, "llama-3");
  EXPECT_EQ(args.pod.uid, "uid-llama-3");
  EXPECT_EQ(args.pod.scheduler_name, "phalanx");  // not the decoy inside an annotation
  ASSERT_TRUE(args.pod.job.has_value());
  EXPECT_EQ(*args.pod.job, "llama");
  ASSERT_TRUE(args.pod.rank.has_value());
  EXPECT_EQ(*args.pod.rank, "3");
  EXPECT_THAT(Strings(args.node_names), ElementsAre("n0", "n1", "n2"));
  EXPECT_FALSE(args.from_node_list);
}

TEST(ExtenderCodecTest, TheControllersUidOfTheOwnerReferences) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  PodSpec pod = GangPod("ml", "llama-3", "llama", "3");
  pod.controller_uid = "uid-job";  // after a ReplicaSet entry that is not the controller
  ASSERT_OK(decoder.DecodeArgs(ArgsBody(pod, {"n0"}), &args));
  EXPECT_EQ(args.pod.controller_uid, "uid-job");
  ASSERT_OK(decoder.DecodeArgs(ArgsBody(GangPod("ml", "llama-3", "llama", "3"), {"n0"}), &args));
  EXPECT_EQ(args.pod.controller_uid, "");  // no owners: reset from the decode before
  ASSERT_OK(decoder.DecodeArgs(R"({"Pod":{"metadata":{"name":"p","namespace":"ml",)"
                               R"("ownerReferences":[{"uid":"u","controller":null}]}},)"
                               R"("NodeNames":[]})",
                               &args));
  EXPECT_EQ(args.pod.controller_uid, "");
}

TEST(ExtenderCodecTest, PodWithoutGangLabelsHasNoJobOrRank) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  ASSERT_OK(decoder.DecodeArgs(ArgsBody(PlainPod("default", "nb"), {"n0"}), &args));
  EXPECT_FALSE(args.pod.job.has_value());
  EXPECT_FALSE(args.pod.rank.has_value());
}

TEST(ExtenderCodecTest, NullNodeNamesFallsBackToTheNamesInNodes) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  ASSERT_OK(decoder.DecodeArgs(ArgsBody(PlainPod("ml", "p"), {"a", "b", "c"}, true), &args));
  EXPECT_THAT(Strings(args.node_names), ElementsAre("a", "b", "c"));
  EXPECT_TRUE(args.from_node_list);
  ASSERT_EQ(args.node_objects.size(), 3u);
  EXPECT_EQ(args.node_objects[2],
            R"({"metadata":{"name":"c","labels":{"kubernetes.io/hostname":"c"}},)"
            R"("status":{"allocatable":{"nvidia.com/gpu":"8"}}})");
}

TEST(ExtenderCodecTest, NodeObjectsAreTheItemsTextWithoutSurroundingSpace) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  ASSERT_OK(decoder.DecodeArgs(
      "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\"}},\"Nodes\":{\"items\":[ "
      "{ \"metadata\" : {\"name\":\"a\"} , \"x\":[1,{}] }\n ,\t"
      "{\"metadata\":{\"name\":\"b\"}}\r\n]}}",
      &args));
  EXPECT_THAT(Strings(args.node_objects),
              ElementsAre("{ \"metadata\" : {\"name\":\"a\"} , \"x\":[1,{}] }",
                          "{\"metadata\":{\"name\":\"b\"}}"));
}

TEST(ExtenderCodecTest, NodesBodiesAreValidatedInFullBecauseTheirNodesAreEchoed) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  // The bad literal sits in a part the on-demand parser skips.
  EXPECT_THAT(decoder.DecodeArgs(R"({"Pod":{"metadata":{"name":"p","namespace":"ml"}},)"
                                 R"("Nodes":{"items":[{"metadata":{"name":"a"},"x":tru}]}})",
                                 &args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("malformed JSON")));
}

TEST(ExtenderCodecTest, AbsentNodeNamesAndNullItemsAreAnEmptyNodeList) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  ASSERT_OK(decoder.DecodeArgs(
      R"({"Pod":{"metadata":{"name":"p","namespace":"ml"}},"Nodes":{"metadata":{},"items":null}})",
      &args));
  EXPECT_THAT(args.node_names, IsEmpty());
  EXPECT_TRUE(args.from_node_list);
}

TEST(ExtenderCodecTest, NodeNamesWinOverNodesInAnyKeyOrder) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  ASSERT_OK(decoder.DecodeArgs(
      R"({"NodeNames":["x"],"Nodes":{"items":[{"metadata":{"name":"y"}}]},)"
      R"("Pod":{"spec":{"schedulerName":"s"},"metadata":{"namespace":"ml","name":"p"}}})",
      &args));
  EXPECT_THAT(Strings(args.node_names), ElementsAre("x"));
  EXPECT_FALSE(args.from_node_list);
  EXPECT_EQ(args.pod.scheduler_name, "s");
}

TEST(ExtenderCodecTest, EmptyNodeNamesIsAValidEmptyList) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  ASSERT_OK(decoder.DecodeArgs(ArgsBody(PlainPod("ml", "p"), {}), &args));
  EXPECT_THAT(args.node_names, IsEmpty());
  EXPECT_FALSE(args.from_node_list);
}

TEST(ExtenderCodecTest, EscapedKeysAndValuesAreUnescaped) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  ASSERT_OK(decoder.DecodeArgs(
      R"({"Pod":{"metadata":{"name":"p","namespace":"ml","labels":)"
      R"({"phalanx.dev\/job":"ll\u0061ma","phalanx.dev/rank":"1"}}},"NodeNames":["n\/0"]})",
      &args));
  ASSERT_TRUE(args.pod.job.has_value());
  EXPECT_EQ(*args.pod.job, "llama");
  EXPECT_THAT(Strings(args.node_names), ElementsAre("n/0"));
}

TEST(ExtenderCodecTest, ViewsStayValidUntilTheNextDecodeAndAnErrorDoesNotPoisonTheDecoder) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  ASSERT_OK(decoder.DecodeArgs(ArgsBody(GangPod("ml", "a-0", "a", "0"), Names("n", 100)), &args));
  EXPECT_EQ(args.node_names[99], "n99");
  EXPECT_THAT(decoder.DecodeArgs("{\"Pod\":", &args), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK(decoder.DecodeArgs(ArgsBody(GangPod("ml", "b-1", "b", "1"), {"m0"}), &args));
  EXPECT_EQ(args.pod.name, "b-1");
  EXPECT_THAT(Strings(args.node_names), ElementsAre("m0"));
}

struct BadBody {
  std::string body;
  std::string message;  // a substring of the InvalidArgument message
};

class ExtenderArgsRejectTest : public ::testing::TestWithParam<BadBody> {};

TEST_P(ExtenderArgsRejectTest, NamesTheField) {
  ExtenderDecoder decoder;
  ExtenderArgs args;
  EXPECT_THAT(decoder.DecodeArgs(GetParam().body, &args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

const char kPod[] = R"("Pod":{"metadata":{"name":"p","namespace":"ml"}})";

INSTANTIATE_TEST_SUITE_P(
    Bodies, ExtenderArgsRejectTest,
    ::testing::Values(
        BadBody{"", "malformed JSON"}, BadBody{"   ", "malformed JSON"},
        BadBody{"[]", "body: expected a JSON object"}, BadBody{"\"Pod\"", "expected a JSON object"},
        BadBody{"{}", "Pod: missing"}, BadBody{R"({"Pod":null,"NodeNames":[]})", "Pod: missing"},
        BadBody{R"({"Pod":[],"NodeNames":[]})", "Pod: expected an object"},
        BadBody{R"({"Pod":{"metadata":{"namespace":"ml"}},"NodeNames":[]})",
                "Pod.metadata.name: missing"},
        BadBody{R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":[]})",
                "Pod.metadata.namespace: missing"},
        BadBody{R"({"Pod":{"metadata":{"name":7,"namespace":"ml"}},"NodeNames":[]})",
                "Pod.metadata.name: expected a string"},
        BadBody{R"({"Pod":{"metadata":{"name":"","namespace":"ml"}},"NodeNames":[]})",
                "Pod.metadata.name: empty name"},
        BadBody{R"({"Pod":{"metadata":{"name":"p","namespace":"ml","labels":[]}},"NodeNames":[]})",
                "Pod.metadata.labels: expected an object"},
        BadBody{R"({"Pod":{"metadata":{"name":"p","namespace":"ml","labels":)"
                R"({"phalanx.dev/rank":3}}},"NodeNames":[]})",
                "Pod.metadata.labels[\"phalanx.dev/rank\"]: expected a string"},
        BadBody{R"({"Pod":{"metadata":{"name":"p","namespace":"ml","ownerReferences":{}}},)"
                R"("NodeNames":[]})",
                "Pod.metadata.ownerReferences: expected an array"},
        BadBody{R"({"Pod":{"metadata":{"name":"p","namespace":"ml","ownerReferences":)"
                R"([{"uid":"u","controller":"yes"}]}},"NodeNames":[]})",
                "Pod.metadata.ownerReferences[].controller: expected a boolean"},
        BadBody{R"({"Pod":{"metadata":{"name":"p","namespace":"ml"},"spec":{"schedulerName":1}},)"
                R"("NodeNames":[]})",
                "Pod.spec.schedulerName: expected a string"},
        BadBody{std::string("{") + kPod + "}", "NodeNames: missing, and no Nodes either"},
        BadBody{std::string("{") + kPod + R"(,"NodeNames":null,"Nodes":null})",
                "NodeNames: missing, and no Nodes either"},
        BadBody{std::string("{") + kPod + R"(,"NodeNames":"n0"})", "NodeNames: expected an array"},
        BadBody{std::string("{") + kPod + R"(,"NodeNames":["n0",1]})",
                "NodeNames[1]: expected a string"},
        BadBody{std::string("{") + kPod + R"(,"NodeNames":["n0",null]})",
                "NodeNames[1]: expected a string"},
        BadBody{std::string("{") + kPod + R"(,"NodeNames":["n0",""]})", "NodeNames[1]: empty name"},
        BadBody{std::string("{") + kPod + R"(,"NodeNames":[")" + std::string(254, 'x') + "\"]}",
                "NodeNames[0]: longer than 253 bytes"},
        BadBody{std::string("{") + kPod + R"(,"Nodes":{"items":{}}})",
                "Nodes.items: expected an array"},
        BadBody{std::string("{") + kPod +
                    R"(,"Nodes":{"items":[{"metadata":{"name":"a"}},{"metadata":{}}]}})",
                "Nodes.items[1].metadata.name: missing"},
        BadBody{std::string("{") + kPod + R"(,"Nodes":{"items":[{"metadata":{"name":5}}]}})",
                "Nodes.items[0]: metadata.name: expected a string"},
        BadBody{std::string("{") + kPod + R"(,"NodeNames":["n0"]} {})", "trailing content"},
        BadBody{std::string("{") + kPod + R"(,"NodeNames":["n0")", "malformed JSON"},
        BadBody{std::string("{") + kPod + R"(,"NodeNames":["n0"],})", "malformed JSON"},
        BadBody{std::string("{") + kPod + ",\"NodeNames\":[\"n\xff\"]}", "malformed JSON"}));

TEST(ExtenderCodecTest, RefusesMoreThanTheNodeNameLimit) {
  std::string body = std::string("{") + kPod + R"(,"NodeNames":[)";
  for (size_t i = 0; i <= kMaxNodeNames; ++i) {
    if (i > 0) body += ',';
    body += "\"n\"";
  }
  body += "]}";
  ExtenderDecoder decoder;
  ExtenderArgs args;
  EXPECT_THAT(decoder.DecodeArgs(body, &args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than 100000 nodes")));
}

TEST(ExtenderCodecTest, DecodesBindingArgs) {
  ExtenderDecoder decoder;
  BindingArgs args;
  ASSERT_OK(decoder.DecodeBinding(BindingBody("ml", "llama-3", "u-3", "n7"), &args));
  EXPECT_EQ(args.pod_namespace, "ml");
  EXPECT_EQ(args.pod_name, "llama-3");
  EXPECT_EQ(args.pod_uid, "u-3");
  EXPECT_EQ(args.node, "n7");
  ASSERT_OK(decoder.DecodeBinding(R"({"Node":"n","PodNamespace":"ml","PodName":"p"})", &args));
  EXPECT_EQ(args.pod_uid, "");
}

TEST(ExtenderCodecTest, RejectsBadBindingArgs) {
  ExtenderDecoder decoder;
  BindingArgs args;
  EXPECT_THAT(decoder.DecodeBinding(R"({"PodNamespace":"ml","Node":"n"})", &args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("PodName: missing")));
  EXPECT_THAT(decoder.DecodeBinding(R"({"PodName":"p","Node":"n"})", &args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("PodNamespace: missing")));
  EXPECT_THAT(decoder.DecodeBinding(R"({"PodName":"p","PodNamespace":"ml","Node":""})", &args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Node: missing")));
  EXPECT_THAT(decoder.DecodeBinding(R"({"PodName":"p","PodNamespace":"ml","Node":["n"]})", &args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Node: expected a string")));
  EXPECT_THAT(decoder.DecodeBinding("[1]", &args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected a JSON object")));
  EXPECT_THAT(decoder.DecodeBinding(R"({"PodName":"p")", &args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("malformed JSON")));
}

// The exact bytes: Go field names, the field order Go writes, and null/{} where Go has nil.
TEST(ExtenderCodecTest, EncodesFilterResultWithGoFieldNames) {
  std::string reason = "phalanx: rank 1 of ml/a is reserved on node n1";
  FilterResult result;
  result.node_names = {"n1"};
  result.failed_and_unresolvable = {{"n0", reason}, {"n2", reason}};
  EXPECT_EQ(EncodeFilterResult(result),
            R"({"Nodes":null,"NodeNames":["n1"],"FailedNodes":{},"FailedAndUnresolvableNodes":)"
            R"({"n0":"phalanx: rank 1 of ml/a is reserved on node n1",)"
            R"("n2":"phalanx: rank 1 of ml/a is reserved on node n1"},"Error":""})");
}

TEST(ExtenderCodecTest, EncodesNodeListReplyForNodeListRequests) {
  FilterResult result;
  result.as_node_list = true;
  result.node_names = {"a", "b"};
  result.node_objects = {R"({"metadata":{"name":"a"},"status":{}})",
                         R"({"metadata":{"name":"b"}})"};
  result.failed = {{"c", "busy"}};
  EXPECT_EQ(EncodeFilterResult(result),
            R"({"Nodes":{"metadata":{},"items":[{"metadata":{"name":"a"},"status":{}},)"
            R"({"metadata":{"name":"b"}}]},"NodeNames":null,"FailedNodes":{"c":"busy"},)"
            R"("FailedAndUnresolvableNodes":{},"Error":""})");
  result.node_names.clear();
  result.node_objects.clear();
  ParsedFilterResult parsed = ParseFilterResult(EncodeFilterResult(result));
  ASSERT_TRUE(parsed.nodes.has_value());  // an empty list, not null: every node fails
  EXPECT_THAT(*parsed.nodes, IsEmpty());
}

TEST(ExtenderCodecTest, EscapesEveryStringItWrites) {
  std::string nasty = "quote \" backslash \\ newline \n tab \t bell \x07 del \x7f caf\xc3\xa9 </x>";
  FilterResult result;
  result.node_names = {"n\"0"};
  result.failed = {{"n1", nasty}};
  result.error = nasty;
  ParsedFilterResult parsed = ParseFilterResult(EncodeFilterResult(result));
  ASSERT_TRUE(parsed.valid);
  EXPECT_THAT(*parsed.node_names, ElementsAre("n\"0"));
  EXPECT_THAT(parsed.failed, UnorderedElementsAre(Pair("n1", nasty)));
  EXPECT_EQ(parsed.error, nasty);
  EXPECT_EQ(ParseBindingError(EncodeBindingResult(nasty)), nasty);
  std::string control;
  AppendJsonString(std::string("\x01\x1f", 2), &control);
  EXPECT_EQ(control, R"("\u0001\u001f")");
}

TEST(ExtenderCodecTest, EncodesHostPriorityListAndBindingResult) {
  EXPECT_EQ(EncodeHostPriorityList({}), "[]");
  EXPECT_EQ(EncodeHostPriorityList({{"n1", 10}, {"n2", 0}}),
            R"([{"Host":"n1","Score":10},{"Host":"n2","Score":0}])");
  EXPECT_EQ(EncodeBindingResult(""), R"({"Error":""})");
  EXPECT_EQ(EncodeBindingResult("no"), R"({"Error":"no"})");
}

}  // namespace
}  // namespace phalanx::extender
