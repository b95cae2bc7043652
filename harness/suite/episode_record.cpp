#include "harness/suite/episode_record.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace gauntlet::harness {
namespace {

using Json = nlohmann::ordered_json;

Json optional_json(const std::optional<double>& value) { return value ? Json(*value) : Json(nullptr); }

std::optional<double> optional_from(const Json& json) {
  if (json.is_null()) return std::nullopt;
  return json.get<double>();
}

bool is_drawn(const FaultEpisode& truth, const DrawnFault& fault) {
  return truth.type == fault.type && truth.target == fault.target &&
         std::abs(truth.start_s - static_cast<double>(fault.onset_ns) / 1e9) < 1e-6;
}

// The report's outcome of the episode's own fault: same type, target and onset.
const FaultOutcome* own_outcome(const RunReport& report, const DetectorScore& score, const DrawnFault& fault) {
  for (std::size_t i = 0; i < report.faults.size() && i < score.faults.size(); ++i)
    if (is_drawn(report.faults[i], fault)) return &score.faults[i];
  return nullptr;
}

// On a shared cluster, a fault on components the observed tenant does not
// use is not its to find: the run scores it against that tenant's faults only.
bool misses_observed_tenant(const RunReport& report, const DrawnFault& fault) {
  if (!report.scenario.shared()) return false;
  return std::any_of(report.cluster_faults.begin(), report.cluster_faults.end(),
                     [&](const FaultEpisode& truth) { return is_drawn(truth, fault); }) &&
         std::none_of(report.faults.begin(), report.faults.end(),
                      [&](const FaultEpisode& truth) { return is_drawn(truth, fault); });
}

}  // namespace

std::string reproduce_command(const std::string& suite_path, std::size_t index) {
  return "gauntlet suite " + suite_path + " --episode " + std::to_string(index);
}

EpisodeRecord episode_record(const SuiteSpec& spec, const Episode& episode, const RunReport& report) {
  EpisodeRecord record;
  record.index = episode.index;
  record.seed = episode.seed;
  record.shape = spec.shapes[episode.shape].name;
  record.sim_seconds = sim::to_seconds(report.scenario.duration);
  record.reproduce = reproduce_command(spec.file, episode.index);
  if (episode.fault) {
    const DrawnFault& fault = *episode.fault;
    record.type = fault.type;
    record.target = fault.target;
    record.onset_s = static_cast<double>(fault.onset_ns) / 1e9;
    if (fault.duration_ns) record.duration_s = static_cast<double>(*fault.duration_ns) / 1e9;
    record.params = fault.params;
    record.magnitude_param = spec.faults[*episode.entry].magnitude;
    record.magnitude = fault.magnitude;
  }
  for (const DrawnFault& fault : episode.background) {
    std::string text = fault.type + (fault.target.empty() ? "" : " " + fault.target) + " at " +
                       std::to_string(static_cast<double>(fault.onset_ns) / 1e9) + "s";
    for (const auto& [name, value] : fault.params) text += " " + name + "=" + value;
    record.background.push_back(std::move(text));
  }
  std::set<std::string> copies;
  for (const SuiteSweep& sweep : spec.sensitivity)
    for (std::size_t i = 0; i < sweep.values.size(); ++i) copies.insert(sweep.run_name(i));
  for (const std::string& name : report.detector_order) {
    const DetectorScore& score = report.scores.at(name);
    DetectorEpisode d;
    d.name = name;
    d.status = report.faulty.detectors.at(name).status;
    d.alerts = score.alerts;
    d.false_alerts = score.false_alerts;
    d.background_alerts = score.benign_alerts;
    if (episode.fault && misses_observed_tenant(report, *episode.fault)) {
      record.fault_class = kUnaffected;
    } else if (episode.fault) {
      const FaultOutcome* outcome = own_outcome(report, score, *episode.fault);
      if (outcome == nullptr)
        throw std::logic_error("episode " + std::to_string(episode.index) + ": its fault is not in the run");
      if (record.fault_class.empty()) record.fault_class = outcome->latent ? "latent" : "impactful";
      d.detected = outcome->detected;
      if (outcome->detected) {
        d.latency_s = outcome->detection_latency_s;
        d.top1 = outcome->top1;
        d.top3 = outcome->top3;
      }
    }
    (copies.count(name) ? record.sweep : record.detectors).push_back(std::move(d));
  }
  return record;
}

Json record_json(const EpisodeRecord& r) {
  Json params = Json::object();
  for (const auto& [name, text] : r.params) params[name] = text;
  auto detector_json = [](const std::vector<DetectorEpisode>& list) {
    Json out = Json::object();
    for (const DetectorEpisode& d : list)
      out[d.name] = {{"status", d.status},
                     {"alerts", d.alerts},
                     {"false_alerts", d.false_alerts},
                     {"background_alerts", d.background_alerts},
                     {"detected", d.detected},
                     {"latency_s", optional_json(d.latency_s)},
                     {"top1", optional_json(d.top1)},
                     {"top3", optional_json(d.top3)}};
    return out;
  };
  return {{"episode", r.index},
          {"seed", r.seed},
          {"shape", r.shape},
          {"type", r.type},
          {"target", r.target.empty() ? Json(nullptr) : Json(r.target)},
          {"onset_s", r.type == "healthy" ? Json(nullptr) : Json(r.onset_s)},
          {"duration_s", optional_json(r.duration_s)},
          {"params", params},
          {"magnitude", r.magnitude ? Json{{"param", r.magnitude_param}, {"value", *r.magnitude}} : Json(nullptr)},
          {"class", r.fault_class.empty() ? Json(nullptr) : Json(r.fault_class)},
          {"background", r.background},
          {"sim_seconds", r.sim_seconds},
          {"reproduce", r.reproduce},
          {"detectors", detector_json(r.detectors)},
          {"sweep", detector_json(r.sweep)}};
}

EpisodeRecord record_from_json(const Json& j) {
  EpisodeRecord r;
  r.index = whole_number<std::size_t>(j.at("episode"));
  r.seed = whole_number<std::uint64_t>(j.at("seed"));
  r.shape = j.at("shape").get<std::string>();
  r.type = j.at("type").get<std::string>();
  if (!j.at("target").is_null()) r.target = j.at("target").get<std::string>();
  if (!j.at("onset_s").is_null()) r.onset_s = j.at("onset_s").get<double>();
  r.duration_s = optional_from(j.at("duration_s"));
  for (const auto& [name, text] : j.at("params").items()) r.params.emplace_back(name, text.get<std::string>());
  if (!j.at("magnitude").is_null()) {
    r.magnitude_param = j.at("magnitude").at("param").get<std::string>();
    r.magnitude = j.at("magnitude").at("value").get<double>();
  }
  if (!j.at("class").is_null()) r.fault_class = j.at("class").get<std::string>();
  r.background = j.at("background").get<std::vector<std::string>>();
  r.sim_seconds = j.at("sim_seconds").get<double>();
  r.reproduce = j.at("reproduce").get<std::string>();
  auto read_detectors = [](const Json& list, std::vector<DetectorEpisode>& into) {
    for (const auto& [name, d] : list.items()) {
      DetectorEpisode de;
      de.name = name;
      de.status = d.at("status").get<std::string>();
      de.alerts = whole_number<int>(d.at("alerts"));
      de.false_alerts = whole_number<int>(d.at("false_alerts"));
      de.background_alerts = d.contains("background_alerts") ? whole_number<int>(d.at("background_alerts"))
                                                             : 0;  // absent in records of older versions
      de.detected = d.at("detected").get<bool>();
      de.latency_s = optional_from(d.at("latency_s"));
      de.top1 = optional_from(d.at("top1"));
      de.top3 = optional_from(d.at("top3"));
      into.push_back(std::move(de));
    }
  };
  read_detectors(j.at("detectors"), r.detectors);
  if (j.contains("sweep")) read_detectors(j.at("sweep"), r.sweep);
  return r;
}

}  // namespace gauntlet::harness
