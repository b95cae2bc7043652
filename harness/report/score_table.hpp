#pragma once
// The score table `gauntlet run` prints: one row per detector.
#include <map>
#include <string>
#include <vector>

#include "harness/runner/runner.hpp"

namespace gauntlet::harness {

std::string score_table(const RunReport& report);
// The same table from scores read back from a results folder.
std::string score_table(const std::vector<std::string>& detector_order,
                        const std::map<std::string, DetectorScore>& scores);

}  // namespace gauntlet::harness
