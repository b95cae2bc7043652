#include "harness/plan/paired.hpp"

#include <cmath>
#include <vector>

namespace gauntlet::harness {

std::optional<int> seeds_to_separate(double mean, double sd) {
  if (mean == 0 || !std::isfinite(mean) || !std::isfinite(sd)) return std::nullopt;
  if (sd == 0) return 2;
  // |mean| / sd grows like sqrt(n) / t: a first guess from the normal
  // quantile, then walk to where the t interval clears 0.
  const double ratio = sd / std::abs(mean);
  const double guess = std::pow(1.96 * ratio, 2);
  if (guess > kMostSeeds) return std::nullopt;
  int n = std::max(2, static_cast<int>(guess));
  while (n > 2 && student_t_quantile(0.975, n - 2) * ratio < std::sqrt(static_cast<double>(n - 1))) --n;
  while (student_t_quantile(0.975, n - 1) * ratio >= std::sqrt(static_cast<double>(n))) {
    if (++n > kMostSeeds) return std::nullopt;
  }
  return n;
}

PairedComparison compare_paired(const std::map<std::uint64_t, double>& a, const std::map<std::uint64_t, double>& b) {
  std::vector<double> differences;
  PairedComparison out;
  for (const auto& [seed, cost_a] : a) {
    const auto other = b.find(seed);
    if (other == b.end()) continue;
    differences.push_back(other->second - cost_a);
    out.b_costlier += other->second > cost_a ? 1 : 0;
  }
  out.seeds = static_cast<int>(differences.size());
  out.difference = estimate_mean(differences);
  if (out.seeds < 2) return out;
  const double half = out.difference.half_width;
  out.separated = std::isfinite(half) && std::abs(out.difference.mean) > half;
  // The spread back from the half width: half = t x sd / sqrt(n).
  const double sd = half * std::sqrt(static_cast<double>(out.seeds)) / student_t_quantile(0.975, out.seeds - 1);
  out.seeds_needed = seeds_to_separate(out.difference.mean, sd);
  return out;
}

}  // namespace gauntlet::harness
