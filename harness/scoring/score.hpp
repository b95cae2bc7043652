#pragma once
// Scores alerts against injected faults. The same code scores a simulated run
// and a real canary run (gauntlet score).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/alert.hpp"

namespace gauntlet::harness {

// One injected fault as the scorer sees it: a line of faults.jsonl.
struct FaultEpisode {
  std::string id;
  std::string type;
  std::string target;  // empty for faults without a target (reconfigure)
  double start_s = 0;
  std::optional<double> end_s;  // none: lasted to the end of the run
  bool affected_job = true;     // false: reported apart, not counted against recall
  bool benign = false;          // ground truth says "no fault" (reconfigure): alerts on it are false
};

struct LatencyStats {
  double mean = 0;
  double p50 = 0;
  double p95 = 0;
};

// How one fault fared; the aggregate below is computed from these.
struct FaultOutcome {
  std::string id;
  bool scored = false;    // affected the job and is not benign: counts toward recall
  bool detected = false;  // some alert matched it
  int alerts = 0;         // alerts matched to it
  double detection_latency_s = 0;               // first matching alert - start (when detected)
  std::optional<double> time_to_localize_s;     // first matching alert whose top suspect is the target
  bool top1 = false;  // the first matching alert that names suspects has the target first
  bool top3 = false;  // ... or among its first three
};

// Conventions for empty denominators, so aggregates stay plain numbers:
// precision is 1.0 when there are no alerts (nothing raised was false) and
// recall is 1.0 when no fault is scored (nothing could be missed); the counts
// alerts, detected and scored_faults tell such vacuous values apart. Latency
// and localization statistics are 0 when no fault was detected (localized).
struct DetectorScore {
  double precision = 0;
  double recall = 0;
  LatencyStats detection_latency_s;
  double localization_top1 = 0;
  double localization_top3 = 0;
  int alerts = 0;
  int false_alerts = 0;
  int false_isolations = 0;
  int detected = 0;
  int scored_faults = 0;      // faults that affected the job and count toward recall
  // Localization is correct only when the top suspect equals the target id:
  // naming a GPU's host for a GPU fault does not count.
  LatencyStats time_to_localize_s;  // over faults whose target was ever named top suspect
  int localized = 0;                // faults whose target some matching alert named top suspect
  int benign_alerts = 0;            // false alerts raised during a benign episode (a reconfigure)
  std::vector<FaultOutcome> faults;  // in the order of the input
  double lost_iterations = 0;
  double lost_gpu_hours = 0;
  long long probes_sent = 0;
  long long telemetry_bytes = 0;
};

struct ScoringOptions {
  // An alert up to this long after a fault ended still matches it: detectors
  // that work on windows of iterations report a little late.
  double grace_s = 60;
  double run_end_s = 0;  // where open-ended faults end
};

// Matching: each fault is an episode [start, end + grace] (end: end_s, or
// run_end_s for open-ended faults; with run_end_s <= 0 they never close). An
// alert matches the earliest-starting open non-benign episode whose target it
// names among its suspects, else the earliest-starting open non-benign
// episode (a detection without localization). Alerts matching nothing are
// false, including those that fall only in benign episodes. Faults with
// affected_job=false are not scored, but alerts matching them are not false.
DetectorScore score_detector(const std::vector<FaultEpisode>& faults, const std::vector<Alert>& alerts,
                             const ScoringOptions& options);

}  // namespace gauntlet::harness
