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

// Regularized lower incomplete gamma P(a, x): its series below a + 1, the
// continued fraction of the upper part (modified Lentz) above.
double lower_gamma_regularized(double a, double x) {
  if (x <= 0) return 0;
  const double log_prefix = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 1000 && std::abs(term) > std::abs(sum) * 1e-15; ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return sum * std::exp(log_prefix);
  }
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a, c = 1 / kTiny, d = 1 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < 1e-15) break;
  }
  return 1 - std::exp(log_prefix) * h;
}

}  // namespace

double gamma_quantile(double p, double shape) {
  double low = 0, high = std::max(1.0, shape);
  while (lower_gamma_regularized(shape, high) < p) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = (low + high) / 2;
    (lower_gamma_regularized(shape, mid) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

Interval poisson_rate_interval(double count, double exposure) {
  Interval interval;
  interval.n = static_cast<int>(count);
  if (!(exposure > 0)) return interval;
  interval.value = count / exposure;
  interval.low = count > 0 ? gamma_quantile(0.025, count) / exposure : 0;
  interval.high = gamma_quantile(0.975, count + 1) / exposure;
  return interval;
}

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
