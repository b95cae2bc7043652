#pragma once
// Bayesian online changepoint detection (Adams & MacKay, 2007).
//
// The series is modelled as segments of i.i.d. Normal observations with
// unknown mean and precision under a Normal-Gamma prior, so each segment's
// predictive distribution is a Student-t. A constant hazard gives the prior
// probability that a segment ends after any observation. After every
// observation the model holds the posterior over "how many of the latest
// observations belong to the current segment" (the run length), truncated to
// max_run hypotheses so memory and time per observation are bounded.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace gauntlet::harness {

struct NormalGammaPrior {
  double mu = 0;     // prior mean
  double kappa = 1;  // pseudo-observations behind the mean
  double alpha = 1;  // shape of the precision's Gamma prior
  double beta = 1;   // rate of the precision's Gamma prior
};

struct BocdConfig {
  double hazard = 1.0 / 200;  // P(segment ends after an observation)
  std::size_t max_run = 512;  // run-length hypotheses kept; longer runs are folded together
  NormalGammaPrior prior;
  // A changepoint is reported once the most probable segment has lasted this
  // many observations, so one outlier does not count as a change.
  std::size_t confirm = 10;
};

class Bocd {
 public:
  explicit Bocd(BocdConfig config);

  // Adds the next observation. Returns the index (0-based, counting every
  // observation pushed) of the first observation of a new segment when the
  // most probable segment now starts later than any changepoint reported
  // before and has lasted at least `confirm` observations.
  std::optional<std::uint64_t> push(double x);

  std::uint64_t observations() const { return count_; }
  // Length of the most probable current segment (including the latest
  // observation) and the index where it starts; 0 before any observation.
  std::size_t map_run_length() const;
  std::uint64_t map_segment_start() const;
  // Posterior probability that the current segment started at or after the
  // given observation index, i.e. that a change happened since then.
  double probability_change_since(std::uint64_t index) const;
  // Posterior probability that the latest observation began a new segment.
  double changepoint_probability() const { return probability_change_since(count_ == 0 ? 0 : count_ - 1); }
  std::size_t hypotheses() const { return runs_.size(); }

 private:
  struct Run {
    std::uint64_t start = 0;  // index of the segment's first observation
    double log_p = 0;         // log posterior of this run length
    NormalGammaPrior post;    // posterior after the segment's observations
  };
  static double log_predictive(const NormalGammaPrior& p, double x);
  static NormalGammaPrior update(const NormalGammaPrior& p, double x);

  BocdConfig config_;
  std::vector<Run> runs_;  // newest segment first; the last entry may hold folded older runs
  std::vector<Run> next_;  // scratch, reused to avoid allocating per observation
  std::uint64_t count_ = 0;
  std::optional<std::uint64_t> reported_;
};

}  // namespace gauntlet::harness
