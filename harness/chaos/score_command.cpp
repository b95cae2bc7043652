// gauntlet score: scores alerts from a real run (gauntlet alerts.jsonl or an
// Alertmanager webhook payload) against the ground truth of a chaos run with
// the same scorer as simulated runs.
#include <boost/program_options.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/chaos/alertmanager.hpp"
#include "harness/cli/commands.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scoring/records.hpp"
#include "harness/scoring/score.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw harness::InputError(path, 1, 1, "cannot read file");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json score_json(const harness::DetectorScore& s) {
  return {{"precision", s.precision},
          {"recall", s.recall},
          {"detection_latency_s",
           {{"mean", s.detection_latency_s.mean}, {"p50", s.detection_latency_s.p50}, {"p95", s.detection_latency_s.p95}}},
          {"localization_top1", s.localization_top1},
          {"localization_top3", s.localization_top3},
          {"localized", s.localized},
          {"time_to_localize_s",
           {{"mean", s.time_to_localize_s.mean}, {"p50", s.time_to_localize_s.p50}, {"p95", s.time_to_localize_s.p95}}},
          {"alerts", s.alerts},
          {"false_alerts", s.false_alerts},
          {"false_isolations", s.false_isolations},
          {"detected", s.detected},
          {"scored_faults", s.scored_faults},
          {"lost_iterations", s.lost_iterations},
          {"lost_gpu_hours", s.lost_gpu_hours},
          {"probes_sent", s.probes_sent},
          {"telemetry_bytes", s.telemetry_bytes}};
}

}  // namespace

int score_command(const Args& args) {
  po::options_description opts("gauntlet score --truth faults.jsonl --alerts ALERTS [--out DIR]");
  std::string truth, alerts_path, out_dir, format;
  harness::AlertmanagerOptions am;
  double grace = 60;
  opts.add_options()("help,h", "show this help")
      ("truth", po::value(&truth)->required(), "ground truth faults.jsonl (from gauntlet run or gauntlet chaos)")
      ("alerts", po::value(&alerts_path)->required(),
       "alerts: gauntlet alerts.jsonl or a Prometheus Alertmanager webhook payload")
      ("out", po::value(&out_dir), "write summary.json here (default: print only)")
      ("format", po::value(&format)->default_value("auto"), "alerts format: auto, jsonl, alertmanager")
      ("component-label", po::value(&am.component_label)->default_value("component"),
       "Alertmanager label holding the component id (e.g. h12.nic3)")
      ("detector-label", po::value(&am.detector_label)->default_value("alertname"),
       "Alertmanager label naming the detector")
      ("detector", po::value(&am.detector_name)->default_value("alertmanager"),
       "detector name when the detector label is missing")
      ("grace", po::value(&grace)->default_value(60), "seconds after a fault's end an alert still matches it");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << opts << "\n";
      return kExitOk;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "gauntlet score: " << e.what() << "\n" << opts << "\n";
    return kExitBadInput;
  }
  if (format != "auto" && format != "jsonl" && format != "alertmanager") {
    std::cerr << "gauntlet score: --format must be auto, jsonl or alertmanager\n";
    return kExitBadInput;
  }

  std::vector<harness::FaultEpisode> faults;
  std::vector<harness::Alert> alerts;
  try {
    std::ifstream truth_in(truth);
    if (!truth_in) throw harness::InputError(truth, 1, 1, "cannot read file");
    faults = harness::read_faults_jsonl(truth_in, truth);
    std::string text = read_text(alerts_path);
    if (format == "alertmanager" || (format == "auto" && harness::looks_like_alertmanager(text))) {
      alerts = harness::parse_alertmanager(text, alerts_path, am);
    } else {
      std::istringstream in(text);
      alerts = harness::read_alerts_jsonl(in, alerts_path);
    }
  } catch (const harness::InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }

  harness::ScoringOptions options;
  options.grace_s = grace;
  for (const auto& f : faults) options.run_end_s = std::max(options.run_end_s, f.end_s.value_or(f.start_s));
  for (const auto& a : alerts) options.run_end_s = std::max(options.run_end_s, a.time_s);

  std::map<std::string, std::vector<harness::Alert>> by_detector;
  for (const auto& a : alerts) by_detector[a.detector].push_back(a);
  nlohmann::json detectors = nlohmann::json::object();
  for (const auto& [name, list] : by_detector) detectors[name] = score_json(harness::score_detector(faults, list, options));
  nlohmann::json summary = {{"scenario", std::filesystem::path(truth).parent_path().filename().string()},
                            {"source", "real"},
                            {"truth", truth},
                            {"alerts", alerts_path},
                            {"faults", faults.size()},
                            {"detectors", detectors}};
  std::cout << summary.dump(2) << "\n";
  if (!out_dir.empty()) {
    try {
      std::filesystem::create_directories(out_dir);
      std::string tmp = out_dir + "/summary.json.tmp";
      std::ofstream(tmp) << summary.dump(2) << "\n";
      std::filesystem::rename(tmp, out_dir + "/summary.json");
    } catch (const std::exception& e) {
      std::cerr << "gauntlet score: cannot write " << out_dir << ": " << e.what() << "\n";
      return kExitRunFailed;
    }
  }
  return kExitOk;
}

}  // namespace gauntlet::cli
