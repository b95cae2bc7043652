#pragma once
// The `calibration:` block of a scenario: calibration attributes set by name,
//   calibration:
//     transport.timeout: 6s
//     gpu.hot_temperature: 75
// Durations and sizes take a unit, counts are whole numbers, the rest plain
// numbers in the attribute's unit; every value must lie in its range.
#include "harness/scenario/yaml_read.hpp"
#include "sim/calibration.hpp"

namespace gauntlet::harness {

// Every calibration attribute of this build, from all layers.
const sim::AttributeRegistry& calibration_attributes();

namespace detail {

sim::Calibration read_calibration(const yaml_read::Source& source, const yaml_read::Field& block);

}  // namespace detail
}  // namespace gauntlet::harness
