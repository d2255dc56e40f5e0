// Quota accounting against Kueue's documented borrowing and lending examples
// (site/content/en/docs/concepts/cluster_queue.md: "Borrowing example", "BorrowingLimit",
// "LendingLimit"). Amounts are canonical units; the docs' CPU counts are used as they are, since
// only their ratios matter to the accounting.
#include "operator/admission/quota.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/admission/model.h"

namespace phalanx::admission {
namespace {

using ::testing::HasSubstr;

struct QueueSpec {
  std::string name;
  int64_t nominal;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
  int64_t usage;
  std::string cohort = "team-ab";
};

Snapshot CpuSnapshot(const std::vector<QueueSpec>& queues) {
  Snapshot snapshot;
  snapshot.flavors.push_back({.name = "default-flavor"});
  for (const QueueSpec& q : queues) {
    ClusterQueue cq{.name = q.name, .cohort = q.cohort};
    cq.resource_groups.push_back(
        {{"cpu"}, {{"default-flavor", {{"cpu", q.nominal, q.borrowing_limit, q.lending_limit}}}}});
    snapshot.cluster_queues.push_back(cq);
  }
  return snapshot;
}

struct AvailableCase {
  std::string name;
  std::vector<QueueSpec> queues;
  std::vector<int64_t> want_available;  // per queue, after usage is charged
};

class AvailableTest : public ::testing::TestWithParam<AvailableCase> {};

TEST_P(AvailableTest, MatchesKueue) {
  const AvailableCase& c = GetParam();
  Snapshot snapshot = CpuSnapshot(c.queues);
  Model model = CompileModel(snapshot);
  ASSERT_TRUE(model.errors.empty()) << model.errors[0].message;
  QuotaTree quota(model);
  FrId cpu = model.fr_ids.at({0, "cpu"});
  for (size_t i = 0; i < c.queues.size(); ++i) quota.Add(i, {{cpu, c.queues[i].usage}}, +1);
  for (size_t i = 0; i < c.queues.size(); ++i) {
    EXPECT_EQ(quota.Available(i, cpu), c.want_available[i]) << c.queues[i].name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    KueueDocs, AvailableTest,
    ::testing::Values(
        // "If team-b-cq has no admitted Workloads, then team-a-cq can admit Workloads with
        // resources adding up to 12+9=21 CPUs."
        AvailableCase{"BorrowingExampleIdleCohort",
                      {{"team-a-cq", 9, {}, {}, 0}, {"team-b-cq", 12, {}, {}, 0}},
                      {21, 21}},
        AvailableCase{"BorrowingExampleTeamBUsesAll",
                      {{"team-a-cq", 9, {}, {}, 0}, {"team-b-cq", 12, {}, {}, 12}},
                      {9, 9}},
        AvailableCase{"BorrowingExampleTeamABorrowsThree",
                      {{"team-a-cq", 9, {}, {}, 12}, {"team-b-cq", 12, {}, {}, 0}},
                      {9, 9}},
        // BorrowingLimit: "team-a-cq can admit Workloads with resources adding up to 9+1=10
        // CPUs"; team-b-cq (no limit) can use 12+9.
        AvailableCase{"BorrowingLimitExample",
                      {{"team-a-cq", 9, 1, {}, 0}, {"team-b-cq", 12, {}, {}, 0}},
                      {10, 21}},
        AvailableCase{"BorrowingLimitReached",
                      {{"team-a-cq", 9, 1, {}, 10}, {"team-b-cq", 12, {}, {}, 0}},
                      {0, 11}},
        // LendingLimit: team-b-cq lends at most 1, so team-a-cq can use 9+1=10 while team-b
        // keeps 11 guaranteed; team-b-cq can use 9+12.
        AvailableCase{"LendingLimitExample",
                      {{"team-a-cq", 9, {}, {}, 0}, {"team-b-cq", 12, {}, 1, 0}},
                      {10, 21}},
        AvailableCase{"LendingLimitLentOut",
                      {{"team-a-cq", 9, {}, {}, 10}, {"team-b-cq", 12, {}, 1, 0}},
                      {0, 11}},
        // team-b using 12 eats its own lendable 1: nothing is left for team-a to borrow.
        AvailableCase{"LendingLimitLenderAboveGuarantee",
                      {{"team-a-cq", 9, {}, {}, 0}, {"team-b-cq", 12, {}, 1, 12}},
                      {9, 9}},
        AvailableCase{"NoCohort",
                      {{"solo", 8, {}, {}, 3, ""}, {"team-b-cq", 12, {}, {}, 0}},
                      {5, 12}},
        AvailableCase{"ZeroNominalBorrowsEverything",
                      {{"team-a-cq", 0, {}, {}, 0}, {"team-b-cq", 12, {}, {}, 4}},
                      {8, 8}}),
    [](const auto& info) { return info.param.name; });

TEST(QuotaTest, DominantResourceShareIsBorrowedOverLendableOverWeight) {
  Snapshot snapshot = CpuSnapshot({{"a", 10, {}, {}, 0}, {"b", 30, {}, {}, 0}});
  snapshot.cluster_queues[1].fair_sharing_weight = 2;
  Model model = CompileModel(snapshot);
  QuotaTree quota(model);
  FrId cpu = model.fr_ids.at({0, "cpu"});
  quota.Add(0, {{cpu, 20}}, +1);  // borrows 10 of a lendable 40
  quota.Add(1, {{cpu, 20}}, +1);  // within nominal
  EXPECT_DOUBLE_EQ(quota.Share(0, {}, 0), 0.25);
  EXPECT_DOUBLE_EQ(quota.Share(1, {}, 0), 0);
  // b with 20 more borrows 10 -> 0.25, halved by its weight.
  EXPECT_DOUBLE_EQ(quota.Share(1, {{cpu, 20}}, +1), 0.125);
  EXPECT_DOUBLE_EQ(quota.Share(0, {{cpu, 10}}, -1), 0);
  snapshot.cluster_queues[0].fair_sharing_weight = 0;
  Model zero_weight = CompileModel(snapshot);
  QuotaTree quota0(zero_weight);
  quota0.Add(0, {{cpu, 11}}, +1);
  EXPECT_EQ(quota0.Share(0, {}, 0), std::numeric_limits<double>::infinity());
}

TEST(QuotaTest, DescribeSaysWhatIsLeftAndWhy) {
  // cpu in millicores, as the canonical unit is.
  Snapshot snapshot = CpuSnapshot({{"a", 9000, 1000, {}, 0}, {"b", 12000, {}, {}, 0}});
  Model model = CompileModel(snapshot);
  QuotaTree quota(model);
  FrId cpu = model.fr_ids.at({0, "cpu"});
  quota.Add(0, {{cpu, 4000}}, +1);
  EXPECT_THAT(quota.Describe(0, cpu, 8000),
              HasSubstr("flavor default-flavor: needs 8 cpu, 6 available (nominal 9, 4 in use, "
                        "cohort team-ab has 17 unused, borrowing limit 1)"));
}

// A queue whose nominal quota others of its cohort have borrowed is told so, and, with
// reclaimWithinCohort: Never, that it waits for them instead of taking it back (audit
// 2026-11-30: "0 available (nominal 32, 0 in use ...)" said nothing of why).
TEST(QuotaTest, DescribeSaysWhenItsNominalQuotaIsLent) {
  Snapshot snapshot = CpuSnapshot({{"lender", 8000, {}, {}, 0}, {"borrower", 4000, {}, {}, 0}});
  Model model = CompileModel(snapshot);
  QuotaTree quota(model);
  FrId cpu = model.fr_ids.at({0, "cpu"});
  quota.Add(0, {{cpu, 2000}}, +1);
  quota.Add(1, {{cpu, 9000}}, +1);  // borrows 5 of the lender's 6 unused
  EXPECT_EQ(quota.Describe(0, cpu, 4000),
            "flavor default-flavor: needs 4 cpu, 1 available (nominal 8, 2 in use, cohort "
            "team-ab has 1 unused; 5 of its nominal quota is lent to other ClusterTrainingQueues "
            "of the cohort, and its reclaimWithinCohort: Never waits for them to finish instead "
            "of taking it back)");
  snapshot.cluster_queues[0].preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kAny;
  Model reclaims = CompileModel(snapshot);
  QuotaTree quota2(reclaims);
  quota2.Add(0, {{cpu, 2000}}, +1);
  quota2.Add(1, {{cpu, 9000}}, +1);
  EXPECT_THAT(quota2.Describe(0, cpu, 4000),
              ::testing::EndsWith("5 of its nominal quota is lent to other ClusterTrainingQueues "
                                  "of the cohort)"));
}

// Kueue says "request > maximum capacity" for a workload no amount of waiting admits; the
// message says the same, with where the maximum comes from.
TEST(QuotaTest, DescribeSaysWhenANeedCanNeverFit) {
  Snapshot snapshot = CpuSnapshot({{"a", 9000, 1000, {}, 0},
                                   {"b", 12000, {}, {}, 0},
                                   {"c", 5000, {}, {}, 0, ""},
                                   {"d", 4000, {}, {}, 0, "solo"}});
  Model model = CompileModel(snapshot);
  ASSERT_TRUE(model.errors.empty()) << model.errors[0].message;
  QuotaTree quota(model);
  FrId cpu = model.fr_ids.at({0, "cpu"});
  quota.Add(1, {{cpu, 20000}}, +1);  // usage does not change what could ever fit
  EXPECT_EQ(quota.Maximum(0, cpu), 10000);
  EXPECT_EQ(quota.Maximum(1, cpu), 21000);
  EXPECT_EQ(quota.Maximum(2, cpu), 5000);
  EXPECT_EQ(quota.Maximum(3, cpu), 4000);
  EXPECT_EQ(quota.Describe(0, cpu, 11000),
            "flavor default-flavor: needs 11 cpu, more than the queue can ever "
            "use (10: nominal 9 + borrowing limit 1)");
  EXPECT_EQ(quota.Describe(1, cpu, 64000),
            "flavor default-flavor: needs 64 cpu, more than the queue can ever use "
            "(21: nominal 12 + 9 the cohort team-ab can lend)");
  EXPECT_EQ(quota.Describe(2, cpu, 6000),
            "flavor default-flavor: needs 6 cpu, more than the queue can ever use "
            "(5: nominal 5, no cohort to borrow from)");
  EXPECT_EQ(quota.Describe(3, cpu, 6000),
            "flavor default-flavor: needs 6 cpu, more than the queue can ever use "
            "(4: nominal 4, cohort solo lends it nothing)");
  // Exactly the maximum can fit once the others are done: the usual message.
  EXPECT_THAT(quota.Describe(1, cpu, 21000), HasSubstr("needs 21 cpu, 1 available (nominal 12"));
}

}  // namespace
}  // namespace phalanx::admission
