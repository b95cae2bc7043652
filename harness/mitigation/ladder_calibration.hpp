#pragma once
// The falcon ladder's thresholds, as calibration attributes a scenario's
// `calibration:` block may set (and every summary.json echoes). They decide
// when the ladder acts, so a result must say which ones produced it.
#include "sim/calibration.hpp"

namespace gauntlet::harness {

inline constexpr sim::Attribute kLadderSlowGpuSpeed{
    "ladder.slow_gpu_speed",
    sim::AttributeUnit::ratio,
    0.97,
    0.01,
    1.0,
    "a GPU whose measured speed is below this share of its replica's nominal counts as slow",
    "well above the run-to-run jitter of steady iterations, well below the slowdowns worth a lever"};
inline constexpr sim::Attribute kLadderSlowIteration{"ladder.slow_iteration",
                                                     sim::AttributeUnit::ratio,
                                                     1.05,
                                                     1.0,
                                                     10.0,
                                                     "iterations this many times the healthy ones count as a slowdown",
                                                     "as ladder.slow_gpu_speed"};
inline constexpr sim::Attribute kLadderMaxRepairs{
    "ladder.max_repairs",
    sim::AttributeUnit::count,
    2,
    0,
    100,
    "communicator rebuilds onto new paths per episode before the ladder moves on to a restart",
    "a localization that missed twice is not worth more rebuilds"};

inline constexpr const sim::Attribute* kLadderAttributes[] = {&kLadderSlowGpuSpeed, &kLadderSlowIteration,
                                                              &kLadderMaxRepairs};

struct LadderThresholds {
  double slow_gpu_speed = kLadderSlowGpuSpeed.default_value;
  double slow_iteration = kLadderSlowIteration.default_value;
  long max_repairs = kLadderMaxRepairs.default_count();

  static LadderThresholds from(const sim::Calibration& calibration) {
    return {calibration.value(kLadderSlowGpuSpeed), calibration.value(kLadderSlowIteration),
            calibration.count(kLadderMaxRepairs)};
  }
};

}  // namespace gauntlet::harness
