#pragma once
// Writes a run's files (summary.json, faults.jsonl, alerts.jsonl,
// timeline.csv, containers.csv, plus extra files such as the report's trace.json and
// report.html from harness/report) into a claimed results folder, replaced
// whole (see results_folder.hpp), so a failed or interrupted run never leaves
// half a result.
#include <filesystem>
#include <optional>
#include <string>

#include "harness/runner/results_folder.hpp"
#include "harness/runner/runner.hpp"

namespace gauntlet::harness {

std::string summary_json(const RunReport& report);
// A sentence when the job waited for hosts it could not get (also a note
// in summary.json), nothing otherwise.
std::optional<std::string> placement_warning(const RunReport& report);
std::string timeline_csv(const SimulationOutcome& run);
// The run with faults, or with several tenants every job's (a job column first).
std::string timeline_csv(const RunReport& report);

void write_run_outputs(const RunReport& report, const ClaimedFolder& out, FileList extra_files = {});

}  // namespace gauntlet::harness
