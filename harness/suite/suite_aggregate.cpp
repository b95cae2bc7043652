#include "harness/suite/suite_aggregate.hpp"

#include <algorithm>
#include <map>

#include "harness/report/json_file.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

using Json = nlohmann::ordered_json;

const DetectorEpisode* find_detector(const EpisodeRecord& record, const std::string& name) {
  for (const DetectorEpisode& d : record.detectors)
    if (d.name == name) return &d;
  return nullptr;
}

std::vector<MagnitudeBin> magnitude_curve(std::vector<std::pair<double, bool>> points) {
  std::sort(points.begin(), points.end());
  std::vector<MagnitudeBin> bins;
  const std::size_t n = points.size();
  const std::size_t count = std::min<std::size_t>(kMagnitudeBins, n);
  for (std::size_t b = 0; b < count; ++b) {
    const std::size_t first = b * n / count, last = (b + 1) * n / count;
    MagnitudeBin bin;
    bin.low = points[first].first;
    bin.high = points[last - 1].first;
    for (std::size_t i = first; i < last; ++i) {
      ++bin.episodes;
      bin.detected += points[i].second ? 1 : 0;
    }
    bin.rate = wilson_interval(bin.detected, bin.episodes);
    bins.push_back(bin);
  }
  return bins;
}

std::optional<double> caught_90(std::vector<std::pair<double, bool>> points) {
  std::sort(points.begin(), points.end());
  int detected_above = 0;
  std::optional<double> smallest;
  for (std::size_t i = points.size(); i-- > 0;) {
    detected_above += points[i].second ? 1 : 0;
    const int tail = static_cast<int>(points.size() - i);
    if (tail >= kMinTailForCaught90 && detected_above >= 0.9 * tail) smallest = points[i].first;
  }
  return smallest;
}

ClassFigures class_figures(const std::string& name, const std::string& fault_class,
                           const std::vector<const EpisodeRecord*>& episodes) {
  ClassFigures f;
  f.fault_class = fault_class;
  int alerts = 0, true_alerts = 0, fault_episodes = 0;
  double top1 = 0, top3 = 0;
  std::vector<double> latencies;
  std::vector<std::pair<double, bool>> magnitudes;
  for (const EpisodeRecord* record : episodes) {
    const DetectorEpisode* d = find_detector(*record, name);
    if (d == nullptr) continue;
    alerts += d->alerts;
    true_alerts += d->alerts - d->false_alerts;
    if (record->type == "healthy" || record->fault_class == kUnaffected) continue;
    ++fault_episodes;
    if (record->magnitude && fault_class != "all") {
      f.magnitude_param = record->magnitude_param;
      magnitudes.emplace_back(*record->magnitude, d->detected);
    }
    if (!d->detected) continue;
    ++f.detected;
    if (d->latency_s) latencies.push_back(*d->latency_s);
    top1 += d->top1.value_or(0);
    top3 += d->top3.value_or(0);
  }
  f.episodes = fault_episodes;
  f.recall = wilson_interval(f.detected, fault_episodes);
  f.precision = wilson_interval(true_alerts, alerts);
  f.top1 = wilson_interval(top1, f.detected);
  f.top3 = wilson_interval(top3, f.detected);
  f.latency_p50_s = bootstrap_quantile(latencies, 0.5);
  f.latency_p95_s = bootstrap_quantile(latencies, 0.95);
  if (!magnitudes.empty()) {
    f.curve = magnitude_curve(magnitudes);
    f.caught_90 = caught_90(magnitudes);
  }
  return f;
}

// Class "all" of the detector or sweep copy `name` among `list`.
SweepPoint sweep_point(const std::string& name, const std::vector<EpisodeRecord>& records,
                       const std::vector<DetectorEpisode> EpisodeRecord::*list) {
  SweepPoint p;
  double false_healthy = 0, hours = 0;
  for (const EpisodeRecord& record : records)
    for (const DetectorEpisode& d : record.*list) {
      if (d.name != name) continue;
      p.alerts += d.alerts;
      p.true_alerts += d.alerts - d.false_alerts;
      if (record.type == "healthy") {
        false_healthy += d.false_alerts;
        hours += record.sim_seconds / 3600;
        continue;
      }
      if (record.fault_class == kUnaffected) continue;
      ++p.episodes;
      p.detected += d.detected ? 1 : 0;
    }
  p.precision = wilson_interval(p.true_alerts, p.alerts);
  p.recall = wilson_interval(p.detected, p.episodes);
  p.false_alerts_per_healthy_hour = poisson_rate_interval(false_healthy, hours);
  return p;
}

SweepCurve sweep_curve(const SuiteSweep& sweep, const std::vector<EpisodeRecord>& records) {
  SweepCurve curve;
  curve.detector = sweep.detector;
  curve.param = sweep.param;
  SweepPoint own = sweep_point(sweep.detector, records, &EpisodeRecord::detectors);
  own.value = sweep.own_value;
  own.numeric = sweep.own_numeric;
  own.own = true;
  curve.points.push_back(own);
  for (std::size_t i = 0; i < sweep.values.size(); ++i) {
    SweepPoint p = sweep_point(sweep.run_name(i), records, &EpisodeRecord::sweep);
    p.value = sweep.values[i];
    p.numeric = sweep.numeric[i];
    curve.points.push_back(p);
  }
  std::sort(curve.points.begin(), curve.points.end(),
            [](const auto& a, const auto& b) { return a.numeric < b.numeric; });
  return curve;
}

Json interval_json(const Interval& i) {
  if (!i.value) return {{"value", nullptr}, {"low", nullptr}, {"high", nullptr}, {"n", i.n}};
  return {{"value", *i.value}, {"low", i.low}, {"high", i.high}, {"n", i.n}};
}

}  // namespace

SuiteResult aggregate_suite(const SuiteSpec& spec, std::vector<EpisodeRecord> records) {
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  SuiteResult result;
  result.suite = spec.name;
  result.version = spec.version;
  result.seed = spec.seed;
  result.file = spec.file;
  result.planned_episodes = expand_episodes(spec).size();
  std::vector<std::string> classes, names;
  for (const SuiteFault& fault : spec.faults)
    if (std::find(classes.begin(), classes.end(), fault.type) == classes.end()) classes.push_back(fault.type);
  std::vector<const EpisodeRecord*> healthy, all;
  std::map<std::string, std::vector<const EpisodeRecord*>> by_class;
  for (const EpisodeRecord& record : records) {
    all.push_back(&record);
    if (record.type == "healthy") {
      healthy.push_back(&record);
      result.healthy_hours += record.sim_seconds / 3600;
    } else {
      by_class[record.type].push_back(&record);
    }
    for (const DetectorEpisode& d : record.detectors)
      if (std::find(names.begin(), names.end(), d.name) == names.end()) names.push_back(d.name);
  }
  result.healthy_episodes = static_cast<int>(healthy.size());
  for (const std::string& name : names) {
    DetectorFigures figures;
    figures.name = name;
    double false_alerts = 0, hours = 0;
    for (const EpisodeRecord* record : healthy)
      if (const DetectorEpisode* d = find_detector(*record, name)) {
        false_alerts += d->false_alerts;
        hours += record->sim_seconds / 3600;
      }
    for (const EpisodeRecord& record : records)
      if (const DetectorEpisode* d = find_detector(record, name)) {
        if (d->status != "ok") ++figures.failed_episodes;
        figures.background_alerts += d->background_alerts;
      }
    figures.false_alerts_per_healthy_hour = poisson_rate_interval(false_alerts, hours);
    for (const std::string& fault_class : classes)
      figures.classes.push_back(class_figures(name, fault_class, by_class[fault_class]));
    figures.classes.push_back(class_figures(name, "all", all));
    result.detectors.push_back(std::move(figures));
  }
  for (const SuiteSweep& sweep : spec.sensitivity) result.sweeps.push_back(sweep_curve(sweep, records));
  result.records = std::move(records);
  return result;
}

std::string suite_summary_json(const SuiteResult& r) {
  Json detectors = Json::object();
  for (const DetectorFigures& d : r.detectors) {
    Json classes = Json::object();
    for (const ClassFigures& c : d.classes) {
      Json curve = Json::array();
      for (const MagnitudeBin& bin : c.curve)
        curve.push_back({{"low", bin.low},
                         {"high", bin.high},
                         {"episodes", bin.episodes},
                         {"detected", bin.detected},
                         {"rate", interval_json(bin.rate)}});
      classes[c.fault_class] = {
          {"episodes", c.episodes},
          {"detected", c.detected},
          {"recall", interval_json(c.recall)},
          {"precision", interval_json(c.precision)},
          {"localization_top1", interval_json(c.top1)},
          {"localization_top3", interval_json(c.top3)},
          {"latency_p50_s", interval_json(c.latency_p50_s)},
          {"latency_p95_s", interval_json(c.latency_p95_s)},
          {"magnitude", c.magnitude_param.empty()
                            ? Json(nullptr)
                            : Json{{"param", c.magnitude_param},
                                   {"curve", curve},
                                   {"caught_90", c.caught_90 ? Json(*c.caught_90) : Json(nullptr)}}}};
    }
    detectors[d.name] = {{"failed_episodes", d.failed_episodes},
                         {"background_false_alerts", d.background_alerts},
                         {"false_alerts_per_healthy_hour", interval_json(d.false_alerts_per_healthy_hour)},
                         {"classes", classes}};
  }
  Json sweeps = Json::array();
  for (const SweepCurve& curve : r.sweeps) {
    Json points = Json::array();
    for (const SweepPoint& p : curve.points)
      points.push_back({{"value", p.value},
                        {"own", p.own},
                        {"alerts", p.alerts},
                        {"true_alerts", p.true_alerts},
                        {"episodes", p.episodes},
                        {"detected", p.detected},
                        {"precision", interval_json(p.precision)},
                        {"recall", interval_json(p.recall)},
                        {"false_alerts_per_healthy_hour", interval_json(p.false_alerts_per_healthy_hour)}});
    sweeps.push_back({{"detector", curve.detector}, {"param", curve.param}, {"points", points}});
  }
  Json records = Json::array();
  for (const EpisodeRecord& record : r.records) records.push_back(record_json(record));
  const Json summary = {
      {"suite", r.suite},
      {"version", r.version},
      {"seed", r.seed},
      {"file", r.file},
      {"episodes", r.records.size()},
      {"planned_episodes", r.planned_episodes},
      {"healthy_episodes", r.healthy_episodes},
      {"healthy_hours", r.healthy_hours},
      {"intervals", "95%: Wilson for proportions; percentile bootstrap over episodes (" +
                        std::to_string(kBootstrapResamples) +
                        " resamples, fixed seed) for latency quantiles; exact Poisson for false alerts per hour"},
      {"detectors", detectors},
      {"sensitivity", sweeps},
      {"records", records}};
  return summary.dump(2) + "\n";
}

SuiteResult read_suite_summary(const std::string& path) {
  const Json j = read_json_file(path);
  SuiteResult r;
  try {
    r.suite = j.at("suite").get<std::string>();
    r.version = whole_number<std::uint64_t>(j.at("version"));
    r.seed = whole_number<std::uint64_t>(j.at("seed"));
    r.file = j.at("file").get<std::string>();
    for (const Json& record : j.at("records")) r.records.push_back(record_from_json(record));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, 0, std::string("not a suite summary: ") + e.what());
  }
  return r;
}

}  // namespace gauntlet::harness
