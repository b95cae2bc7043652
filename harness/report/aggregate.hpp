#pragma once
// Merges many runs (sweep cells, shards, plain runs) into one table with 95%
// confidence intervals over seeds, and the sweep report page.
//
// A sweep writes cell.json next to each run's summary.json:
//   {"sweep": "loss", "scenario": "demo", "params": {"faults.0.rate": "0.01"}, "seed": 3}
// Runs with the same scenario and params are one cell; their seeds are the
// samples. A run folder without cell.json is a cell of its own scenario.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/report/stats.hpp"

namespace gauntlet::harness {

using ParamList = std::vector<std::pair<std::string, std::string>>;  // dotted path -> value as written

struct CellInfo {
  std::string sweep;
  std::string scenario;
  ParamList params;
  std::uint64_t seed = 0;
};
std::string cell_json(const CellInfo& cell);

// The metrics aggregated per detector, in table order.
struct MetricInfo {
  const char* key;     // in summary.json's detector object, or derived
  const char* label;   // table header
  const char* format;  // printf format of one value
};
const std::vector<MetricInfo>& aggregated_metrics();

struct AggregateRow {
  std::string scenario;
  ParamList params;
  std::string detector;
  std::vector<std::uint64_t> seeds;
  std::map<std::string, Estimate> metrics;  // by MetricInfo::key
};

struct Aggregate {
  std::vector<std::string> parameters;  // every dotted path seen, first-seen order
  std::vector<AggregateRow> rows;       // sorted by scenario, params (as first seen), detector order
  int runs = 0;
  std::vector<std::string> warnings;  // duplicates skipped, unreadable folders
  // Cells a sweep's plan (sweep.json, sweep_plan_json) lists that have no
  // results yet, as folders relative to the plan's; and "FOLDER: DETECTOR
  // FAILED: reason" for every run in which a detector failed.
  std::vector<std::string> missing_cells;
  int planned_cells = 0;
  std::vector<std::string> failed_detectors;
};

// What a sweep writes to its results folder before any cell runs: every
// cell's folder, so that a merge can tell which are missing.
std::string sweep_plan_json(const std::string& sweep, const std::vector<std::string>& cell_folders);

// Finds every summary.json under the folders (recursively; hidden folders,
// such as half-written ones, are skipped). Throws InputError when a folder
// does not exist or a file is malformed.
Aggregate aggregate_runs(const std::vector<std::filesystem::path>& folders);

// The text table `gauntlet report` prints.
std::string aggregate_table(const Aggregate& aggregate);
// report.html for many runs: the table and metric-vs-parameter curves;
// `sections` (HTML) go after the table.
std::string aggregate_report_html(const Aggregate& aggregate, const std::string& title,
                                  const std::string& sections = "");

// A parameter value as a number for plotting: plain numbers, durations (in
// seconds) and sizes (in bytes); nothing for other text.
std::optional<double> numeric_parameter(const std::string& value);

}  // namespace gauntlet::harness
