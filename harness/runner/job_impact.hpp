#pragma once
// Whether a fault affected the job (impactful) or not (latent), judged
// against the fault-free counterfactual over the same stretch of time and on
// the placement the job had then: the faulty run's iterations in the fault's
// window are compared with the fault-free run's at the same times, and that
// ratio with the one the same placement shows where no fault could touch it.
// A re-placed job may run a little slower for good (its rings cross spines);
// that is the placement's cost, not every later fault's.
#include <optional>
#include <string>
#include <vector>

#include "harness/runner/simulation.hpp"

namespace gauntlet::harness {

struct FaultWindow {
  std::string target;  // a component id; one naming no host touches every placement
  double start_s = 0;
  double end_s = 0;  // the fault's end, or the run's end
  bool benign = false;
};

// A run's mean iteration time in seconds, over every iteration it completed.
double mean_iteration_seconds(const SimulationOutcome& run);

class JobImpact {
 public:
  // Keeps references to both runs. `slowdown`: the margin over the counterfactual that counts (0.001 = 0.1%).
  JobImpact(const SimulationOutcome& faulty, const SimulationOutcome& fault_free, std::vector<FaultWindow> faults,
            double slowdown, double run_end_s);

  // Fault `index` (of the constructor's list) affected the job: it sat on a
  // host the job ran on during its window, or on the fabric, and the job's
  // iterations then ran slower than the counterfactual, or it completed fewer.
  bool affected(std::size_t index) const;
  // The host of `target`'s component when it is a host or part of one.
  static std::optional<int> host_of(const std::string& target);

 private:
  struct Interval {
    double lo;
    double hi;
  };
  struct RatioSum {
    double weighted = 0;  // sum of (faulty / fault-free duration) x seconds
    double seconds = 0;
  };
  double epoch_start(std::size_t epoch) const;
  double epoch_end(std::size_t epoch) const;
  bool could_touch(const FaultWindow& fault, std::size_t epoch) const;
  RatioSum ratio_over(Interval span) const;
  double epoch_ratio(std::size_t epoch) const;
  double completions(const SimulationOutcome& run, Interval span) const;

  const SimulationOutcome& faulty_;
  const SimulationOutcome& fault_free_;
  std::vector<FaultWindow> faults_;
  double slowdown_;
  double run_end_s_;
  double settle_s_;  // how long after a fault's end its effect may last: two fault-free iterations
  std::vector<double> epoch_ratios_;
};

}  // namespace gauntlet::harness
