#pragma once
// Calibration attributes of the ground truth (sim/calibration.hpp): when a
// fault counts as having affected the job (impactful) rather than latent.
#include "sim/calibration.hpp"

namespace gauntlet::harness::calibration {

inline constexpr sim::Attribute kAffectedSlowdown{
    "ground_truth.affected_slowdown",
    sim::AttributeUnit::ratio,
    0.001,
    0,
    1,
    "a fault affected the job when its window's iterations ran at least this much slower (0.001 = 0.1%) than the "
    "fault-free run over the same stretch of time, on the placement the job had then",
    "a modelling choice, no published figure: on the same placement over the same time a fault-free stretch of the "
    "faulty run takes exactly as long as the fault-free run, so any margin above rounding would do"};

inline constexpr const sim::Attribute* kGroundTruthAttributes[] = {&kAffectedSlowdown};

}  // namespace gauntlet::harness::calibration
