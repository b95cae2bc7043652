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

namespace {

// The faults listed, and the background counted by kind.
void add_faults(Summary& summary, const std::vector<FaultEpisode>& faults) {
  auto& by_kind = summary.background_by_kind;
  for (const FaultEpisode& f : faults) {
    if (!f.background) {
      summary.faults.push_back(f);
      continue;
    }
    auto kind = std::find_if(by_kind.begin(), by_kind.end(), [&f](const auto& k) { return k.first == f.type; });
    if (kind == by_kind.end()) kind = by_kind.insert(by_kind.end(), {f.type, 0});
    ++kind->second;
  }
}

Summary summary_of(const RunReport& report) {
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
    // The summary lists no fault's outcome: the scores' figures are copied, not a month's outcomes.
    summary.detectors.push_back({name, run.status, with_scored_outcomes_only(report.scores.at(name)), facts});
  }
  add_faults(summary, report.faults);
  const models::PlacementShortfall& shortfall = report.faulty.shortfall;
  summary.placement = {{"unplaced_s", sim::to_seconds(shortfall.waited)},
                       {"stretches", shortfall.stretches},
                       {"most_hosts_short", shortfall.most_hosts_short}};
  if (const std::optional<std::string> warning = placement_warning(report)) summary.notes.push_back(*warning);
  return summary;
}

json optional_number(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

}  // namespace

std::optional<std::string> placement_warning(const RunReport& report) {
  const models::PlacementShortfall& s = report.faulty.shortfall;
  if (s.stretches == 0) return std::nullopt;
  char text[320];
  std::snprintf(text, sizeof text,
                "job '%s' could not be placed for %.2f h of the run's %.2f h (%d stretch%s, at worst %d usable host%s "
                "short): the fleet had too few healthy hosts, which no detector can help",
                report.scenario.job.name.c_str(), sim::to_seconds(s.waited) / 3600,
                sim::to_seconds(report.scenario.duration) / 3600, s.stretches, s.stretches == 1 ? "" : "es",
                s.most_hosts_short, s.most_hosts_short == 1 ? "" : "s");
  return std::string(text);
}

std::string summary_json(const RunReport& report) {
  Summary summary = summary_of(report);
  if (report.tenants.empty()) return harness::summary_json(summary);
  summary.faults.clear();
  summary.background_by_kind.clear();
  add_faults(summary, report.cluster_faults);
  summary.tenants = json::object();
  for (const RunReport& tenant : report.tenants) {
    const json view = json::parse(harness::summary_json(summary_of(tenant)));
    summary.tenants[tenant.scenario.job.name] = {
        {"iterations", view["iterations"]}, {"detectors", view["detectors"]}, {"faults", view["faults"]}};
  }
  summary.overall = json::object();
  for (const auto& [name, t] : tenant_totals(report))
    summary.overall[name] = {{"alerts", t.alerts},
                             {"false_alerts", t.false_alerts},
                             {"precision", optional_number(t.precision)},
                             {"scored_faults", t.scored_faults},
                             {"detected", t.detected},
                             {"recall", optional_number(t.recall)}};
  summary.notes.push_back("several jobs share the cluster: 'iterations' and 'detectors' above are job '" +
                          report.scenario.job.name + "''s; 'tenants' holds every job's, 'overall' sums them");
  return harness::summary_json(summary);
}

namespace {

void timeline_rows(const SimulationOutcome& run, const std::string& prefix, std::ostringstream& out) {
  char line[160];
  for (const models::IterationSpan& span : run.timeline)
    for (std::uint64_t i = 0; i < span.count; ++i) {
      const sim::Nanos start = span.start + static_cast<sim::Nanos>(i) * span.duration;
      std::snprintf(line, sizeof line, "%llu,%.9f,%.9f,%.9f\n", static_cast<unsigned long long>(span.first + i),
                    sim::to_seconds(start), sim::to_seconds(start + span.duration), sim::to_seconds(span.duration));
      out << prefix << line;
    }
}

}  // namespace

std::string timeline_csv(const SimulationOutcome& run) {
  std::ostringstream out;
  out << "iteration,start_s,end_s,duration_s\n";
  timeline_rows(run, "", out);
  return std::move(out).str();
}

std::string timeline_csv(const RunReport& report) {
  if (report.tenants.empty()) return timeline_csv(report.faulty);
  std::ostringstream out;
  out << "job,iteration,start_s,end_s,duration_s\n";
  for (const RunReport& tenant : report.tenants) timeline_rows(tenant.faulty, tenant.scenario.job.name + ",", out);
  return std::move(out).str();
}

void write_run_outputs(const RunReport& report, const ClaimedFolder& out, FileList extra_files) {
  std::ostringstream alerts;
  // In time order over all detectors (ties in the scenario's detector order),
  // as a real alert stream arrives; a tenant's detectors go by JOB/NAME.
  std::vector<Alert> in_time;
  auto add_alerts = [&in_time](const RunReport& view, const std::string& prefix) {
    for (const std::string& name : view.detector_order)
      for (Alert a : view.faulty.detectors.at(name).alerts) {
        a.detector = prefix + a.detector;
        in_time.push_back(std::move(a));
      }
  };
  if (report.tenants.empty()) add_alerts(report, "");
  for (const RunReport& tenant : report.tenants) add_alerts(tenant, tenant.scenario.job.name + "/");
  std::stable_sort(in_time.begin(), in_time.end(), [](const Alert& a, const Alert& b) { return a.time_s < b.time_s; });
  for (const Alert& a : in_time) write_alert_line(alerts, a);
  FileList files;
  files.reserve(4 + extra_files.size());
  files.emplace_back("summary.json", summary_json(report));
  files.emplace_back("alerts.jsonl", std::move(alerts).str());
  files.emplace_back("timeline.csv", timeline_csv(report));
  files.emplace_back("containers.csv", report.faulty.containers_csv);
  for (auto& file : extra_files) files.push_back(std::move(file));
  // Written line by line into its file, never held whole: a month's
  // faults.jsonl lists 10^5-10^6 background conditions, tens of megabytes.
  const std::vector<FaultEpisode>& faults = report.tenants.empty() ? report.faults : report.cluster_faults;
  out.replace_with(files, {{"faults.jsonl", [&faults](std::ostream& text) {
                              for (const FaultEpisode& f : faults) write_fault_line(text, f);
                            }}});
}

}  // namespace gauntlet::harness
