#pragma once
// Iteration time before, during and after each fault's window: the figure an
// operator compares first ("the step went from 8.4 s to 8.7 s"). Each value
// is the median duration of the iterations that ran entirely inside that
// window, so the one step a fault's onset cuts through does not blur it.
// "Before" and "after" are windows as long as the fault's own, clipped to
// the run and to stretches no other fault is active in: they end at the
// nearest other fault's edge, and there is none when another fault is
// active at the fault's onset (before) or at its end (after).
#include <optional>
#include <string>
#include <vector>

#include "harness/scoring/score.hpp"
#include "models/job_status.hpp"  // IterationSpan

namespace gauntlet::harness {

struct FaultWindowTimes {
  std::string id, type, target;
  double start_s = 0, end_s = 0;
  std::optional<double> before_s, during_s, after_s;  // none: no whole iteration fits
  std::optional<double> fault_free_during_s;          // the same window of the fault-free run
  // The other fault active at the onset (end), leaving no clean stretch before (after).
  std::string before_overlaps, after_overlaps;
};

// Median duration (seconds) of the iterations that started at or after
// from_s and ended at or before to_s.
std::optional<double> median_iteration_s(const std::vector<models::IterationSpan>& timeline, double from_s,
                                         double to_s);

std::vector<FaultWindowTimes> fault_window_times(const std::vector<FaultEpisode>& faults,
                                                 const std::vector<models::IterationSpan>& faulty,
                                                 const std::vector<models::IterationSpan>& fault_free,
                                                 double run_end_s);

// One line per fault, for the run's stdout.
std::string fault_window_table(const std::vector<FaultWindowTimes>& windows);

}  // namespace gauntlet::harness
