#include "sim/rng.hpp"

#include <algorithm>
#include <cmath>

namespace gauntlet::sim {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t mix_seed(std::uint64_t seed, std::string_view name, std::uint64_t run) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return splitmix64(splitmix64(seed ^ h) + run);
}

double Rng::exponential(double mean) { return -mean * std::log1p(-uniform()); }

std::uint64_t Rng::below(std::uint64_t bound) {
  // Rejection keeps the draw unbiased for any bound.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  std::uint64_t x;
  do x = engine_();
  while (x >= limit);
  return x % bound;
}

std::uint64_t Rng::binomial(std::uint64_t n, double p) {
  if (n == 0 || p <= 0) return 0;
  if (p >= 1) return n;
  if (p > 0.5) return n - binomial(n, 1 - p);
  const double mean = static_cast<double>(n) * p;
  if (mean < 30) {
    // Inversion: the gaps between successes are geometric.
    const double log_q = std::log1p(-p);
    std::uint64_t successes = 0;
    double trial = 0;
    for (;;) {
      trial += std::floor(std::log1p(-uniform()) / log_q) + 1;
      if (trial > static_cast<double>(n)) return successes;
      ++successes;
    }
  }
  // Box-Muller from two uniforms.
  const double u1 = 1 - uniform(), u2 = uniform();
  const double normal = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  const double draw = std::round(mean + normal * std::sqrt(mean * (1 - p)));
  return static_cast<std::uint64_t>(std::clamp(draw, 0.0, static_cast<double>(n)));
}

Rng RngStreams::stream(std::string_view name, std::uint64_t run) const { return Rng(mix_seed(seed_, name, run)); }

}  // namespace gauntlet::sim
