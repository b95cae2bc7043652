#pragma once
// The score table `gauntlet run`, `gauntlet score` and `gauntlet report`
// print: one row per detector. A figure without evidence is "-", and each
// comes with its denominator: precision over `alerts`, recall over the
// faults (detected/scored), latency and localization over the detected ones.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/runner/runner.hpp"

namespace gauntlet::harness {

std::string score_table(const RunReport& report);
// The same table from scores read back from a results folder or a real run.
// A detector with a status other than "ok" in `statuses` gets a FAILED row.
std::string score_table(const std::vector<std::string>& detector_order,
                        const std::map<std::string, DetectorScore>& scores,
                        const std::map<std::string, std::string>& statuses = {});

// One figure as the tables show it: printf-formatted, or "-" without evidence.
std::string figure_text(const std::optional<double>& value, const char* format);
// "detected/scored" of one class of faults.
std::string class_counts(const ClassScore& c);

}  // namespace gauntlet::harness
