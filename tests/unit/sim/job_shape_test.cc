// The one shape validator (sim/job_shape.h): each CRD rule, in the CRD's words.
#include "sim/job_shape.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::sim {
namespace {

using ::testing::HasSubstr;

constexpr char kClique[] = "nvidia.com/gpu.clique";
constexpr char kLayer1[] = "topology.k8s.aws/network-node-layer-1";
constexpr char kLayer3[] = "topology.k8s.aws/network-node-layer-3";

std::string Problem(const JobShape& shape, const std::vector<std::string>& levels = {}) {
  absl::Status status = ValidateJobShape(shape, kTrainingJobFields, levels);
  EXPECT_TRUE(status.ok() || absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

JobShape Elastic(int32_t replicas, int32_t min, int32_t max, int32_t step) {
  return JobShape{.replicas = replicas, .elastic = placement::ElasticRange{min, max, step}};
}

JobShape Grouped(JobShape shape, int32_t size, std::string level = kClique) {
  shape.group_size = size;
  shape.group_level = std::move(level);
  return shape;
}

TEST(JobShapeTest, AcceptsWellFormedShapes) {
  EXPECT_OK(ValidateJobShape(JobShape{.replicas = 1}, kTrainingJobFields));
  EXPECT_OK(ValidateJobShape(Elastic(8, 4, 8, 4), kTrainingJobFields));
  EXPECT_OK(ValidateJobShape(Grouped(Elastic(16, 8, 16, 8), 4), kTrainingJobFields));
  EXPECT_OK(ValidateJobShape(Grouped(JobShape{.replicas = 32}, 16), kTrainingJobFields));
  JobShape levels{.replicas = 4, .required_level = kLayer1, .preferred_level = kLayer3};
  EXPECT_OK(ValidateJobShape(levels, kTrainingJobFields));
  levels.preferred_level = kClique;  // the NVLink domain is finer than every network layer
  EXPECT_OK(ValidateJobShape(levels, kTrainingJobFields));
}

TEST(JobShapeTest, SizesHaveTheCrdBounds) {
  EXPECT_THAT(Problem(JobShape{.replicas = 0}),
              HasSubstr("spec.replicas should be greater than or equal to 1, got 0"));
  EXPECT_THAT(Problem(JobShape{.replicas = 65537}),
              HasSubstr("spec.replicas should be less than or equal to 65536"));
  EXPECT_THAT(Problem(Elastic(8, 2, 8, 0)),
              HasSubstr("spec.elastic.step should be greater than or equal to 1"));
  EXPECT_THAT(Problem(Grouped(JobShape{.replicas = 8}, 0)),
              HasSubstr("spec.topology.groupSize should be greater than or equal to 1"));
}

TEST(JobShapeTest, ElasticRangeRules) {
  EXPECT_THAT(Problem(Elastic(8, 16, 4, 1)),
              HasSubstr("spec.elastic.minReplicas must not exceed spec.elastic.maxReplicas"));
  EXPECT_THAT(Problem(Elastic(8, 3, 8, 2)),
              HasSubstr("spec.elastic.minReplicas and spec.elastic.maxReplicas must be "
                        "multiples of spec.elastic.step"));
  EXPECT_THAT(Problem(Elastic(16, 4, 8, 1)),
              HasSubstr("spec.replicas must be within [spec.elastic.minReplicas, "
                        "spec.elastic.maxReplicas]"));
  EXPECT_THAT(Problem(Elastic(6, 4, 8, 4)),
              HasSubstr("spec.replicas must be a multiple of spec.elastic.step"));
}

TEST(JobShapeTest, GroupRules) {
  EXPECT_THAT(Problem(Grouped(JobShape{.replicas = 6}, 4)),
              HasSubstr("spec.topology.groupSize must divide spec.replicas (4 does not divide 6)"));
  // The trace row: 4 pods elastic 2..4 step 2 in groups of 4 per clique.
  EXPECT_THAT(Problem(Grouped(Elastic(4, 2, 4, 2), 4)),
              HasSubstr("spec.topology.groupSize must divide spec.elastic.minReplicas, "
                        "spec.elastic.maxReplicas and spec.elastic.step (4 does not divide 2)"));
  JobShape size_only{.replicas = 8, .group_size = 4};
  EXPECT_THAT(Problem(size_only),
              HasSubstr("spec.topology.groupLevel is required when "
                        "spec.topology.groupSize is set"));
  JobShape level_only{.replicas = 8, .group_level = kClique};
  EXPECT_THAT(Problem(level_only),
              HasSubstr("spec.topology.groupSize is required when "
                        "spec.topology.groupLevel is set"));
}

TEST(JobShapeTest, PreferredLevelIsNeverCoarserThanRequired) {
  JobShape shape{.replicas = 4, .required_level = kLayer3, .preferred_level = kLayer1};
  EXPECT_THAT(Problem(shape), HasSubstr("spec.topology.preferred (" + std::string(kLayer1) +
                                        ") must not be coarser than spec.topology.required"));
  // With the topology's own levels, custom keys are ordered too; unknown keys are left alone.
  shape = JobShape{.replicas = 4, .required_level = "rack", .preferred_level = "row"};
  EXPECT_OK(ValidateJobShape(shape, kTrainingJobFields));
  EXPECT_THAT(Problem(shape, {"row", "rack"}), HasSubstr("must not be coarser"));
  EXPECT_OK(ValidateJobShape(shape, kTrainingJobFields, {"rack", "row"}));
  shape.preferred_level = "kubernetes.io/hostname";
  EXPECT_OK(ValidateJobShape(shape, kTrainingJobFields, {"rack", "row"}));
  // A network layer beyond the four that exist is not ranked either: the check against the
  // cluster's levels says it is no level, instead of this one calling layer-3 coarser.
  shape = JobShape{.replicas = 4,
                   .required_level = "topology.k8s.aws/network-node-layer-9",
                   .preferred_level = std::string(kLayer3)};
  EXPECT_OK(ValidateJobShape(shape, kTrainingJobFields));
}

TEST(JobShapeTest, TraceFieldNames) {
  absl::Status status = ValidateJobShape(Grouped(Elastic(4, 2, 4, 2), 4), kTraceJobFields);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("topology.groupSize must divide elastic.min, elastic.max and "
                        "elastic.step"));
}

}  // namespace
}  // namespace phalanx::sim
