#pragma once
// summary.json: one schema, written here for `gauntlet run` (a simulated
// run) and `gauntlet score` (alerts from a real run) alike. A key that does
// not apply to the source, or a figure without evidence behind it, is null.
//
//   {"scenario", "source": "simulated" | "real",
//    "seed", "engine", "sim_seconds", "iterations",                   (simulated)
//    "truth", "alerts", "t0_unix_s",                                   (real)
//    "detectors": {NAME: {"status", "alerts", "false_alerts", "benign_alerts", "precision",
//                         CLASS..., "impactful": {CLASS...}, "latent": {CLASS...},
//                         "false_isolations", "lost_iterations", "lost_gpu_hours",
//                         "probes_sent", "telemetry_bytes", "profiling_seconds",
//                         "profiling_overhead_s", "benchmarks", "benchmark_pause_s",
//                         "mitigation_actions"}},
//    "faults": [{"id", "type", "target", "start_s", "end_s", "class", "affected_job", "benign", "jobs"}],
//    "tenants": {JOB: {"iterations", "detectors", "faults"}}, "overall": {NAME: {...}},  (several jobs)
//    "notes": [text],
//    "calibration": {NAME: {"value", "unit", "set_by": "default" | "scenario"}}}   (simulated)
//   CLASS = "scored_faults", "detected", "localized", "recall", "detection_latency_s",
//           "localization_top1", "localization_top3", "time_to_localize_s"
#include <cstddef>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/scoring/score.hpp"

namespace gauntlet::harness {

// What a simulated run measured of a detector beyond its scores.
struct DetectorRunFacts {
  double profiling_seconds = 0;
  double profiling_overhead_s = 0;
  int benchmarks = 0;
  double benchmark_pause_s = 0;
  nlohmann::ordered_json mitigation_actions;  // null when no policy acted
};

struct SummaryDetector {
  std::string name;
  std::string status = "ok";  // "failed: ..." when the detector failed
  DetectorScore score;
  std::optional<DetectorRunFacts> run;  // simulated runs only
};

struct SimulatedRunInfo {
  std::uint64_t seed = 0;
  std::string engine;
  double sim_seconds = 0;
  double wall_seconds = 0;  // printed by the run, not in summary.json: same seed, same bytes
  std::uint64_t iterations_fault_free = 0;
  std::uint64_t iterations_no_detector = 0;
  // Every calibration attribute in force: {NAME: {"value", "unit", "set_by"}}.
  nlohmann::ordered_json calibration;
};

struct RealRunInfo {
  std::string truth;                // the faults.jsonl read
  std::string alerts;               // the alerts read
  std::optional<double> t0_unix_s;  // the origin the alerts were aligned to
};

struct Summary {
  std::string scenario;
  std::optional<SimulatedRunInfo> simulated;  // exactly one of these two
  std::optional<RealRunInfo> real;
  std::vector<SummaryDetector> detectors;  // in table order
  std::vector<FaultEpisode> faults;
  // Background conditions counted by kind instead of listed in `faults`
  // (a month's 10^5-10^6 need not be copied to be counted); added to the
  // background episodes `faults` holds. In order of each kind's first onset.
  std::vector<std::pair<std::string, std::size_t>> background_by_kind;
  std::vector<std::string> notes;  // what a reader of the scores must know
  // Simulated runs: {"unplaced_s", "stretches", "most_hosts_short"}, when
  // the job waited for hosts it could not get; null otherwise.
  nlohmann::ordered_json placement;
  // Jobs sharing the cluster: {NAME: {"iterations", "detectors", "faults"}}
  // per tenant, and {DETECTOR: {"alerts", "false_alerts", "precision",
  // "scored_faults", "detected", "recall"}} summed over tenants; null otherwise.
  nlohmann::ordered_json tenants;
  nlohmann::ordered_json overall;
};

std::string summary_json(const Summary& summary);

// A detector's scores as summary_json wrote them (null figures stay empty;
// per-fault outcomes are not in the summary).
DetectorScore detector_score_from_json(const nlohmann::ordered_json& detector);

}  // namespace gauntlet::harness
