#pragma once
// What `gauntlet score` reads, checked and put on one time base before
// anything is scored: the ground truth (faults.jsonl), the alerts (gauntlet
// alerts.jsonl or an Alertmanager payload) and, optionally, the cluster the
// component ids must name.
//
// Time bases: a simulated run's faults.jsonl counts seconds from the run's
// start; a chaos run's also says where that start was on the wall clock
// (t0_unix_s), and --t0 gives it for any other truth file. Alertmanager's
// startsAt is wall-clock time, so it is moved onto the truth's base by
// subtracting t0; without a t0 the two cannot be compared and the inputs are
// refused. Alerts that still fall hours away from every fault are refused as
// a time-base mismatch rather than scored as all false.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/chaos/alertmanager.hpp"
#include "harness/scoring/score.hpp"

namespace gauntlet::harness {

enum class AlertFormat { automatic, jsonl, alertmanager };
enum class AlertClock { automatic, run, unix_time };  // what alerts.jsonl's time_s counts from

struct ScoreInputOptions {
  std::string truth_path;
  std::string alerts_path;
  std::string cluster_path;  // a scenario or a chaos plan; empty: ids checked for form only
  AlertFormat format = AlertFormat::automatic;
  AlertClock alert_clock = AlertClock::automatic;
  std::optional<double> t0_unix_s;  // --t0
  AlertmanagerOptions alertmanager;
  double grace_s = 60;
};

struct ScoreInputs {
  std::vector<FaultEpisode> faults;
  std::vector<Alert> alerts;                                // on the truth's time base
  std::vector<int> alert_lines;                             // each alert's line in its file
  std::optional<double> t0_unix_s;                          // the origin used
  std::function<bool(const std::string&)> known_component;  // empty: every well-formed id
  std::vector<std::string> notes;  // file:line notes: alerts naming no component or unknown ones
};

// Throws InputError (file:line:col) on anything unusable.
ScoreInputs read_score_inputs(const ScoreInputOptions& options);

// --t0: RFC3339 or Unix seconds; nullopt when neither.
std::optional<double> parse_t0(const std::string& text);

}  // namespace gauntlet::harness
