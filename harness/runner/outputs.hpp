#pragma once
// Writes a run's files (summary.json, faults.jsonl, alerts.jsonl,
// timeline.csv, containers.csv, plus extra files such as the report's trace.json and
// report.html from harness/report) into a folder atomically: everything is written
// to a sibling temporary folder that replaces the target only when complete,
// so a failed or interrupted run never leaves half a result.
#include <filesystem>
#include <string>

#include "harness/runner/runner.hpp"

namespace gauntlet::harness {

std::string summary_json(const RunReport& report);
std::string timeline_csv(const SimulationOutcome& run);

void write_run_outputs(const RunReport& report, const std::filesystem::path& out_dir,
                       const std::vector<std::pair<std::string, std::string>>& extra_files = {});

// Replaces out_dir with a folder holding exactly `files` (name -> contents).
void write_folder_atomically(const std::filesystem::path& out_dir,
                             const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace gauntlet::harness
