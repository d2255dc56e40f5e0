// Whatever arrives on the wire, the extender answers 200 or 400 and never crashes: every prefix
// of valid bodies, and valid bodies with random bytes flipped, inserted or deleted (bounded
// loops, fixed seeds, so a failure reproduces).
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/extender/extender.h"
#include "scheduler/in_process_placement_service.h"
#include "tests/mocks/scheduler/mock_binder.h"
#include "tests/unit/scheduler/extender/extender_bodies.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::extender {
namespace {

using ::testing::AnyOf;
using ::testing::NiceMock;
using ::testing::Return;
using namespace ::phalanx::extender::testing;    // NOLINT
using namespace ::phalanx::placement::testing;  // NOLINT

class ExtenderRobustnessTest : public ::testing::Test {
 protected:
  ExtenderRobustnessTest() : service_(MakeSnapshot()), extender_(service_, binder_) {
    EXPECT_TRUE(service_.Reserve(Gang("ml/llama", 2, 8)).ok());
    ON_CALL(binder_, Bind).WillByDefault(Return(absl::OkStatus()));
  }

  static placement::ClusterSnapshot MakeSnapshot() {
    placement::ClusterSnapshot snapshot(Eks());
    AddNodes(snapshot, {"a", "b", "nn-1"}, "n", 4);
    return snapshot;
  }

  // Valid bodies of every verb, hand-made and recorded from kube-scheduler.
  std::vector<std::pair<Verb, std::string>> Seeds() const {
    return {
        {Verb::kFilter, ArgsBody(GangPod("ml", "llama-0", "llama", "0"), Names("n", 4))},
        {Verb::kFilter, ArgsBody(PlainPod("ml", "nb"), Names("n", 4), true)},
        {Verb::kPrioritize, ArgsBody(GangPod("ml", "llama-1", "llama", "1"), Names("n", 4))},
        {Verb::kBind, BindingBody("ml", "llama-0", "uid-llama-0", "n0")},
        {Verb::kFilter, ReadFixture("filter_node_names.json")},
        {Verb::kFilter, ReadFixture("filter_nodes.json")},
        {Verb::kPrioritize, ReadFixture("prioritize_node_names.json")},
        {Verb::kBind, ReadFixture("bind.json")},
    };
  }

  void Check(Verb verb, const std::string& body) {
    Reply reply = extender_.Handle(verb, body);
    ASSERT_THAT(reply.response.status, AnyOf(200, 400)) << body;
    if (reply.response.status == 200) {
      // kube-scheduler must be able to decode whatever we answered.
      if (verb == Verb::kFilter) {
        ASSERT_TRUE(ParseFilterResult(reply.response.body).valid) << reply.response.body;
      } else if (verb == Verb::kBind) {
        ASSERT_NE(ParseBindingError(reply.response.body), "<invalid>") << reply.response.body;
      } else {
        ASSERT_EQ(ParsePriorities(reply.response.body).count("invalid"), 0u);
      }
    } else {
      ASSERT_FALSE(reply.response.body.empty());
    }
  }

  NiceMock<MockBinder> binder_;
  placement::InProcessPlacementService service_;
  Extender extender_;
};

TEST_F(ExtenderRobustnessTest, EveryPrefixOfAValidBodyIsAnsweredCleanly) {
  for (const auto& [verb, body] : Seeds()) {
    // Long recorded bodies: every prefix near the start and the end, strided in between.
    const size_t stride = body.size() > 4096 ? 7 : 1;
    for (size_t length = 0; length < body.size(); ++length) {
      if (length > 512 && length + 512 < body.size() && length % stride != 0) continue;
      Check(verb, body.substr(0, length));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST_F(ExtenderRobustnessTest, RandomlyDamagedBodiesAreAnsweredCleanly) {
  std::mt19937 rng(20250101);
  const std::string specials = "{}[]\",:\\0123456789eE+-.ntfu \x01\x7f\xc3\xff";
  for (const auto& [verb, body] : Seeds()) {
    for (int round = 0; round < 1500; ++round) {
      std::string damaged = body;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !damaged.empty(); ++e) {
        size_t at = rng() % damaged.size();
        char c = (rng() % 2 == 0) ? specials[rng() % specials.size()] : static_cast<char>(rng());
        switch (rng() % 3) {
          case 0: damaged[at] = c; break;
          case 1: damaged.insert(damaged.begin() + static_cast<std::ptrdiff_t>(at), c); break;
          default: damaged.erase(at, 1 + rng() % 8); break;
        }
      }
      Check(verb, damaged);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace phalanx::extender
