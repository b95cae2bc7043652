#include "harness/runner/engine_comparison.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "harness/runner/simulation.hpp"
#include "sim/component_id.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kObserverName = "engine-measure";
constexpr std::size_t kBusiestShown = 3;

// Every counter both engines publish, summed per window.
void add_counters(const telemetry::Record& r, std::map<std::string, std::uint64_t>& c) {
  if (r.has_port()) {
    const telemetry::PortCounters& p = r.port();
    c["ecn_marked"] += p.ecn_marked();
    c["pause_sent"] += p.pause_sent();
    c["drops"] += p.drops();
    c["crc_errors"] += p.crc_errors();
  } else if (r.has_transport()) {
    const telemetry::RnicTransportCounters& t = r.transport();
    c["retransmitted"] += t.retransmitted_packets();
    c["naks_sent"] += t.naks_sent();
    c["out_of_sequence"] += t.out_of_sequence();
    c["cnp_sent"] += t.cnp_sent();
    c["timeouts"] += t.timeouts();
  } else if (r.has_nic()) {
    c["nic_cnp"] += r.nic().cnp();
  }
}

// What the observer has counted per window; it outlives the run (the
// detectors end with it).
struct WindowTally {
  explicit WindowTally(std::size_t windows) : measures(windows), bytes(windows), rtt_sum(windows), rtt_count(windows) {}
  std::vector<EngineWindowMeasure> measures;
  std::vector<std::map<std::string, double>> bytes;  // by link direction
  std::vector<double> rtt_sum;
  std::vector<std::uint64_t> rtt_count;
};

std::optional<std::size_t> window_of(const std::vector<ComparedWindow>& windows, sim::Nanos at) {
  for (std::size_t w = 0; w < windows.size(); ++w)
    if (at >= windows[w].start && at < windows[w].end) return w;
  return std::nullopt;
}

std::string endpoint_name(const sim::Topology& topology, int e) {
  return sim::ComponentId::make_nic(topology.host_of(e), topology.nic_of(e)).str();
}

// Measures a run as an operator's collectors would: port and RNIC counters
// and probe RTTs, binned into the comparison's windows. Each observation it
// probes every RNIC's counterpart half the cluster away (across the pods),
// so probes cross the fabric links a fault may load.
class EngineObserver final : public Detector {
 public:
  EngineObserver(const sim::Topology& topology, const std::vector<ComparedWindow>& windows, WindowTally& tally)
      : topology_(topology), windows_(windows), tally_(tally) {}

  bool reads_heartbeats() const override { return false; }

  void observe(const telemetry::Batch& batch) override {
    for (const telemetry::Record& r : batch.records()) {
      if (r.has_port())
        count_sample(r, r.port().time_ns());
      else if (r.has_transport())
        count_sample(r, r.transport().time_ns());
      else if (r.has_nic())
        count_sample(r, r.nic().time_ns());
      else if (r.has_probe())
        count_probe(r.probe());
    }
    // Counters that held still are sent once for the stretch they held;
    // each repeat is a second's sample like a plain record's.
    for (const telemetry::SteadySamples& block : batch.steady_samples())
      for (const telemetry::Record& r : block.samples()) {
        const sim::Nanos first = r.has_port()        ? r.port().time_ns()
                                 : r.has_nic()       ? r.nic().time_ns()
                                 : r.has_transport() ? r.transport().time_ns()
                                                     : -1;
        if (first < 0 || block.period_ns() <= 0) continue;
        for (sim::Nanos at = first; at <= block.until_ns(); at += block.period_ns()) count_sample(r, at);
      }
    const int n = topology_.endpoints();
    for (int e = 0; e < n; ++e)
      request_probe({endpoint_name(topology_, e), endpoint_name(topology_, (e + n / 2) % n), false});
  }

 private:
  // A counter sample taken at `at`, counted in the window holding its second.
  void count_sample(const telemetry::Record& r, sim::Nanos at) {
    const std::optional<std::size_t> w = window_of(windows_, at - 1);
    if (!w) return;
    add_counters(r, tally_.measures[*w].counters);
    if (r.has_port())
      tally_.bytes[*w][r.port().link() + (r.port().upward() ? " up" : " down")] +=
          static_cast<double>(r.port().tx_bytes());
  }

  void count_probe(const telemetry::ProbeResult& probe) {
    const auto w = window_of(windows_, probe.sent_ns());
    if (!w) return;
    if (probe.lost()) {
      ++tally_.measures[*w].probes_lost;
    } else {
      tally_.rtt_sum[*w] += static_cast<double>(probe.rtt_ns());
      ++tally_.rtt_count[*w];
    }
  }

  const sim::Topology& topology_;
  const std::vector<ComparedWindow>& windows_;
  WindowTally& tally_;
};

// The windows' measures once the run is over: mean RTTs, and utilization
// against each link direction's line rate.
std::vector<EngineWindowMeasure> finish(WindowTally& tally, const sim::Topology& topology,
                                        const std::vector<ComparedWindow>& windows) {
  for (std::size_t w = 0; w < windows.size(); ++w) {
    EngineWindowMeasure& m = tally.measures[w];
    if (tally.rtt_count[w] > 0) m.probe_rtt_us = tally.rtt_sum[w] / static_cast<double>(tally.rtt_count[w]) / 1e3;
    const double seconds = sim::to_seconds(windows[w].end - windows[w].start);
    for (const auto& [direction, bytes] : tally.bytes[w]) {
      const std::string link = direction.substr(0, direction.find(' '));
      const double line_rate = topology.link_bytes_per_second(*topology.link_of(*sim::ComponentId::parse(link)));
      m.busiest.push_back({direction, bytes / (line_rate * seconds)});
    }
    std::stable_sort(m.busiest.begin(), m.busiest.end(),
                     [](const LinkUtilization& a, const LinkUtilization& b) { return a.utilization > b.utilization; });
    if (m.busiest.size() > kBusiestShown) m.busiest.resize(kBusiestShown);
  }
  return tally.measures;
}

json measure_json(const EngineWindowMeasure& m) {
  json busiest = json::array();
  for (const LinkUtilization& u : m.busiest) busiest.push_back({{"link", u.link}, {"utilization", u.utilization}});
  return {{"iteration_s", m.iteration_s},   {"median_iteration_s", m.median_iteration_s},
          {"iterations", m.iterations},     {"busiest", busiest},
          {"probe_rtt_us", m.probe_rtt_us}, {"probes_lost", m.probes_lost},
          {"counters", m.counters}};
}

EngineWindowMeasure measure_from_json(const json& j) {
  EngineWindowMeasure m;
  m.iteration_s = j["iteration_s"].get<double>();
  m.median_iteration_s = j["median_iteration_s"].get<double>();
  m.iterations = j["iterations"].get<std::uint64_t>();
  for (const json& u : j["busiest"])
    m.busiest.push_back({u["link"].get<std::string>(), u["utilization"].get<double>()});
  m.probe_rtt_us = j["probe_rtt_us"].get<double>();
  m.probes_lost = j["probes_lost"].get<std::uint64_t>();
  m.counters = j["counters"].get<std::map<std::string, std::uint64_t>>();
  return m;
}

// An iteration counts in a fault's window when it overlaps it (the fault
// acted on it), and in the healthy stretch only when it ended before the
// first onset: one that straddles the onset is the fault's.
bool counts_in(const ComparedWindow& window, sim::Nanos start, sim::Nanos end) {
  if (window.healthy) return start >= window.start && end <= window.end;
  return start < window.end && end > window.start;
}

// One engine's run, in its own process (ns-3 keeps one simulator per process).
std::vector<EngineWindowMeasure> measure_on(const Scenario& base, const std::string& engine,
                                            const std::vector<ComparedWindow>& windows) {
  const std::string text = sim::run_isolated([&base, &engine, &windows] {
    Scenario scenario = base;
    scenario.engine = engine;
    scenario.detectors = {DetectorSpec{.name = kObserverName}};
    const sim::Topology topology(scenario.cluster);
    WindowTally tally(windows.size());
    DetectorRegistry registry;
    registry.add({kObserverName, "measures a run per comparison window", {}, [&](const DetectorContext&) {
                    return std::make_unique<EngineObserver>(topology, windows, tally);
                  }});
    SimulationRequest request;
    request.fast_forward = false;  // both engines simulate every iteration alike
    const SimulationOutcome outcome = simulate(scenario, registry, request);
    std::vector<EngineWindowMeasure> measures = finish(tally, topology, windows);
    for (std::size_t w = 0; w < windows.size(); ++w) {
      double seconds = 0;
      std::vector<std::pair<sim::Nanos, std::uint64_t>> durations;  // duration, how many
      for (const models::IterationSpan& s : outcome.timeline) {
        std::uint64_t counted = 0;
        for (std::uint64_t i = 0; i < s.count; ++i) {
          const sim::Nanos start = s.start + static_cast<sim::Nanos>(i) * s.duration;
          if (!counts_in(windows[w], start, start + s.duration)) continue;
          seconds += sim::to_seconds(s.duration);
          ++counted;
        }
        if (counted > 0) durations.emplace_back(s.duration, counted);
        measures[w].iterations += counted;
      }
      if (measures[w].iterations == 0) continue;
      measures[w].iteration_s = seconds / static_cast<double>(measures[w].iterations);
      std::sort(durations.begin(), durations.end());
      std::uint64_t below = 0;
      for (const auto& [duration, count] : durations) {
        below += count;
        if (2 * below < measures[w].iterations) continue;
        measures[w].median_iteration_s = sim::to_seconds(duration);
        break;
      }
    }
    json out = json::array();
    for (const EngineWindowMeasure& m : measures) out.push_back(measure_json(m));
    return out.dump();
  });
  std::vector<EngineWindowMeasure> measures;
  for (const json& j : json::parse(text)) measures.push_back(measure_from_json(j));
  return measures;
}

std::string number_or_dash(double v, const char* format) {
  if (v < 0) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

}  // namespace

std::vector<ComparedWindow> comparison_windows(const Scenario& scenario) {
  std::vector<ComparedWindow> windows;
  sim::Nanos first_onset = scenario.duration;
  for (const injectors::FaultSpec& f : scenario.faults) first_onset = std::min(first_onset, f.start);
  if (first_onset > 0) windows.push_back({.label = "healthy", .start = 0, .end = first_onset, .healthy = true});
  for (const injectors::FaultSpec& f : scenario.faults) {
    const sim::Nanos end = std::min(f.end().value_or(scenario.duration), scenario.duration);
    std::string label = f.id + " " + f.type;
    if (!f.target.empty()) label += " " + f.target;
    windows.push_back({.label = label, .start = f.start, .end = end});
  }
  return windows;
}

EngineComparison compare_engines(const Scenario& scenario, bool hybrid) {
  EngineComparison out;
  out.scenario = scenario.name;
  out.windows = comparison_windows(scenario);
  auto timed = [&](const std::string& engine, double& wall_s) {
    const auto begin = std::chrono::steady_clock::now();
    std::vector<EngineWindowMeasure> measures = measure_on(scenario, engine, out.windows);
    wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return measures;
  };
  const std::vector<EngineWindowMeasure> flow = timed("flow", out.flow_wall_s);
  const std::vector<EngineWindowMeasure> packet = timed("packet", out.packet_wall_s);
  std::vector<EngineWindowMeasure> mixed;
  if (hybrid) mixed = timed("hybrid", out.hybrid_wall_s);
  for (std::size_t w = 0; w < out.windows.size(); ++w) {
    out.windows[w].flow = flow[w];
    out.windows[w].packet = packet[w];
    if (hybrid) out.windows[w].hybrid = mixed[w];
  }
  return out;
}

std::optional<double> iteration_gap(const ComparedWindow& window) {
  if (window.flow.iteration_s <= 0 || window.packet.iteration_s <= 0) return std::nullopt;
  return window.packet.iteration_s / window.flow.iteration_s - 1.0;
}

std::optional<double> hybrid_error(const ComparedWindow& window) {
  if (!window.hybrid || window.hybrid->iteration_s <= 0 || window.packet.iteration_s <= 0) return std::nullopt;
  return window.hybrid->iteration_s / window.packet.iteration_s - 1.0;
}

bool Agreement::within() const { return std::abs(mean_error) <= band && std::abs(median_error) <= band; }

namespace {

std::optional<Agreement> agreement(const EngineWindowMeasure& engine, const EngineWindowMeasure& packet, double band) {
  if (engine.iteration_s <= 0 || packet.iteration_s <= 0 || engine.median_iteration_s <= 0 ||
      packet.median_iteration_s <= 0)
    return std::nullopt;
  return Agreement{.mean_error = engine.iteration_s / packet.iteration_s - 1.0,
                   .median_error = engine.median_iteration_s / packet.median_iteration_s - 1.0,
                   .band = band};
}

std::string verdict_text(const char* engine, const std::optional<Agreement>& a) {
  if (!a) return std::string(engine) + " -";
  char b[160];
  std::snprintf(b, sizeof b, "%s %s (mean %+.1f%%, median %+.1f%%; band %.0f%%)", engine,
                a->within() ? "within" : "OUTSIDE", 100 * a->mean_error, 100 * a->median_error, 100 * a->band);
  return b;
}

json agreement_json(const std::optional<Agreement>& a) {
  if (!a) return nullptr;
  return {{"mean_error", a->mean_error}, {"median_error", a->median_error}, {"band", a->band}, {"within", a->within()}};
}

// One line per engine: how many windows lie within its band, and which not.
std::string agreement_summary(const EngineComparison& comparison) {
  std::string out = "agreement with the packet engine (mean and median step per window):\n";
  const bool hybrid = !comparison.windows.empty() && comparison.windows.front().hybrid.has_value();
  for (const bool of_hybrid : {false, true}) {
    if (of_hybrid && !hybrid) break;
    std::size_t measured = 0, within = 0;
    std::string outside;
    for (const ComparedWindow& w : comparison.windows) {
      const std::optional<Agreement> a = of_hybrid ? hybrid_agreement(w) : flow_agreement(w);
      if (!a) continue;
      ++measured;
      if (a->within())
        ++within;
      else
        outside += (outside.empty() ? "; outside: " : ", ") + w.label;
    }
    char b[160];
    std::snprintf(b, sizeof b, "  %-6s %zu of %zu windows within %.0f%%", of_hybrid ? "hybrid" : "flow", within,
                  measured, 100 * (of_hybrid ? kHybridAgreementBand : kFlowAgreementBand));
    out += b + outside + "\n";
  }
  return out;
}

}  // namespace

std::optional<Agreement> flow_agreement(const ComparedWindow& window) {
  return agreement(window.flow, window.packet, kFlowAgreementBand);
}

std::optional<Agreement> hybrid_agreement(const ComparedWindow& window) {
  if (!window.hybrid) return std::nullopt;
  return agreement(*window.hybrid, window.packet, kHybridAgreementBand);
}

std::string format_comparison(const EngineComparison& comparison) {
  const bool hybrid = !comparison.windows.empty() && comparison.windows.front().hybrid.has_value();
  std::string out = "scenario " + comparison.scenario + ": flow engine vs packet engine" +
                    (hybrid ? " vs hybrid engine" : "") + ", per window\n";
  char line[640];
  for (const ComparedWindow& w : comparison.windows) {
    std::snprintf(line, sizeof line, "\n%s (%s - %s)\n", w.label.c_str(), sim::format_duration(w.start).c_str(),
                  sim::format_duration(w.end).c_str());
    out += line;
    auto row = [&](const std::string& name, const std::string& a, const std::string& b, const std::string& c) {
      std::snprintf(line, sizeof line, "  %-26s %18s %18s", name.c_str(), a.c_str(), b.c_str());
      out += line;
      if (hybrid) {
        std::snprintf(line, sizeof line, " %18s", c.c_str());
        out += line;
      }
      out += "\n";
    };
    const EngineWindowMeasure none;
    const EngineWindowMeasure& h = w.hybrid ? *w.hybrid : none;
    row("", "flow", "packet", "hybrid");
    row("iteration time (s)", number_or_dash(w.flow.iteration_s, "%.4f"), number_or_dash(w.packet.iteration_s, "%.4f"),
        number_or_dash(h.iteration_s, "%.4f"));
    row("median iteration (s)", number_or_dash(w.flow.median_iteration_s, "%.4f"),
        number_or_dash(w.packet.median_iteration_s, "%.4f"), number_or_dash(h.median_iteration_s, "%.4f"));
    row("iterations", std::to_string(w.flow.iterations), std::to_string(w.packet.iterations),
        std::to_string(h.iterations));
    auto percent = [](double gap) {
      char b[32];
      std::snprintf(b, sizeof b, "%+.1f%%", 100 * gap);
      return std::string(b);
    };
    if (const auto gap = iteration_gap(w)) row("packet vs flow", "", percent(*gap), "");
    if (const auto error = hybrid_error(w)) row("hybrid vs packet", "", "", percent(*error));
    out += "  verdict: " + verdict_text("flow", flow_agreement(w));
    if (hybrid) out += "; " + verdict_text("hybrid", hybrid_agreement(w));
    out += "\n";
    row("probe RTT (us)", number_or_dash(w.flow.probe_rtt_us, "%.2f"), number_or_dash(w.packet.probe_rtt_us, "%.2f"),
        number_or_dash(h.probe_rtt_us, "%.2f"));
    row("probes lost", std::to_string(w.flow.probes_lost), std::to_string(w.packet.probes_lost),
        std::to_string(h.probes_lost));
    for (std::size_t i = 0; i < kBusiestShown; ++i) {
      auto cell = [i](const EngineWindowMeasure& m) {
        if (i >= m.busiest.size()) return std::string("-");
        char b[96];
        std::snprintf(b, sizeof b, "%s %.0f%%", m.busiest[i].link.c_str(), 100 * m.busiest[i].utilization);
        return std::string(b);
      };
      std::snprintf(line, sizeof line, "  %-26s %s | %s", ("busiest link #" + std::to_string(i + 1)).c_str(),
                    cell(w.flow).c_str(), cell(w.packet).c_str());
      out += line;
      out += hybrid ? " | " + cell(h) + "\n" : "\n";
    }
    std::map<std::string, std::array<std::uint64_t, 3>> counters;
    for (const auto& [k, v] : w.flow.counters) counters[k][0] = v;
    for (const auto& [k, v] : w.packet.counters) counters[k][1] = v;
    for (const auto& [k, v] : h.counters) counters[k][2] = v;
    for (const auto& [k, v] : counters) row(k, std::to_string(v[0]), std::to_string(v[1]), std::to_string(v[2]));
  }
  out += "\n" + agreement_summary(comparison);
  std::snprintf(line, sizeof line, "wall time (s): flow %.2f, packet %.2f", comparison.flow_wall_s,
                comparison.packet_wall_s);
  out += line;
  if (hybrid) {
    std::snprintf(line, sizeof line, ", hybrid %.2f", comparison.hybrid_wall_s);
    out += line;
  }
  out += "\n";
  return out;
}

nlohmann::ordered_json comparison_json(const EngineComparison& comparison) {
  json windows = json::array();
  for (const ComparedWindow& w : comparison.windows) {
    const auto gap = iteration_gap(w);
    windows.push_back({{"label", w.label},
                       {"start_s", sim::to_seconds(w.start)},
                       {"end_s", sim::to_seconds(w.end)},
                       {"flow", measure_json(w.flow)},
                       {"packet", measure_json(w.packet)},
                       {"iteration_gap", gap ? json(*gap) : json(nullptr)}});
    if (w.hybrid) {
      const auto error = hybrid_error(w);
      windows.back()["hybrid"] = measure_json(*w.hybrid);
      windows.back()["hybrid_error"] = error ? json(*error) : json(nullptr);
    }
    windows.back()["agreement"] = {{"flow", agreement_json(flow_agreement(w))}};
    if (w.hybrid) windows.back()["agreement"]["hybrid"] = agreement_json(hybrid_agreement(w));
  }
  json out = {{"scenario", comparison.scenario}, {"windows", windows}};
  out["wall_s"] = {{"flow", comparison.flow_wall_s}, {"packet", comparison.packet_wall_s}};
  if (!comparison.windows.empty() && comparison.windows.front().hybrid)
    out["wall_s"]["hybrid"] = comparison.hybrid_wall_s;
  return out;
}

}  // namespace gauntlet::harness
