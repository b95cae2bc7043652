#pragma once
// The intervals a suite's figures carry, over episodes:
//  - proportions (recall, precision, localization credit): Wilson score
//    intervals, which stay inside [0, 1] and are not empty at 0 or n;
//  - quantiles (latency p50/p95): percentile bootstrap over episodes, 2,000
//    resamples from a fixed seed, so the same records give the same interval;
//  - rates (false alerts per healthy hour): the exact Poisson (Garwood)
//    interval on the count over the hours, so none in 10 hours is [0, 0.37]
//    rather than nothing at all;
//  - paired comparisons of two detectors' detections on the same episodes:
//    McNemar's exact test (a two-sided binomial test on the discordant pairs).
#include <cstdint>
#include <optional>
#include <vector>

namespace gauntlet::harness {

struct Interval {
  std::optional<double> value;  // none: nothing to measure
  double low = 0;
  double high = 0;
  int n = 0;  // the denominator or sample size
};

// successes may be fractional (shared localization credit); 95% level.
Interval wilson_interval(double successes, int trials);

// Quantile p of the values (linear interpolation between order statistics).
double quantile(std::vector<double> values, double p);

inline constexpr int kBootstrapResamples = 2000;
inline constexpr std::uint64_t kBootstrapSeed = 0x5eed;

Interval bootstrap_quantile(const std::vector<double>& values, double p);

// count events in `exposure` (hours): the rate count / exposure.
Interval poisson_rate_interval(double count, double exposure);

// Quantile p of the gamma distribution with this shape and scale 1.
double gamma_quantile(double p, double shape);

// Two-sided exact p-value: b episodes only the first detector caught, c
// only the second.
double mcnemar_exact_p(int b, int c);

}  // namespace gauntlet::harness
