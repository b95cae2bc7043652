#include "harness/runner/outputs.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "harness/scenario/calibration_block.hpp"
#include "harness/scoring/records.hpp"
#include "harness/scoring/summary.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

// Every calibration attribute with the value the run used, in the unit named
// beside it, and whether the scenario set it.
json calibration_json(const sim::Calibration& calibration) {
  json out = json::object();
  for (const sim::Attribute* a : calibration_attributes().all()) {
    json entry = {{"value", sim::reported_value(*a, calibration.value(*a))}};
    if (const std::string_view unit = sim::unit_symbol(a->unit); !unit.empty()) entry["unit"] = unit;
    entry["set_by"] = calibration.is_set(*a) ? "scenario" : "default";
    out[std::string(a->name)] = std::move(entry);
  }
  return out;
}

}  // namespace

std::string summary_json(const RunReport& report) {
  const Scenario& s = report.scenario;
  Summary summary;
  summary.scenario = s.name;
  summary.simulated = SimulatedRunInfo{s.seed,
                                       s.engine,
                                       sim::to_seconds(s.duration),
                                       report.wall_seconds,
                                       report.fault_free.iterations(),
                                       report.faulty.iterations(),
                                       calibration_json(s.calibration)};
  for (const std::string& name : report.detector_order) {
    const DetectorOutcome& run = report.faulty.detectors.at(name);
    DetectorRunFacts facts{run.profiling_seconds, run.profiling_overhead_s, run.benchmarks, run.benchmark_pause_s,
                           nullptr};
    if (s.mitigation != "none") {
      facts.mitigation_actions = json::array();
      for (const MitigationAction& a : run.actions)
        facts.mitigation_actions.push_back({{"time_s", a.time_s}, {"action", a.action}, {"components", a.components}});
    }
    summary.detectors.push_back({name, run.status, report.scores.at(name), facts});
  }
  summary.faults = report.faults;
  return harness::summary_json(summary);
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

void write_run_outputs(const RunReport& report, const ClaimedFolder& out, const FileList& extra_files) {
  std::ostringstream faults, alerts;
  for (const FaultEpisode& f : report.faults) write_fault_line(faults, f);
  // In time order over all detectors (ties in the scenario's detector order),
  // as a real alert stream arrives.
  std::vector<const Alert*> in_time;
  for (const std::string& name : report.detector_order)
    for (const Alert& a : report.faulty.detectors.at(name).alerts) in_time.push_back(&a);
  std::stable_sort(in_time.begin(), in_time.end(), [](const Alert* a, const Alert* b) { return a->time_s < b->time_s; });
  for (const Alert* a : in_time) write_alert_line(alerts, *a);
  FileList files = {{"summary.json", summary_json(report)},
                                                             {"faults.jsonl", faults.str()},
                                                             {"alerts.jsonl", alerts.str()},
                                                             {"timeline.csv", timeline_csv(report.faulty)},
                                                             {"containers.csv", report.faulty.containers_csv}};
  files.insert(files.end(), extra_files.begin(), extra_files.end());
  out.replace_with(files);
}

}  // namespace gauntlet::harness
