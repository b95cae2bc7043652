#include "harness/chaos/score_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_set>

#include <yaml-cpp/yaml.h>

#include "harness/chaos/plan.hpp"
#include "harness/detectors/registry.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scoring/records.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "sim/component_id.hpp"
#include "sim/rfc3339.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

// Alerts farther than this from every fault window mean the two files do
// not share a time base.
constexpr double kMismatchGapS = 3600;
// Larger alerts.jsonl times are Unix times: no run lasts 31 years.
constexpr double kUnixTimeFloorS = 1e9;

// Which component ids the cluster has: a scenario's whole topology, or a
// chaos plan's host (and everything on it) and the ids its map names.
std::function<bool(const std::string&)> cluster_components(const std::string& path) {
  const std::string text = read_input_file(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (root.IsMap() && root["cluster"]) {
    const Scenario scenario = parse_scenario(text, path, builtin_detectors());
    auto topology = std::make_shared<sim::Topology>(scenario.cluster);
    return [topology](const std::string& id) {
      auto parsed = sim::ComponentId::parse(id);
      return parsed && topology->contains(*parsed);
    };
  }
  const ChaosPlan plan = parse_chaos_plan(text, path);
  auto known = std::make_shared<std::set<std::string>>();
  for (const auto& [name, id] : plan.interfaces) known->insert(id);
  for (const auto& [index, id] : plan.gpus) known->insert(id);
  const std::string host = plan.host;
  return
      [known, host](const std::string& id) { return id == host || id.starts_with(host + ".") || known->contains(id); };
}

// The earliest start and latest end (plus grace) of the faults.
std::pair<double, double> fault_span(const std::vector<FaultEpisode>& faults, double grace_s) {
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const FaultEpisode& f : faults) {
    first = std::min(first, f.start_s);
    last = std::max(last, f.end_s.value_or(std::numeric_limits<double>::infinity()) + grace_s);
  }
  return {first, last};
}

std::string seconds_text(double s) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.1f s", s);
  return buffer;
}

// Each detector is a row of the score table and a key of summary.json: as
// many as a scenario may list (an alertname per alert would make one
// detector of each).
void check_detector_count(const ScoreInputs& inputs, const std::string& alerts_path) {
  std::unordered_set<std::string> detectors;
  for (std::size_t i = 0; i < inputs.alerts.size(); ++i)
    if (detectors.insert(inputs.alerts[i].detector).second && detectors.size() > kMaxDetectors)
      throw InputError(alerts_path, inputs.alert_lines[i], 1,
                       "the alerts name more than " + std::to_string(kMaxDetectors) + " detectors, the limit ('" +
                           inputs.alerts[i].detector + "' is one more; --detector-label chooses the label)");
}

}  // namespace

std::optional<double> parse_t0(const std::string& text) {
  if (auto t = sim::parse_rfc3339(text)) return t;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

namespace {

// The ground truth: every fault, and the run's wall-clock start if it gives one.
void read_truth(const ScoreInputOptions& options, ScoreInputs& inputs) {
  FaultRecords truth;
  {
    std::istringstream in(read_input_file(options.truth_path, sim::kMaxRecordFileBytes));
    const injectors::FaultCatalog catalog = injectors::builtin_fault_catalog();
    truth = read_fault_records(in, options.truth_path, [&catalog](std::string_view type) {
      const injectors::FaultDescriptor* d = catalog.find(type);
      return d && d->spec.benign;
    });
  }
  if (truth.faults.empty()) throw InputError(options.truth_path, 1, 1, "no faults in the ground truth");
  inputs.faults = std::move(truth.faults);
  inputs.t0_unix_s = options.t0_unix_s ? options.t0_unix_s : truth.t0_unix_s;
}

// The alerts in either format; returns whether their times are Unix time.
bool read_alerts(const ScoreInputOptions& options, ScoreInputs& inputs) {
  const std::string text = read_input_file(options.alerts_path, sim::kMaxRecordFileBytes);
  const bool alertmanager = options.format == AlertFormat::alertmanager ||
                            (options.format == AlertFormat::automatic && looks_like_alertmanager(text));
  if (alertmanager) {
    AlertRecords records = parse_alertmanager(text, options.alerts_path, options.alertmanager);
    inputs.alerts = std::move(records.alerts);
    inputs.alert_lines = std::move(records.lines);
    return true;
  }
  std::istringstream in(text);
  AlertRecords records = read_alert_records(in, options.alerts_path);
  inputs.alerts = std::move(records.alerts);
  inputs.alert_lines = std::move(records.lines);
  if (options.alert_clock != AlertClock::automatic) return options.alert_clock == AlertClock::unix_time;
  return !inputs.alerts.empty() && std::all_of(inputs.alerts.begin(), inputs.alerts.end(),
                                               [](const Alert& a) { return a.time_s >= kUnixTimeFloorS; });
}

// Alerts in Unix time counted from the truth's start, unless the truth
// counts in Unix time itself.
void align_alert_clock(const ScoreInputOptions& options, bool wall_clock, ScoreInputs& inputs) {
  // A truth file that counts in Unix time itself (chaos runs before t0_unix_s
  // was written) shares the alerts' base as it is.
  const bool truth_is_unix =
      !inputs.t0_unix_s && std::all_of(inputs.faults.begin(), inputs.faults.end(),
                                       [](const FaultEpisode& f) { return f.start_s >= kUnixTimeFloorS; });
  if (!wall_clock || truth_is_unix) return;
  if (!inputs.t0_unix_s)
    throw InputError(options.alerts_path, 1, 1,
                     "alerts carry wall-clock times but " + options.truth_path +
                         " counts from its run's start and gives no t0_unix_s; give --t0 (RFC3339 or Unix seconds)");
  for (Alert& a : inputs.alerts) a.time_s -= *inputs.t0_unix_s;
}

// Notes on alerts that name no component, or one the cluster lacks.
void note_suspects(const ScoreInputOptions& options, ScoreInputs& inputs) {
  if (!options.cluster_path.empty()) inputs.known_component = cluster_components(options.cluster_path);
  std::vector<std::string> anonymous;
  for (std::size_t i = 0; i < inputs.alerts.size(); ++i) {
    const Alert& a = inputs.alerts[i];
    const std::string where = options.alerts_path + ":" + std::to_string(inputs.alert_lines[i]);
    if (a.suspects.empty()) anonymous.push_back(where);
    if (!inputs.known_component) continue;
    for (const Suspect& s : a.suspects)
      if (!inputs.known_component(s.id))
        inputs.notes.push_back(where + ": suspect '" + s.id + "' is not a component of " + options.cluster_path);
  }
  if (!anonymous.empty()) {
    std::string note = std::to_string(anonymous.size()) + " alert(s) name no component (a detection cannot localize):";
    for (std::size_t i = 0; i < anonymous.size() && i < 10; ++i) note += " " + anonymous[i];
    if (anonymous.size() > 10) note += " ...";
    inputs.notes.push_back(note);
  }
}

// Some alert within an hour of some fault, or the two clocks differ.
void check_time_bases(const ScoreInputOptions& options, const ScoreInputs& inputs) {
  if (inputs.alerts.empty()) return;
  // Named variables, not a structured binding: clang before 16 cannot capture those.
  const std::pair<double, double> span = fault_span(inputs.faults, options.grace_s);
  const double first = span.first, last = span.second;
  const bool near_any = std::any_of(inputs.alerts.begin(), inputs.alerts.end(), [&](const Alert& a) {
    return a.time_s >= first - kMismatchGapS && a.time_s <= last + kMismatchGapS;
  });
  if (near_any) return;
  const auto [lo, hi] = std::minmax_element(inputs.alerts.begin(), inputs.alerts.end(),
                                            [](const Alert& a, const Alert& b) { return a.time_s < b.time_s; });
  throw InputError(options.alerts_path, inputs.alert_lines[lo - inputs.alerts.begin()], 1,
                   "time bases differ: every alert (" + seconds_text(lo->time_s) + " to " + seconds_text(hi->time_s) +
                       ") is over an hour from every fault (" + seconds_text(first) + " on) of " + options.truth_path +
                       "; check --t0 and --alerts-clock");
}

}  // namespace

ScoreInputs read_score_inputs(const ScoreInputOptions& options) {
  ScoreInputs inputs;
  read_truth(options, inputs);
  const bool wall_clock = read_alerts(options, inputs);
  align_alert_clock(options, wall_clock, inputs);
  check_detector_count(inputs, options.alerts_path);
  note_suspects(options, inputs);
  check_time_bases(options, inputs);
  return inputs;
}

}  // namespace gauntlet::harness
