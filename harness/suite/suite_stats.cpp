#include "harness/suite/suite_stats.hpp"

#include <algorithm>
#include <cmath>

#include "sim/rng.hpp"

namespace gauntlet::harness {
namespace {

constexpr double kZ95 = 1.959963984540054;  // the normal's 97.5% quantile

Interval percentile_interval(double point, std::vector<double> resampled, int n) {
  std::sort(resampled.begin(), resampled.end());
  Interval interval;
  interval.value = point;
  interval.low = quantile(resampled, 0.025);
  interval.high = quantile(resampled, 0.975);
  interval.n = n;
  return interval;
}

}  // namespace

Interval wilson_interval(double successes, int trials) {
  Interval interval;
  interval.n = trials;
  if (trials <= 0) return interval;
  const double n = trials, p = successes / n, z2 = kZ95 * kZ95;
  const double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = kZ95 * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
  interval.value = p;
  // Rounding may put the centre a hair off p at 0 or 1; the interval holds p.
  interval.low = std::min(p, std::max(0.0, centre - half));
  interval.high = std::max(p, std::min(1.0, centre + half));
  return interval;
}

double quantile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = p * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (position - static_cast<double>(below));
}

Interval bootstrap_quantile(const std::vector<double>& values, double p) {
  if (values.empty()) return {};
  sim::Rng rng(kBootstrapSeed);
  std::vector<double> resampled, sample(values.size());
  resampled.reserve(kBootstrapResamples);
  for (int r = 0; r < kBootstrapResamples; ++r) {
    for (double& v : sample) v = values[rng.below(values.size())];
    resampled.push_back(quantile(sample, p));
  }
  return percentile_interval(quantile(values, p), std::move(resampled), static_cast<int>(values.size()));
}

Interval bootstrap_ratio(const std::vector<double>& numerators, const std::vector<double>& denominators) {
  const std::size_t n = std::min(numerators.size(), denominators.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < n; ++i) num += numerators[i], den += denominators[i];
  if (n == 0 || den <= 0) return {};
  sim::Rng rng(kBootstrapSeed);
  std::vector<double> resampled;
  resampled.reserve(kBootstrapResamples);
  for (int r = 0; r < kBootstrapResamples; ++r) {
    double a = 0, b = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k = rng.below(n);
      a += numerators[k];
      b += denominators[k];
    }
    resampled.push_back(b > 0 ? a / b : 0);
  }
  return percentile_interval(num / den, std::move(resampled), static_cast<int>(n));
}

double mcnemar_exact_p(int b, int c) {
  const int n = b + c;
  if (n == 0) return 1;
  const int k = std::min(b, c);
  // P(X <= k) for X ~ Binomial(n, 1/2), summed in logs to stay finite for large n.
  double tail = 0;
  for (int i = 0; i <= k; ++i)
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return std::min(1.0, 2 * tail);
}

}  // namespace gauntlet::harness
