#pragma once
// Confidence intervals over seeds: mean ± t(0.975, n-1) * s / sqrt(n).
#include <vector>

namespace gauntlet::harness {

struct Estimate {
  int n = 0;
  double mean = 0;
  double half_width = 0;  // of the 95% interval; NaN when n < 2
};

Estimate estimate_mean(const std::vector<double>& values);

// Quantile p (0 < p < 1) of Student's t distribution with df > 0 degrees of
// freedom, e.g. student_t_quantile(0.975, 4) = 2.776.
double student_t_quantile(double p, double df);

}  // namespace gauntlet::harness
