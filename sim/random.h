// Deterministic pseudo-random numbers for the simulator's trace generator and failure model.
//
//   Rng rng(/*seed=*/42);
//   double duration = rng.LogUniform(300, 86400);   // seconds
//   int size = rng.WeightedIndex({0.5, 0.3, 0.2});
//
// Why not <random>: std:: distributions are implementation-defined, so the same seed gives
// different traces on different standard libraries. xoshiro256** (seeded through splitmix64)
// and the distributions below are fully specified here, so a seed means the same trace anywhere.
#pragma once

#include <cstdint>
#include <vector>

namespace phalanx::sim {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t Next();                             // xoshiro256**
  double Uniform();                            // [0, 1), 53 random bits
  double Uniform(double lo, double hi);        // [lo, hi)
  int64_t UniformInt(int64_t lo, int64_t hi);  // [lo, hi], inclusive
  double LogUniform(double lo, double hi);     // log(x) uniform in [log lo, log hi)
  double Exponential(double mean);             // inverse-CDF sampling
  bool Bernoulli(double p);
  // Index i with probability weights[i] / sum(weights).
  int WeightedIndex(const std::vector<double>& weights);

 private:
  uint64_t s_[4];
};

// One step of splitmix64: a good 64-bit mix, also used to derive independent child seeds.
uint64_t SplitMix64(uint64_t& state);

}  // namespace phalanx::sim
