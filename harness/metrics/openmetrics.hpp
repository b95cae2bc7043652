#pragma once
// Exporter series as an OpenMetrics text exposition with a timestamp on
// every sample, as `promtool tsdb create-blocks-from openmetrics` imports it.
#include <string>
#include <vector>

#include "harness/metrics/exporter_series.hpp"

namespace gauntlet::harness {

// Families in name order, each series' samples in time order, "# EOF" last.
// Counters are named without _total in their TYPE line, as the format asks.
std::string openmetrics_text(const std::vector<Series>& series, sim::Nanos scrape_interval);

// One series' values in promtool's expanding notation ("1410+0x79 705+0x20").
std::string expanding_notation(const Series& series);

}  // namespace gauntlet::harness
