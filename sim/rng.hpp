#pragma once
// One scenario seed derives every random stream. A stream is named ("ecmp",
// "faults/poisson", ...) so adding a new consumer never shifts the numbers an
// existing one draws, and the same seed gives the same run bit for bit.
#include <cstdint>
#include <random>
#include <string_view>

namespace gauntlet::sim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  std::uint64_t next() { return engine_(); }
  // Uniform in [0, 1) from the top 53 bits; written out rather than using
  // std::uniform_real_distribution, whose output differs between libraries.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double exponential(double mean);
  std::uint64_t below(std::uint64_t bound);  // uniform in [0, bound), bound > 0
  // Successes in n trials of probability p: counted one by one while the
  // mean of the smaller tail is under 30, else the normal approximation
  // (rounded, within [0, n]); written out for the same reason as uniform().
  std::uint64_t binomial(std::uint64_t n, double p);

 private:
  std::mt19937_64 engine_;
};

class RngStreams {
 public:
  explicit RngStreams(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  Rng stream(std::string_view name, std::uint64_t run = 0) const;

 private:
  std::uint64_t seed_;
};

// Stable 64-bit mix of a seed and a name (FNV-1a then splitmix64 finalizer).
std::uint64_t mix_seed(std::uint64_t seed, std::string_view name, std::uint64_t run = 0);
std::uint64_t splitmix64(std::uint64_t x);

}  // namespace gauntlet::sim
