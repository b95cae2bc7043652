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

std::string trace_json(const RunReport& report) {
  // Chrome trace events: one track for iterations, one for faults, one per
  // detector's alerts. Timestamps are microseconds of simulated time.
  json events = json::array();
  auto meta = [&](int tid, const std::string& name) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}});
  };
  meta(1, "iterations");
  meta(2, "faults");
  for (const models::IterationSpan& span : report.faulty.timeline) {
    // A steady stretch is one slice: it may hold millions of iterations.
    events.push_back({{"name", span.count == 1 ? "iteration " + std::to_string(span.first)
                                               : "iterations " + std::to_string(span.first) + ".." +
                                                     std::to_string(span.first + span.count - 1)},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", static_cast<double>(span.start) / 1e3},
                      {"dur", static_cast<double>(span.duration) * static_cast<double>(span.count) / 1e3},
                      {"args", {{"duration_s", sim::to_seconds(span.duration)}, {"count", span.count}}}});
  }
  const double end_s = sim::to_seconds(report.scenario.duration);
  for (const FaultEpisode& f : report.faults)
    events.push_back({{"name", f.type + " " + f.target},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", 2},
                      {"ts", f.start_s * 1e6},
                      {"dur", (f.end_s.value_or(end_s) - f.start_s) * 1e6},
                      {"args", {{"id", f.id}, {"affected_job", f.affected_job}}}});
  int tid = 3;
  for (const std::string& name : report.detector_order) {
    meta(tid, "alerts: " + name);
    for (const Alert& a : report.faulty.detectors.at(name).alerts)
      events.push_back({{"name", a.kind + (a.suspects.empty() ? "" : " " + a.suspects.front().id)},
                        {"ph", "i"},
                        {"s", "t"},
                        {"pid", 1},
                        {"tid", tid},
                        {"ts", a.time_s * 1e6}});
    ++tid;
  }
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
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

void write_run_outputs(const RunReport& report, const fs::path& out_dir) {
  std::ostringstream faults, alerts;
  for (const FaultEpisode& f : report.faults) write_fault_line(faults, f);
  for (const std::string& name : report.detector_order)
    for (const Alert& a : report.faulty.detectors.at(name).alerts) write_alert_line(alerts, a);
  write_folder_atomically(out_dir, {{"summary.json", summary_json(report)},
                                    {"faults.jsonl", faults.str()},
                                    {"alerts.jsonl", alerts.str()},
                                    {"timeline.csv", timeline_csv(report.faulty)},
                                    {"trace.json", trace_json(report)}});
}

}  // namespace gauntlet::harness
