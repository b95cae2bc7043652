#include "harness/report/stats.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace gauntlet::harness {
namespace {

// Continued fraction of the regularized incomplete beta function, evaluated
// with the modified Lentz method; converges for x < (a+1)/(a+b+2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double result = d;
  for (int m = 1; m <= 500; ++m) {
    const double even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 + even * d;
    c = 1 + even / c;
    if (std::abs(d) < kTiny) d = kTiny;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    result *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + odd * d;
    c = 1 + odd / c;
    if (std::abs(d) < kTiny) d = kTiny;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    result *= step;
    if (std::abs(step - 1) < 1e-15) break;
  }
  return result;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double df) {
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

}  // namespace

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) throw std::invalid_argument("student_t_quantile: need 0 < p < 1 and df > 0");
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

Estimate estimate_mean(const std::vector<double>& values) {
  Estimate e;
  e.n = static_cast<int>(values.size());
  if (e.n == 0) {
    e.mean = std::numeric_limits<double>::quiet_NaN();
    e.half_width = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  double sum = 0;
  for (double v : values) sum += v;
  e.mean = sum / e.n;
  if (e.n < 2) {
    e.half_width = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  double squares = 0;
  for (double v : values) squares += (v - e.mean) * (v - e.mean);
  const double stddev = std::sqrt(squares / (e.n - 1));
  e.half_width = student_t_quantile(0.975, e.n - 1) * stddev / std::sqrt(static_cast<double>(e.n));
  return e;
}

}  // namespace gauntlet::harness
