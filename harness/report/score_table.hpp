#pragma once
// The score table `gauntlet run` prints: one row per detector.
#include <string>

#include "harness/runner/runner.hpp"

namespace gauntlet::harness {

std::string score_table(const RunReport& report);

}  // namespace gauntlet::harness
