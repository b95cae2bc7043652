#pragma once
// gnuplot scripts for a run's plots. Each returns a script with its data in
// inline data blocks, or an empty string when there is nothing to draw.
#include <string>

#include "harness/report/run_view.hpp"

namespace gauntlet::harness {

// Above this many spans the iteration-time plot bins the timeline by
// simulated time (mean line plus min-max band) instead of drawing each span.
inline constexpr std::size_t kMaxPlottedSpans = 4000;
inline constexpr std::size_t kTimelineBins = 1500;
// At most this many alert marks per detector; beyond that, one per bin.
inline constexpr std::size_t kMaxAlertMarks = 2000;

// Iteration time over simulated time, fault windows shaded, alerts marked
// in one row per detector above the curve.
std::string iteration_time_script(const RunView& run);
// For each detector, the fraction of scored faults detected within a given
// latency (it levels off at the detector's recall).
std::string latency_cdf_script(const RunView& run);
// Lost iterations against the fault-free run: without detection and per detector.
std::string lost_iterations_script(const RunView& run);

}  // namespace gauntlet::harness
