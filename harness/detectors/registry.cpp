#include "harness/detectors/registry.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "harness/detectors/c4d_detector.hpp"
#include "harness/detectors/eroica_detector.hpp"
#include "harness/detectors/falcon_detector.hpp"
#include "harness/detectors/pingmesh_detector.hpp"
#include "harness/detectors/skeleton_detector.hpp"
#include "harness/detectors/timeout_detector.hpp"

namespace gauntlet::harness {
namespace {

// Whole-string parses: "1.5x" or "" are errors, not 1.5 or 0.
std::optional<double> parse_number(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<long long> parse_integer(const std::string& text) {
  long long value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars rejects a leading '+'
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (begin == end || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::string kind_word(DetectorParamKind kind) {
  switch (kind) {
    case DetectorParamKind::duration:
      return "a duration (e.g. 30m)";
    case DetectorParamKind::number:
      return "a number";
    case DetectorParamKind::integer:
      return "an integer";
    case DetectorParamKind::text:
      return "text";
  }
  return "a value";
}

// The value as a number for bound checks; nullopt when malformed.
std::optional<double> checked_value(const DetectorParamInfo& info, const std::string& text, std::string* why) {
  switch (info.kind) {
    case DetectorParamKind::duration: {
      auto ns = sim::parse_duration(text, why);
      if (!ns) return std::nullopt;
      return sim::to_seconds(*ns);
    }
    case DetectorParamKind::number: {
      auto v = parse_number(text);
      if (!v) *why = "expected " + kind_word(info.kind) + ", got '" + text + "'";
      return v;
    }
    case DetectorParamKind::integer: {
      auto v = parse_integer(text);
      if (!v) {
        *why = "expected " + kind_word(info.kind) + ", got '" + text + "'";
        return std::nullopt;
      }
      return static_cast<double>(*v);
    }
    case DetectorParamKind::text:
      if (!info.choices.empty() && std::find(info.choices.begin(), info.choices.end(), text) == info.choices.end()) {
        std::string list;
        for (const auto& c : info.choices) list += (list.empty() ? "" : ", ") + c;
        *why = "expected one of " + list + ", got '" + text + "'";
        return std::nullopt;
      }
      return 0.0;
  }
  return std::nullopt;
}

std::string bound_text(const DetectorParamInfo& info, double bound) {
  if (info.kind == DetectorParamKind::duration) return sim::format_duration(sim::from_seconds(bound));
  std::string s = std::to_string(bound);
  // Trim "0.100000" to "0.1" so messages read like the scenario file.
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

DetectorParamInfo declare(std::string name, DetectorParamKind kind, std::string default_value, std::string help,
                          std::optional<double> min_value = std::nullopt,
                          std::optional<double> max_value = std::nullopt, std::vector<std::string> choices = {}) {
  DetectorParamInfo p;
  p.name = std::move(name);
  p.kind = kind;
  p.default_value = std::move(default_value);
  p.help = std::move(help);
  p.min_value = min_value;
  p.max_value = max_value;
  p.choices = std::move(choices);
  return p;
}

const std::string& lookup(const std::map<std::string, std::string>& values, const std::string& name) {
  auto it = values.find(name);
  if (it == values.end()) throw std::out_of_range("detector parameter '" + name + "' is not declared");
  return it->second;
}

}  // namespace

sim::Nanos DetectorParams::duration(const std::string& name) const {
  std::string why;
  auto ns = sim::parse_duration(lookup(values_, name), &why);
  if (!ns) throw std::invalid_argument("detector parameter '" + name + "': " + why);
  return *ns;
}

double DetectorParams::number(const std::string& name) const {
  auto v = parse_number(lookup(values_, name));
  if (!v) throw std::invalid_argument("detector parameter '" + name + "' is not a number");
  return *v;
}

long long DetectorParams::integer(const std::string& name) const {
  auto v = parse_integer(lookup(values_, name));
  if (!v) throw std::invalid_argument("detector parameter '" + name + "' is not an integer");
  return *v;
}

const std::string& DetectorParams::text(const std::string& name) const { return lookup(values_, name); }

void DetectorRegistry::add(DetectorInfo info) {
  if (find(info.name)) throw std::invalid_argument("detector '" + info.name + "' registered twice");
  detectors_.push_back(std::move(info));
}

const DetectorInfo* DetectorRegistry::find(std::string_view name) const {
  for (const auto& d : detectors_)
    if (d.name == name) return &d;
  return nullptr;
}

std::vector<std::string> DetectorRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& d : detectors_) out.push_back(d.name);
  return out;
}

std::optional<DetectorParams> DetectorRegistry::resolve(const DetectorInfo& info,
                                                        const std::map<std::string, std::string>& raw,
                                                        std::string* error, std::string* bad_key) const {
  auto fail = [&](const std::string& key, const std::string& message) -> std::optional<DetectorParams> {
    if (error) *error = message;
    if (bad_key) *bad_key = key;
    return std::nullopt;
  };
  for (const auto& [key, value] : raw) {
    // "name" selects the detector in a scenario's map form; it is not a parameter.
    if (key == "name") continue;
    // An init-capture: clang before 16 cannot capture a structured binding.
    bool known =
        std::any_of(info.params.begin(), info.params.end(), [&name = key](const auto& p) { return p.name == name; });
    if (!known) {
      std::string list;
      for (const auto& p : info.params) list += (list.empty() ? "" : ", ") + p.name;
      return fail(key, "unknown parameter '" + key + "' for detector '" + info.name + "'" +
                           (list.empty() ? " (it takes none)" : " (known: " + list + ")"));
    }
  }
  std::map<std::string, std::string> values;
  for (const auto& p : info.params) {
    auto given = raw.find(p.name);
    const std::string& text = given != raw.end() ? given->second : p.default_value;
    std::string why;
    auto v = checked_value(p, text, &why);
    if (!v) return fail(p.name, "detector '" + info.name + "' parameter '" + p.name + "': " + why);
    if (p.min_value && *v < *p.min_value)
      return fail(p.name, "detector '" + info.name + "' parameter '" + p.name + "' must be at least " +
                              bound_text(p, *p.min_value) + ", got " + text);
    if (p.max_value && *v > *p.max_value)
      return fail(p.name, "detector '" + info.name + "' parameter '" + p.name + "' must be at most " +
                              bound_text(p, *p.max_value) + ", got " + text);
    values[p.name] = text;
  }
  return DetectorParams(std::move(values));
}

DetectorRegistry builtin_detectors() {
  using K = DetectorParamKind;
  DetectorRegistry registry;

  DetectorInfo timeout;
  timeout.name = "timeout";
  timeout.summary =
      "status quo: only a collective hanging past the NCCL timeout or a job crash reveals a fault; "
      "a person then needs manual_diagnosis to name the node";
  timeout.params = {
      declare("collective_timeout", K::duration, "30m", "how long a collective may hang before the watchdog fires",
              0.0),
      declare("manual_diagnosis", K::duration, "3h", "time a person needs after the timeout to find the node", 0.0),
      declare("page_on_timeout", K::text, "true",
              "raise an alert without suspects when the timeout fires, before the diagnosis names one", std::nullopt,
              std::nullopt, {"true", "false"}),
      declare("suspect", K::text, "auto",
              "what the diagnosis names: the hung GPU, its host, or auto (a host when several of its GPUs hung)",
              std::nullopt, std::nullopt, {"auto", "gpu", "host"}),
  };
  timeout.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    return std::make_unique<TimeoutDetector>(TimeoutDetector::config_from(ctx.params));
  };
  registry.add(std::move(timeout));

  DetectorInfo falcon;
  falcon.name = "falcon";
  falcon.summary =
      "Bayesian changepoint detection on iteration times, group profiling to find the slow workers, then GEMM and "
      "allreduce validation benchmarks that pause training (compute, communication, or neither: the host)";
  falcon.params = {
      declare("hazard", K::number, "0.005", "prior probability of a changepoint at each iteration", 1e-9, 0.5),
      declare("min_gap", K::integer, "10", "iterations required between accepted changepoints (and after one)", 2.0),
      declare("min_shift", K::number, "0.1", "relative mean shift a changepoint needs to be accepted", 0.0),
      declare("compute_ratio", K::number, "1.2", "compute slowdown versus peers that makes a worker a suspect", 1.0),
      declare("comm_ratio", K::number, "1.2", "collective-time slowdown versus peers that makes a worker a suspect",
              1.0),
      declare("max_run", K::integer, "512", "run lengths tracked by the changepoint model (memory bound)", 16.0),
      declare("steady_copies", K::integer, "64", "iterations of a steady run fed to the model; the rest are held", 1.0),
      declare("validate", K::integer, "1",
              "1: confirm a slowdown with GEMM and allreduce benchmarks that pause training; 0: alert on the profile",
              0.0, 1.0),
      declare("gemm_ratio", K::number, "2", "GEMM time over the median that makes a GPU the compute suspect", 1.0),
      declare("allreduce_ratio", K::number, "1.1",
              "allreduce benchmark time over the median that makes a group the communication suspect", 1.0),
      declare("validation_timeout", K::duration, "5m",
              "how long to wait for benchmark results before alerting on the profile", 0.001),
  };
  falcon.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    FalconConfig config = FalconDetector::config_from(ctx.params);
    if (!ctx.name.empty()) config.name = ctx.name;
    return std::make_unique<FalconDetector>(std::move(config));
  };
  falcon.pauses_training = true;
  registry.add(std::move(falcon));

  DetectorInfo c4d;
  c4d.name = "c4d";
  c4d.summary =
      "C4D: per-collective timing compared across the ranks of each communicator at every sync point; "
      "hang vs slow, communication vs computation, slow links from the sender x receiver latency matrix";
  c4d.params = {
      declare("hang_after", K::duration, "20s", "how long a sync point may stay unresolved before it is a hang", 0.001),
      declare("compute_slow", K::number, "0.05",
              "entry lateness, as a fraction of the step, that makes a rank compute-slow", 0.0),
      declare("comm_slow", K::number, "1.5",
              "ring-edge latency over its peers' median (and its own best) that makes it slow", 1.0),
  };
  c4d.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    return std::make_unique<C4dDetector>(C4dDetector::config_from(ctx.params), ctx.topology);
  };
  registry.add(std::move(c4d));

  DetectorInfo eroica;
  eroica.name = "eroica";
  eroica.summary =
      "EROICA: an iteration-time slowdown switches function-level profiling on for a short window; each worker's "
      "function summaries are compared with the peer majority to name the worker, function and device";
  eroica.params = {
      declare("slowdown", K::number, "1.1", "iteration time over its recent baseline that triggers profiling", 1.0),
      declare("baseline_iterations", K::integer, "8", "iterations that form the baseline", 1.0),
      declare("window", K::duration, "60s", "how long profiling stays on once triggered", 0.001),
      declare("cooldown", K::duration, "10m", "minimum time between two profiling windows", 0.0),
      declare("outlier_z", K::number, "3.5",
              "robust z-score (median absolute deviation) that makes a worker an outlier", 0.0),
      declare("min_deviation", K::number, "0.05", "relative deviation from the peer median an outlier must also reach",
              0.0),
  };
  eroica.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    return std::make_unique<EroicaDetector>(EroicaDetector::config_from(ctx.params), ctx.topology);
  };
  eroica.shares_profiling = true;
  registry.add(std::move(eroica));

  DetectorInfo skeleton;
  skeleton.name = "skeleton";
  skeleton.summary =
      "SkeletonHunter: probes the traffic skeleton inferred from periodic RNIC flow table bursts plus "
      "identifiability pairs; localizes overlay first, then underlay, then the RNIC boundary; tells a silent "
      "agent from a network fault";
  skeleton.params = {
      declare("round", K::duration, "30s", "interval between probe rounds", 0.001),
      declare("budget", K::integer, "256", "probes per round", 1.0),
      declare("rtt_factor", K::number, "2",
              "RTT over the healthy baseline times this (and over the margin) is anomalous", 1.0),
      declare("rtt_margin", K::duration, "50us",
              "RTT over the healthy baseline plus this (and over the factor) is anomalous", 0.0),
      declare("heartbeat", K::duration, "10s", "the agents' heartbeat interval", 0.001),
      declare("missed_heartbeats", K::integer, "3", "heartbeat intervals of silence that make an agent silent", 1.0),
      declare("min_repeats", K::integer, "3", "bursts at one period a flow needs to join the skeleton", 2.0),
      declare("stale_after", K::duration, "2m",
              "silence (while other flows burst) after which a flow leaves the skeleton", 0.001),
      declare("tie_probes", K::integer, "4", "identifying probes per suspect tied on top", 1.0),
      declare("tie_rounds", K::integer, "2", "times a tie is probed apart before it is alerted as a tie", 0.0),
      declare("congestion_margin", K::duration, "150ns",
              "a probe this much over its best RTT, over a fabric link whose queue grew by as much wait, is congestion",
              0.0),
  };
  skeleton.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    SkeletonDetector::Config config = SkeletonDetector::config_from(ctx.params);
    if (!ctx.name.empty()) config.name = ctx.name;
    return std::make_unique<SkeletonDetector>(std::move(config), ctx.topology);
  };
  registry.add(std::move(skeleton));

  DetectorInfo pingmesh;
  pingmesh.name = "pingmesh";
  pingmesh.summary =
      "Pingmesh: underlay probes, full mesh under each ToR plus sampled inter-ToR pairs, fixed RTT and loss "
      "thresholds; blames an RNIC many peers cannot reach, else the links failures follow";
  pingmesh.params = {
      declare("round", K::duration, "30s", "interval between probe rounds", 0.001),
      declare("inter_tor_sample", K::integer, "64", "inter-ToR pairs drawn per round", 0.0),
      declare("rtt_threshold", K::duration, "100us", "RTT above which a probe fails", 0.0),
      declare("rnic_fraction", K::number, "0.5", "fraction of an RNIC's probed peers failing that blames the RNIC", 0.0,
              1.0),
      declare("seed", K::integer, "1", "seed of the inter-ToR sample", 0.0),
  };
  pingmesh.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    PingmeshDetector::Config config = PingmeshDetector::config_from(ctx.params);
    if (!ctx.name.empty()) config.name = ctx.name;
    return std::make_unique<PingmeshDetector>(std::move(config), ctx.topology);
  };
  registry.add(std::move(pingmesh));

  return registry;
}

}  // namespace gauntlet::harness
