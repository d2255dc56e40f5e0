#include "common/resources.h"

#include <limits>
#include <utility>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx {
namespace {

using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;

TEST(ResourcesTest, ParsesIntoCanonicalUnits) {
  ASSERT_OK_AND_ASSIGN(
      ResourceList list,
      ParseResourceList({{"cpu", "500m"}, {"memory", "1.5Gi"}, {"nvidia.com/gpu", "8"}}, "requests"));
  EXPECT_EQ(list.at("cpu"), 500);
  EXPECT_EQ(list.at("memory"), 1610612736);
  EXPECT_EQ(list.at("nvidia.com/gpu"), 8);
}

TEST(ResourcesTest, ErrorsNameTheField) {
  EXPECT_THAT(ParseResourceList({{"memory", "12Qi"}}, "spec.resources"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.resources[memory]: invalid quantity")));
  EXPECT_THAT(ParseResourceList({{"cpu", "-1"}}, "spec.resources"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.resources[cpu]: must not be negative")));
}

// As the API server: extended resources in whole units only; native ones may be fractions.
TEST(ResourcesTest, ExtendedResourcesAreWholeNumbers) {
  EXPECT_THAT(ParseResourceList({{"nvidia.com/gpu", "1.5"}}, "requests"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("requests[nvidia.com/gpu]: must be a whole number, got "
                                 "\"1.5\"")));
  EXPECT_THAT(ParseResourceList({{"vpc.amazonaws.com/efa", "100m"}}, "requests"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("whole number")));
  EXPECT_THAT(ParseResourceList({{"nvidia.com/gpu", "2000m"}, {"cpu", "1.5"},
                                 {"memory", "1.5Gi"}, {"hugepages-2Mi", "1.5Gi"}},
                                "requests"),
              IsOk());
  EXPECT_TRUE(IsExtendedResourceName("nvidia.com/gpu"));
  EXPECT_FALSE(IsExtendedResourceName("cpu"));
  EXPECT_FALSE(IsExtendedResourceName("kubernetes.io/something"));
}

// The API server's rule for resources that cannot be overcommitted (extended resources,
// hugepages): a request needs a limit, and the two must be equal. cpu and memory may differ.
TEST(ResourcesTest, NonOvercommittableRequestsNeedAnEqualLimit) {
  const std::string field = "spec.containers[0].resources.limits";
  EXPECT_EQ(NonOvercommitLimitProblem({{"cpu", "4"}, {"nvidia.com/gpu", "8"}},
                                      {{"cpu", "8"}, {"nvidia.com/gpu", "8"}}, field),
            "");
  EXPECT_EQ(NonOvercommitLimitProblem({}, {{"nvidia.com/gpu", "8"}}, field), "");
  EXPECT_EQ(NonOvercommitLimitProblem({{"vpc.amazonaws.com/efa", "4"}}, {}, field),
            "spec.containers[0].resources.limits[vpc.amazonaws.com/efa]: must be set, equal to "
            "the request (\"4\"): the API server refuses a pod that requests "
            "vpc.amazonaws.com/efa without an equal limit (it cannot be overcommitted)");
  EXPECT_EQ(NonOvercommitLimitProblem({{"nvidia.com/gpu", "4"}}, {{"nvidia.com/gpu", "8"}}, field),
            "spec.containers[0].resources.limits[nvidia.com/gpu]: must equal the request "
            "(\"4\"), got \"8\": the API server refuses a pod whose nvidia.com/gpu request and "
            "limit differ (it cannot be overcommitted)");
  EXPECT_EQ(NonOvercommitLimitProblem({{"hugepages-2Mi", "1Gi"}}, {{"hugepages-2Mi", "1024Mi"}},
                                      field),
            "");  // equal amounts, written differently
  EXPECT_NE(NonOvercommitLimitProblem({{"hugepages-1Gi", "2Gi"}}, {}, field), "");
}

TEST(ResourcesTest, ArithmeticAndFit) {
  ResourceList free{{"cpu", 4000}, {"nvidia.com/gpu", 8}};
  ResourceList pod{{"cpu", 1000}, {"nvidia.com/gpu", 2}};
  EXPECT_TRUE(FitsIn(Scaled(pod, 4), free));
  EXPECT_FALSE(FitsIn(Scaled(pod, 5), free));
  SubtractFrom(free, pod);
  EXPECT_EQ(free.at("nvidia.com/gpu"), 6);
  AddTo(free, pod);
  EXPECT_EQ(free.at("cpu"), 4000);
  EXPECT_FALSE(FitsIn({{"vpc.amazonaws.com/efa", 1}}, free));
  EXPECT_TRUE(FitsIn({{"vpc.amazonaws.com/efa", 0}}, free));
}

// resourcehelper's rule: containers plus sidecars, and at least the largest init step, each
// init container beside the sidecars started before it (the sidecar after it does not count).
TEST(ResourcesTest, PodResourceSumCombinesContainersSidecarsAndInitSteps) {
  PodResourceSum sum;
  sum.AddSidecar({{"cpu", 1000}});
  sum.AddInit({{"cpu", 8000}, {"memory", 1 << 20}});  // beside the first sidecar: 9 cpu
  sum.AddSidecar({{"cpu", 500}});
  sum.AddContainer({{"cpu", 4000}, {"nvidia.com/gpu", 8}});
  sum.AddContainer({{"cpu", 1000}});
  // Containers 5 + sidecars 1.5 = 6.5 cpu, below the init step's 9; memory only at init.
  EXPECT_EQ(std::move(sum).Total(),
            (ResourceList{{"cpu", 9000}, {"memory", 1 << 20}, {"nvidia.com/gpu", 8}}));
  PodResourceSum plain;
  plain.AddContainer({{"cpu", 2000}});
  plain.AddSidecar({{"cpu", 1000}});
  plain.AddInit({{"cpu", 2500}});  // 2.5 + 1 = 3.5 > 2 + 1
  EXPECT_EQ(std::move(plain).Total(), (ResourceList{{"cpu", 3500}}));
}

TEST(ResourcesTest, FormatsForHumans) {
  EXPECT_EQ(FormatResources({{"cpu", 4500}, {"memory", int64_t{64} << 30}, {"nvidia.com/gpu", 8}}),
            "cpu=4500m, memory=64Gi, nvidia.com/gpu=8");
  // Devices are counted, hugepages are bytes (audit 2026-11-30: "1k nvidia.com/gpu",
  // "1073741824k hugepages-2Mi").
  EXPECT_EQ(FormatQuantity("nvidia.com/gpu", 1000), "1000");
  EXPECT_EQ(FormatQuantity("vpc.amazonaws.com/efa", 10000), "10000");
  EXPECT_EQ(FormatQuantity("hugepages-2Mi", int64_t{1000} << 30), "1000Gi");
  EXPECT_EQ(FormatQuantity("pods", 1000), "1k");
}

// A placement explanation formats whatever a request asked for, unchecked amounts included
// (found by the sanitizer build on a request of INT64_MAX bytes): past what a Quantity holds,
// the amount is printed as the plain integer, exact.
TEST(ResourcesTest, FormatsAmountsTooLargeForAQuantityAsIntegers) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(FormatResources({{"cpu", kMax}, {"memory", kMax}, {"nvidia.com/gpu", kMax}}),
            "cpu=9223372036854775807m, memory=9223372036854775807, "
            "nvidia.com/gpu=9223372036854775807");
  EXPECT_EQ(FormatQuantity("memory", kMax / 1000), "9223372036854775");
  EXPECT_EQ(FormatQuantity("memory", int64_t{8} << 50), "8Pi");
  EXPECT_EQ(FormatQuantity("nvidia.com/gpu", -8), "-8");
}

// Memory in bytes reaches far beyond cpu in millicores: 10 PiB parses, 10 peta-cores do not.
TEST(ResourcesTest, CanonicalAmountsOfClusterSizedQuantities) {
  ASSERT_OK_AND_ASSIGN(ResourceList list,
                       ParseResourceList({{"memory", "20480000Gi"}, {"cpu", "9P"}}, "quota"));
  EXPECT_EQ(list["memory"], int64_t{20480000} << 30);
  EXPECT_EQ(list["cpu"], int64_t{9} * 1000 * 1000 * 1000 * 1000 * 1000 * 1000);
  EXPECT_THAT(ParseResourceList({{"cpu", "10P"}}, "quota"),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("quota[cpu]: cpu quantity")));
}

}  // namespace
}  // namespace phalanx
