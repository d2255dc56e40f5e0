#include "sim/random.h"

#include <cmath>

#include "gtest/gtest.h"

namespace phalanx::sim {
namespace {

TEST(RngTest, SameSeedSameSequenceDifferentSeedDifferent) {
  Rng a(7), b(7), c(8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs = differs || x != c.Next();
  }
  EXPECT_TRUE(differs);
}

TEST(RngTest, KnownFirstValueIsPortable) {
  // Pinned so that a change to the generator (which would change every trace) is noticed.
  Rng rng(1);
  const uint64_t first = rng.Next();
  Rng again(1);
  EXPECT_EQ(first, again.Next());
  uint64_t state = 1;
  EXPECT_EQ(SplitMix64(state), 0x910a2dec89025cc1ULL);
}

TEST(RngTest, DistributionsStayInRange) {
  Rng rng(3);
  double log_sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const int64_t k = rng.UniformInt(-3, 3);
    ASSERT_GE(k, -3);
    ASSERT_LE(k, 3);
    const double l = rng.LogUniform(10, 1000);
    ASSERT_GE(l, 10.0);
    ASSERT_LT(l, 1000.0);
    log_sum += std::log10(l);
    ASSERT_GE(rng.Exponential(5), 0.0);
  }
  // Log-uniform on [10, 1000): log10 is uniform on [1, 3), mean 2.
  EXPECT_NEAR(log_sum / 10000, 2.0, 0.05);
}

TEST(RngTest, WeightedIndexFollowsWeights) {
  Rng rng(5);
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 30000; ++i) ++counts[rng.WeightedIndex({1, 2, 0})];
  EXPECT_EQ(counts[2], 0);
  EXPECT_NEAR(counts[1] / 30000.0, 2.0 / 3, 0.02);
}

}  // namespace
}  // namespace phalanx::sim
