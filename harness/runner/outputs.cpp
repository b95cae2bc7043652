#include "harness/runner/outputs.hpp"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "harness/scoring/records.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

json latency_json(const DetectorScore& s) {
  if (s.detected == 0) return nullptr;  // no detection: no latency to report
  return {{"mean", s.detection_latency_s.mean}, {"p50", s.detection_latency_s.p50}, {"p95", s.detection_latency_s.p95}};
}

void write_file(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

std::string summary_json(const RunReport& report) {
  const Scenario& s = report.scenario;
  json j;
  j["scenario"] = s.name;
  j["seed"] = s.seed;
  j["engine"] = s.engine;
  j["sim_seconds"] = sim::to_seconds(s.duration);
  j["wall_seconds"] = report.wall_seconds;
  j["iterations"] = {{"fault_free", report.fault_free.iterations()}, {"no_detector", report.faulty.iterations()}};
  json detectors = json::object();
  for (const std::string& name : report.detector_order) {
    const DetectorScore& d = report.scores.at(name);
    detectors[name] = {{"precision", d.precision},
                       {"recall", d.recall},
                       {"detection_latency_s", latency_json(d)},
                       {"localization_top1", d.localization_top1},
                       {"false_alerts", d.false_alerts},
                       {"false_isolations", d.false_isolations},
                       {"lost_iterations", d.lost_iterations},
                       {"lost_gpu_hours", d.lost_gpu_hours},
                       {"probes_sent", d.probes_sent},
                       {"telemetry_bytes", d.telemetry_bytes},
                       {"localization_top3", d.localization_top3},
                       {"alerts", d.alerts},
                       {"detected", d.detected},
                       {"scored_faults", d.scored_faults}};
    const DetectorOutcome& run = report.faulty.detectors.at(name);
    detectors[name]["profiling_seconds"] = run.profiling_seconds;
    detectors[name]["profiling_overhead_s"] = run.profiling_overhead_s;
    detectors[name]["status"] = run.status;
    detectors[name]["benchmarks"] = run.benchmarks;
    detectors[name]["benchmark_pause_s"] = run.benchmark_pause_s;
    if (report.scenario.mitigation != "none") {
      json actions = json::array();
      for (const MitigationAction& a : run.actions)
        actions.push_back({{"time_s", a.time_s}, {"action", a.action}, {"components", a.components}});
      detectors[name]["mitigation_actions"] = actions;
    }
  }
  j["detectors"] = detectors;
  json faults = json::array();
  for (const FaultEpisode& f : report.faults)
    faults.push_back({{"id", f.id}, {"affected_job", f.affected_job}, {"benign", f.benign}});
  j["faults"] = faults;
  return j.dump(2) + "\n";
}

std::string timeline_csv(const SimulationOutcome& run) {
  std::ostringstream out;
  out << "iteration,start_s,end_s,duration_s\n";
  char line[160];
  for (const models::IterationSpan& span : run.timeline)
    for (std::uint64_t i = 0; i < span.count; ++i) {
      const sim::Nanos start = span.start + static_cast<sim::Nanos>(i) * span.duration;
      std::snprintf(line, sizeof line, "%llu,%.9f,%.9f,%.9f\n", static_cast<unsigned long long>(span.first + i),
                    sim::to_seconds(start), sim::to_seconds(start + span.duration), sim::to_seconds(span.duration));
      out << line;
    }
  return out.str();
}

void write_folder_atomically(const fs::path& out_dir, const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path target = fs::absolute(out_dir).lexically_normal();
  fs::create_directories(target.parent_path());
  const fs::path staging = target.parent_path() / ("." + target.filename().string() + ".partial-" +
                                                   std::to_string(::getpid()));
  fs::remove_all(staging);
  fs::create_directories(staging);
  try {
    for (const auto& [name, contents] : files) write_file(staging / name, contents);
    const fs::path old = target.parent_path() / ("." + target.filename().string() + ".old-" +
                                                 std::to_string(::getpid()));
    if (fs::exists(target)) fs::rename(target, old);
    fs::rename(staging, target);
    fs::remove_all(old);
  } catch (...) {
    fs::remove_all(staging);
    throw;
  }
}

void write_run_outputs(const RunReport& report, const fs::path& out_dir,
                       const std::vector<std::pair<std::string, std::string>>& extra_files) {
  std::ostringstream faults, alerts;
  for (const FaultEpisode& f : report.faults) write_fault_line(faults, f);
  for (const std::string& name : report.detector_order)
    for (const Alert& a : report.faulty.detectors.at(name).alerts) write_alert_line(alerts, a);
  std::vector<std::pair<std::string, std::string>> files = {{"summary.json", summary_json(report)},
                                                             {"faults.jsonl", faults.str()},
                                                             {"alerts.jsonl", alerts.str()},
                                                             {"timeline.csv", timeline_csv(report.faulty)},
                                                             {"containers.csv", report.faulty.containers_csv}};
  files.insert(files.end(), extra_files.begin(), extra_files.end());
  write_folder_atomically(out_dir, files);
}

}  // namespace gauntlet::harness
