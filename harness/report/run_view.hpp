#pragma once
// Everything the run report shows, gathered either from a run just finished
// (in memory) or from a run's output folder (gauntlet report DIR). The
// timeline stays in spans: a month-scale run is a handful of spans, never
// millions of points.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/runner/runner.hpp"

namespace gauntlet::harness {

struct RunView {
  std::string scenario;
  std::uint64_t seed = 0;
  double sim_seconds = 0;
  std::uint64_t iterations_fault_free = 0;
  std::uint64_t iterations_faulty = 0;
  std::vector<models::IterationSpan> timeline;  // the run with faults
  std::vector<FaultEpisode> faults;
  // Background conditions counted but left out of `faults`: a run just
  // finished shows only its injected faults, and a month of a large fleet
  // holds hundreds of thousands of conditions.
  std::size_t background_not_listed = 0;
  std::vector<std::string> detector_order;
  std::map<std::string, DetectorScore> scores;
  std::map<std::string, std::vector<Alert>> alerts;  // by detector
  CollectiveSample collectives;                      // of the run with faults; empty when read back from a folder
};

RunView view_of(const RunReport& report);

// Reads summary.json, faults.jsonl, alerts.jsonl and timeline.csv from dir.
// Per-fault outcomes (for the latency CDF) are recomputed by scoring the
// record files; the aggregate scores are taken from summary.json as written.
// Malformed files throw InputError (file:line:col).
RunView read_run_folder(const std::filesystem::path& dir);

// Consecutive timeline.csv rows with the same duration, each starting where
// the previous ended, folded back into spans (with a job column, the first
// job's rows, the job summary.json's iterations count, named in job_read).
std::vector<models::IterationSpan> read_timeline_csv(std::istream& in, const std::string& file_name,
                                                     std::string* job_read = nullptr);

}  // namespace gauntlet::harness
