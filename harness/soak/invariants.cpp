#include "harness/soak/invariants.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

namespace gauntlet::harness::soak {
namespace {

std::string span_text(const models::IterationSpan& s) {
  return "iterations " + std::to_string(s.first) + "+" + std::to_string(s.count) + " from " +
         std::to_string(s.start) + " ns, " + std::to_string(s.duration) + " ns each";
}

}  // namespace

std::vector<std::string> timeline_problems(const std::vector<models::IterationSpan>& timeline) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < timeline.size(); ++i) {
    const models::IterationSpan& s = timeline[i];
    if (s.count == 0 || s.duration <= 0 || s.start < 0) problems.push_back("an empty or negative span: " + span_text(s));
    if (i == 0) {
      if (s.first != 0) problems.push_back("the first span does not start at iteration 0: " + span_text(s));
      continue;
    }
    const models::IterationSpan& p = timeline[i - 1];
    if (s.start < p.start + static_cast<sim::Nanos>(p.count) * p.duration)
      problems.push_back("span " + std::to_string(i) + " starts before the one before it ends: " + span_text(p) +
                         ", then " + span_text(s));
    if (s.first > p.first + p.count)
      problems.push_back("span " + std::to_string(i) + " skips iterations: " + span_text(p) + ", then " +
                         span_text(s));
  }
  return problems;
}

std::vector<std::string> timeline_differences(const std::vector<models::IterationSpan>& fast_forwarded,
                                              const std::vector<models::IterationSpan>& step_by_step) {
  // Spans may be cut differently; compare iteration by iteration.
  struct Iteration {
    std::uint64_t index;
    sim::Nanos start, duration;
  };
  const auto expand = [](const std::vector<models::IterationSpan>& timeline) {
    std::vector<Iteration> out;
    for (const models::IterationSpan& s : timeline)
      for (std::uint64_t k = 0; k < s.count; ++k)
        out.push_back({s.first + k, s.start + static_cast<sim::Nanos>(k) * s.duration, s.duration});
    return out;
  };
  const std::vector<Iteration> fast = expand(fast_forwarded), full = expand(step_by_step);
  const std::string counts = "fast-forward ran " + std::to_string(fast.size()) + " iterations, step by step " +
                             std::to_string(full.size());
  for (std::size_t i = 0; i < std::min(fast.size(), full.size()); ++i)
    if (fast[i].index != full[i].index || fast[i].start != full[i].start || fast[i].duration != full[i].duration)
      return {counts + "; the " + std::to_string(i) + "th differs: fast-forward #" + std::to_string(fast[i].index) +
              " at " + std::to_string(fast[i].start) + " ns for " + std::to_string(fast[i].duration) +
              " ns, step by step #" + std::to_string(full[i].index) + " at " + std::to_string(full[i].start) +
              " ns for " + std::to_string(full[i].duration) + " ns"};
  if (fast.size() != full.size()) return {counts};
  return {};
}

std::vector<std::string> alert_problems(const SimulationOutcome& faulty, const SimulationOutcome& fault_free,
                                        sim::Nanos first_onset, sim::Nanos observe_interval, sim::Nanos duration) {
  std::vector<std::string> problems;
  const double interval_s = sim::to_seconds(observe_interval), duration_s = sim::to_seconds(duration);
  const double onset_s = sim::to_seconds(first_onset);
  for (const auto& [name, outcome] : faulty.detectors) {
    std::vector<std::string> before, before_fault_free;
    for (const Alert& a : outcome.alerts) {
      const double intervals = a.time_s / interval_s;
      if (a.time_s <= 0 || a.time_s > duration_s || std::abs(intervals - std::round(intervals)) > 1e-9)
        problems.push_back(name + " alerted at " + std::to_string(a.time_s) +
                           " s, not at the end of an observation interval within the run");
      if (a.time_s < onset_s) before.push_back(std::to_string(a.time_s) + " " + a.kind);
    }
    if (const auto it = fault_free.detectors.find(name); it != fault_free.detectors.end())
      for (const Alert& a : it->second.alerts)
        if (a.time_s < onset_s) before_fault_free.push_back(std::to_string(a.time_s) + " " + a.kind);
    if (before != before_fault_free)
      problems.push_back(name + " raised " + std::to_string(before.size()) + " alerts before the first fault at " +
                         std::to_string(onset_s) + " s, but " + std::to_string(before_fault_free.size()) +
                         " in the fault-free run: it reacted to a fault before any telemetry could show it");
  }
  return problems;
}

std::vector<std::string> byte_balance_problems(const std::string& openmetrics) {
  // The last sample of each series is its total over the run.
  std::map<std::string, double> last;
  std::istringstream lines(openmetrics);
  std::size_t samples = 0;
  for (std::string line_text; std::getline(lines, line_text);) {
    if (!line_text.starts_with("node_infiniband_port_data_")) continue;
    const std::size_t close = line_text.find('}');
    if (close == std::string::npos) continue;
    std::istringstream value(line_text.substr(close + 1));
    double v = 0;
    value >> v;
    last[line_text.substr(0, close + 1)] = v;
    ++samples;
  }
  double sent = 0, received = 0;
  for (const auto& [series, total] : last) {
    if (series.starts_with("node_infiniband_port_data_transmitted_bytes_total")) sent += total;
    if (series.starts_with("node_infiniband_port_data_received_bytes_total")) received += total;
  }
  if (sent == 0 || received == 0) return {"the exporters showed no RNIC traffic to balance"};
  // Each sample is rounded to a whole byte on both sides.
  if (std::abs(sent - received) > static_cast<double>(samples) + 1e-9 * sent)
    return {"RNICs sent " + std::to_string(sent) + " bytes and received " + std::to_string(received)};
  return {};
}

}  // namespace gauntlet::harness::soak
