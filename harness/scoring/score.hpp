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

DetectorScore score_detector(const std::vector<FaultEpisode>& faults, const std::vector<Alert>& alerts,
                             const ScoringOptions& options);

}  // namespace gauntlet::harness
