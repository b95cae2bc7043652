// gauntlet score: scores alerts from a real run (gauntlet alerts.jsonl or an
// Alertmanager webhook payload) against the ground truth of a chaos run with
// the same scorer, summary writer and table as simulated runs.
#include <boost/program_options.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "harness/chaos/score_inputs.hpp"
#include "harness/cli/command_line.hpp"
#include "harness/cli/commands.hpp"
#include "harness/report/score_table.hpp"
#include "harness/runner/results_folder.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scoring/summary.hpp"
#include "sim/rfc3339.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;

namespace {

// The --format, --alerts-clock, --grace and --t0 values into `in`; false
// (after saying why) when one is not a value they take.
bool check_score_options(const std::string& format, const std::string& clock, const std::string* t0,
                         harness::ScoreInputOptions& in) {
  const std::map<std::string, harness::AlertFormat> formats = {{"auto", harness::AlertFormat::automatic},
                                                               {"jsonl", harness::AlertFormat::jsonl},
                                                               {"alertmanager", harness::AlertFormat::alertmanager}};
  const std::map<std::string, harness::AlertClock> clocks = {{"auto", harness::AlertClock::automatic},
                                                             {"run", harness::AlertClock::run},
                                                             {"unix", harness::AlertClock::unix_time}};
  if (!formats.contains(format)) {
    std::cerr << "gauntlet score: --format must be auto, jsonl or alertmanager\n";
    return false;
  }
  if (!clocks.contains(clock)) {
    std::cerr << "gauntlet score: --alerts-clock must be auto, run or unix\n";
    return false;
  }
  in.format = formats.at(format);
  in.alert_clock = clocks.at(clock);
  if (!std::isfinite(in.grace_s) || in.grace_s < 0) {
    std::cerr << "gauntlet score: --grace must be a finite number of seconds, at least 0\n";
    return false;
  }
  if (t0) {
    in.t0_unix_s = harness::parse_t0(*t0);
    if (!in.t0_unix_s) {
      // The value may be anything a user pasted: quote only its start.
      const std::string shown = t0->size() > 64 ? t0->substr(0, 64) + "..." : *t0;
      std::cerr << "gauntlet score: --t0 '" << shown << "' is neither an RFC3339 time (offsets within +-23:59, at most "
                << sim::kMaxFractionDigits << " fraction digits) nor Unix seconds\n";
      return false;
    }
  }
  return true;
}

// The summary of every detector the alerts name, in their order of appearance.
struct ScoredAlerts {
  std::vector<std::string> order;
  std::map<std::string, harness::DetectorScore> scores;
  harness::Summary summary;
};

ScoredAlerts score_alerts(const harness::ScoreInputOptions& in, const harness::ScoreInputs& inputs) {
  harness::ScoringOptions options;
  options.grace_s = in.grace_s;
  options.known_component = inputs.known_component;
  for (const auto& f : inputs.faults) options.run_end_s = std::max(options.run_end_s, f.end_s.value_or(f.start_s));
  for (const auto& a : inputs.alerts) options.run_end_s = std::max(options.run_end_s, a.time_s);

  ScoredAlerts scored;
  std::map<std::string, std::vector<harness::Alert>> by_detector;
  for (const auto& a : inputs.alerts) {
    if (!by_detector.contains(a.detector)) scored.order.push_back(a.detector);
    by_detector[a.detector].push_back(a);
  }
  harness::Summary& summary = scored.summary;
  summary.scenario = std::filesystem::path(in.truth_path).parent_path().filename().string();
  summary.real = harness::RealRunInfo{in.truth_path, in.alerts_path, inputs.t0_unix_s};
  summary.faults = inputs.faults;
  summary.notes = inputs.notes;
  for (const std::string& name : scored.order) {
    scored.scores[name] = harness::score_detector(inputs.faults, by_detector[name], options);
    summary.detectors.push_back({name, "ok", scored.scores[name], std::nullopt});
  }
  return scored;
}

}  // namespace

int score_command(const Args& args) {
  po::options_description opts("gauntlet score --truth faults.jsonl --alerts ALERTS [options]");
  harness::ScoreInputOptions in;
  std::string out_dir, format, clock, t0;
  opts.add_options()("help,h", "show this help")("truth", po::value(&in.truth_path)->required(),
                                                 "ground truth faults.jsonl (from gauntlet run or gauntlet chaos)")(
      "alerts", po::value(&in.alerts_path)->required(),
      "alerts: gauntlet alerts.jsonl or a Prometheus Alertmanager webhook payload")(
      "out", po::value(&out_dir), "write summary.json here (default: print only)")(
      "format", po::value(&format)->default_value("auto"), "alerts format: auto, jsonl, alertmanager")(
      "t0", po::value(&t0),
      "wall-clock start of the truth's run (RFC3339 or Unix seconds); a chaos run's faults.jsonl carries it")(
      "alerts-clock", po::value(&clock)->default_value("auto"),
      "what alerts.jsonl's time_s counts from: run (the truth's start), unix, or auto (unix when every time is "
      "past 2001-09-09)")(
      "cluster", po::value(&in.cluster_path),
      "scenario or chaos plan whose components the alerts must name; others are listed and their alerts false")(
      "component-label", po::value(&in.alertmanager.component_label)->default_value("component"),
      "Alertmanager label holding the component id (e.g. h12.nic3)")(
      "detector-label", po::value(&in.alertmanager.detector_label)->default_value("alertname"),
      "Alertmanager label naming the detector")(
      "detector", po::value(&in.alertmanager.detector_name)->default_value("alertmanager"),
      "detector name when the detector label is missing")("grace", po::value(&in.grace_s)->default_value(60),
                                                          "seconds after a fault's end an alert still matches it");
  po::variables_map vm;
  if (const int stop = parse_options(args, opts, opts, nullptr, vm); stop >= 0) return stop;
  if (!check_score_options(format, clock, vm.count("t0") ? &t0 : nullptr, in)) return kExitBadInput;

  // Checked and locked before reading anything: `--out` is replaced whole,
  // and only when gauntlet wrote it.
  std::optional<harness::ClaimedFolder> out;
  if (!out_dir.empty()) {
    try {
      out.emplace(harness::ClaimedFolder::claim(out_dir));
    } catch (const std::exception& e) {
      std::cerr << "gauntlet score: --out " << out_dir << ": " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  harness::ScoreInputs inputs;
  try {
    inputs = harness::read_score_inputs(in);
  } catch (const harness::InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }

  const auto [order, scores, summary] = score_alerts(in, inputs);
  const std::string text = harness::summary_json(summary);
  std::cout << harness::score_table(order, scores);
  for (const std::string& note : inputs.notes) std::cerr << "note: " << note << "\n";
  if (!out) {
    std::cout << text;
    return kExitOk;
  }
  try {
    out->replace_with({{"summary.json", text}});
  } catch (const std::exception& e) {
    std::cerr << "gauntlet score: cannot write " << out_dir << ": " << e.what() << "\n";
    return kExitRunFailed;
  }
  std::cout << "summary: " << out_dir << "/summary.json\n";
  return kExitOk;
}

}  // namespace gauntlet::cli
