// KubeBinder is the extender's Binder over the API: one POST to pods/<pod>/binding naming the
// pod's uid and the node, and the API server's error passed back as it came.
#include "scheduler/extender/kube_binder.h"

#include <string>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/resource.h"
#include "tests/mocks/kube/mock_client.h"

namespace phalanx::extender {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::_;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Return;

MATCHER(IsPods, "is the pods resource") { return arg.plural == "pods"; }

TEST(KubeBinderTest, PostsABindingToThePodsBindingSubresource) {
  kube::MockClient client;
  const char kTarget[] = R"("target":{"apiVersion":"v1","kind":"Node","name":"n7"})";
  EXPECT_CALL(client, DoCreate(IsPods(), std::string_view("ml"),
                               AllOf(HasSubstr(R"("kind":"Binding")"),
                                     HasSubstr(R"("uid":"uid-3")"), HasSubstr(kTarget)),
                               _, std::string_view("llama-3"), std::string_view("binding")))
      .WillOnce(Return(std::string("{}")));
  KubeBinder binder(client);
  EXPECT_OK(binder.Bind("ml", "llama-3", "uid-3", "n7"));
}

TEST(KubeBinderTest, ReturnsTheApiError) {
  kube::MockClient client;
  EXPECT_CALL(client, DoCreate)
      .WillOnce(Return(absl::AlreadyExistsError("pod llama-3 is already assigned to node n1")));
  KubeBinder binder(client);
  EXPECT_THAT(binder.Bind("ml", "llama-3", "uid-3", "n7"),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("already assigned")));
}

}  // namespace
}  // namespace phalanx::extender
