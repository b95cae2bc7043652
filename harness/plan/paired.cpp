#include "harness/plan/paired.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gauntlet::harness {
namespace {

// Each seed's block differences b - a, consecutive blocks summed into
// `per_seed`; seeds whose blocks do not split so are left out.
std::vector<std::vector<double>> block_differences(const std::map<std::uint64_t, std::vector<double>>& a,
                                                   const std::map<std::uint64_t, std::vector<double>>& b,
                                                   int per_seed) {
  std::vector<std::vector<double>> out;
  const auto k = static_cast<std::size_t>(per_seed);
  for (const auto& [seed, blocks_a] : a) {
    const auto other = b.find(seed);
    if (other == b.end() || other->second.size() != blocks_a.size() || blocks_a.size() < k || blocks_a.size() % k != 0)
      continue;
    const std::size_t group = blocks_a.size() / k;
    std::vector<double> d(k, 0.0);
    for (std::size_t i = 0; i < blocks_a.size(); ++i) d[i / group] += other->second[i] - blocks_a[i];
    out.push_back(std::move(d));
  }
  return out;
}

// Lag-1 autocorrelation of consecutive blocks within each seed, about the
// mean over every block: a seed whose blocks all sit on one side of it
// (something that lasts the whole run) counts as correlated too.
double lag1_autocorrelation(const std::vector<std::vector<double>>& by_seed, double mean) {
  double products = 0, squares = 0;
  for (const auto& d : by_seed)
    for (std::size_t i = 0; i < d.size(); ++i) {
      squares += (d[i] - mean) * (d[i] - mean);
      if (i + 1 < d.size()) products += (d[i] - mean) * (d[i + 1] - mean);
    }
  return squares > 0 ? products / squares : 0;
}

}  // namespace

std::optional<BlockComparison> compare_blocks(const std::map<std::uint64_t, std::vector<double>>& a,
                                              const std::map<std::uint64_t, std::vector<double>>& b, int per_seed) {
  for (int k = per_seed; k >= 2; k /= 2) {
    const auto by_seed = block_differences(a, b, k);
    if (by_seed.empty()) return std::nullopt;
    std::vector<double> all;
    for (const auto& d : by_seed) all.insert(all.end(), d.begin(), d.end());
    const Estimate e = estimate_mean(all);
    BlockComparison out;
    out.lag1 = lag1_autocorrelation(by_seed, e.mean);
    if (out.lag1 > kMaxBlockLag1) continue;
    out.seeds = static_cast<int>(by_seed.size());
    out.per_seed = k;
    out.blocks = static_cast<int>(all.size());
    // A whole run is k blocks: the interval of the mean block scaled by k.
    out.difference = {e.n, e.mean * k, e.half_width * k};
    out.b_costlier = static_cast<int>(std::count_if(all.begin(), all.end(), [](double d) { return d > 0; }));
    out.separated =
        std::isfinite(out.difference.half_width) && std::abs(out.difference.mean) > out.difference.half_width;
    return out;
  }
  return std::nullopt;
}

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
  out.seeds_separated = std::isfinite(half) && std::abs(out.difference.mean) > half;
  out.separated = out.seeds_separated;
  // The spread back from the half width: half = t x sd / sqrt(n).
  const double sd = half * std::sqrt(static_cast<double>(out.seeds)) / student_t_quantile(0.975, out.seeds - 1);
  out.seeds_needed = seeds_to_separate(out.difference.mean, sd);
  return out;
}

}  // namespace gauntlet::harness
