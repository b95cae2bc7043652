#pragma once
// The files of a run that belong to the report side: report.html and
// trace.json, and the helper that writes them next to the runner's outputs.
#include <filesystem>
#include <string>

#include "harness/report/run_view.hpp"
#include "harness/runner/results_folder.hpp"

namespace gauntlet::harness {

// report.html for one run. Throws GnuplotMissing when gnuplot is absent.
std::string run_report_html(const RunView& run);

// Writes summary.json, faults.jsonl, alerts.jsonl, timeline.csv (runner),
// trace.json and report.html into the claimed folder, replacing it whole.
void write_run_results(const RunReport& report, const ClaimedFolder& out);

}  // namespace gauntlet::harness
