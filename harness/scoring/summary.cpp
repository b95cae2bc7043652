#include "harness/scoring/summary.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;

template <typename T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json latency_json(const std::optional<LatencyStats>& s) {
  if (!s) return nullptr;
  return {{"mean", s->mean}, {"p50", s->p50}, {"p95", s->p95}};
}

void put_class(json& out, const ClassScore& c) {
  out["scored_faults"] = c.scored_faults;
  out["detected"] = c.detected;
  out["localized"] = c.localized;
  out["recall"] = or_null(c.recall);
  out["detection_latency_s"] = latency_json(c.detection_latency_s);
  out["localization_top1"] = or_null(c.localization_top1);
  out["localization_top3"] = or_null(c.localization_top3);
  out["localization_host_top1"] = or_null(c.localization_host_top1);
  out["localization_pod_top1"] = or_null(c.localization_pod_top1);
  out["time_to_localize_s"] = latency_json(c.time_to_localize_s);
}

json detector_json(const SummaryDetector& d) {
  const DetectorScore& s = d.score;
  json j;
  j["status"] = d.status;
  j["alerts"] = s.alerts;
  j["false_alerts"] = s.false_alerts;
  j["benign_alerts"] = s.benign_alerts;
  if (s.other_tenant_alerts > 0) j["other_tenant_alerts"] = s.other_tenant_alerts;
  j["precision"] = or_null(s.precision);
  put_class(j, s.overall);
  json impactful, latent;
  put_class(impactful, s.impactful);
  put_class(latent, s.latent);
  j["impactful"] = std::move(impactful);
  j["latent"] = std::move(latent);
  const std::optional<RunCosts>& c = s.costs;
  j["false_isolations"] = c ? json(c->false_isolations) : json(nullptr);
  j["lost_iterations"] = c ? json(c->lost_iterations) : json(nullptr);
  j["lost_gpu_hours"] = c ? json(c->lost_gpu_hours) : json(nullptr);
  j["probes_sent"] = c ? json(c->probes_sent) : json(nullptr);
  j["telemetry_bytes"] = c ? json(c->telemetry_bytes) : json(nullptr);
  const std::optional<DetectorRunFacts>& r = d.run;
  j["profiling_seconds"] = r ? json(r->profiling_seconds) : json(nullptr);
  j["profiling_overhead_s"] = r ? json(r->profiling_overhead_s) : json(nullptr);
  j["benchmarks"] = r ? json(r->benchmarks) : json(nullptr);
  j["benchmark_pause_s"] = r ? json(r->benchmark_pause_s) : json(nullptr);
  j["mitigation_actions"] = r ? r->mitigation_actions : json(nullptr);
  return j;
}

const char* fault_class(const FaultEpisode& f) { return f.benign ? "benign" : f.affected_job ? "impactful" : "latent"; }

std::optional<double> number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

int count(const json& j, const char* key) { return static_cast<int>(number(j, key).value_or(0)); }

std::optional<LatencyStats> latency_from(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return std::nullopt;
  return LatencyStats{number(*it, "mean").value_or(0), number(*it, "p50").value_or(0), number(*it, "p95").value_or(0)};
}

ClassScore class_from(const json& j) {
  ClassScore c;
  if (!j.is_object()) return c;
  c.scored_faults = count(j, "scored_faults");
  c.detected = count(j, "detected");
  c.localized = count(j, "localized");
  c.recall = number(j, "recall");
  c.detection_latency_s = latency_from(j, "detection_latency_s");
  c.localization_top1 = number(j, "localization_top1");
  c.localization_top3 = number(j, "localization_top3");
  c.localization_host_top1 = number(j, "localization_host_top1");
  c.localization_pod_top1 = number(j, "localization_pod_top1");
  c.time_to_localize_s = latency_from(j, "time_to_localize_s");
  return c;
}

}  // namespace

std::string summary_json(const Summary& summary) {
  json j;
  j["scenario"] = summary.scenario;
  j["source"] = summary.simulated ? "simulated" : "real";
  const std::optional<SimulatedRunInfo>& sim = summary.simulated;
  j["seed"] = sim ? json(sim->seed) : json(nullptr);
  j["engine"] = sim ? json(sim->engine) : json(nullptr);
  j["sim_seconds"] = sim ? json(sim->sim_seconds) : json(nullptr);
  j["iterations"] = sim ? json{{"fault_free", sim->iterations_fault_free}, {"no_detector", sim->iterations_no_detector}}
                        : json(nullptr);
  const std::optional<RealRunInfo>& real = summary.real;
  j["truth"] = real ? json(real->truth) : json(nullptr);
  j["alerts"] = real ? json(real->alerts) : json(nullptr);
  j["t0_unix_s"] = real ? or_null(real->t0_unix_s) : json(nullptr);
  json detectors = json::object();
  for (const SummaryDetector& d : summary.detectors) detectors[d.name] = detector_json(d);
  j["detectors"] = std::move(detectors);
  // The healthy fleet's background conditions (a month of a 4,096-GPU
  // fleet holds hundreds of thousands) are counted here by kind and listed
  // in faults.jsonl only.
  json faults = json::array();
  json background = json::object();
  std::size_t background_count = 0;
  for (const auto& [kind, count] : summary.background_by_kind) {
    background_count += count;
    background[kind] = count;
  }
  for (const FaultEpisode& f : summary.faults) {
    if (f.background) {
      ++background_count;
      background[f.type] = background.value(f.type, 0) + 1;
      continue;
    }
    json fault{{"id", f.id},
               {"type", f.type},
               {"target", f.target.empty() ? json(nullptr) : json(f.target)},
               {"start_s", f.start_s},
               {"end_s", or_null(f.end_s)},
               {"class", fault_class(f)},
               {"affected_job", f.affected_job},
               {"benign", f.benign}};
    if (!f.cause.empty()) fault["cause"] = f.cause;
    if (!f.jobs.empty()) fault["jobs"] = f.jobs;
    faults.push_back(std::move(fault));
  }
  j["faults"] = std::move(faults);
  if (background_count > 0)
    j["background"] = {
        {"conditions", background_count}, {"by_kind", std::move(background)}, {"listed_in", "faults.jsonl"}};
  if (!summary.tenants.is_null()) j["tenants"] = summary.tenants;
  if (!summary.overall.is_null()) j["overall"] = summary.overall;
  if (!summary.placement.is_null()) j["placement"] = summary.placement;
  j["notes"] = summary.notes;
  j["calibration"] = sim ? sim->calibration : json(nullptr);
  return j.dump(2) + "\n";
}

DetectorScore detector_score_from_json(const json& d) {
  DetectorScore s;
  s.alerts = count(d, "alerts");
  s.false_alerts = count(d, "false_alerts");
  s.benign_alerts = count(d, "benign_alerts");
  s.other_tenant_alerts = count(d, "other_tenant_alerts");
  s.precision = number(d, "precision");
  s.overall = class_from(d);
  if (auto it = d.find("impactful"); it != d.end()) s.impactful = class_from(*it);
  if (auto it = d.find("latent"); it != d.end()) s.latent = class_from(*it);
  if (auto lost = number(d, "lost_iterations")) {
    RunCosts c;
    c.false_isolations = count(d, "false_isolations");
    c.lost_iterations = *lost;
    c.lost_gpu_hours = number(d, "lost_gpu_hours").value_or(0);
    c.probes_sent = static_cast<long long>(number(d, "probes_sent").value_or(0));
    c.telemetry_bytes = static_cast<long long>(number(d, "telemetry_bytes").value_or(0));
    s.costs = c;
  }
  return s;
}

}  // namespace gauntlet::harness
