#include "harness/soak/invariants.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "sim/packet/roce_params.hpp"

namespace gauntlet::harness::soak {
namespace {

std::string span_text(const models::IterationSpan& s) {
  return "iterations " + std::to_string(s.first) + "+" + std::to_string(s.count) + " from " + std::to_string(s.start) +
         " ns, " + std::to_string(s.duration) + " ns each";
}

}  // namespace

std::vector<std::string> timeline_problems(const std::vector<models::IterationSpan>& timeline) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < timeline.size(); ++i) {
    const models::IterationSpan& s = timeline[i];
    if (s.count == 0 || s.duration <= 0 || s.start < 0)
      problems.push_back("an empty or negative span: " + span_text(s));
    if (i == 0) {
      if (s.first != 0) problems.push_back("the first span does not start at iteration 0: " + span_text(s));
      continue;
    }
    const models::IterationSpan& p = timeline[i - 1];
    if (s.start < p.start + static_cast<sim::Nanos>(p.count) * p.duration)
      problems.push_back("span " + std::to_string(i) + " starts before the one before it ends: " + span_text(p) +
                         ", then " + span_text(s));
    if (s.first > p.first + p.count)
      problems.push_back("span " + std::to_string(i) + " skips iterations: " + span_text(p) + ", then " + span_text(s));
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
  const std::string counts =
      "fast-forward ran " + std::to_string(fast.size()) + " iterations, step by step " + std::to_string(full.size());
  for (std::size_t i = 0; i < std::min(fast.size(), full.size()); ++i)
    if (fast[i].index != full[i].index || fast[i].start != full[i].start || fast[i].duration != full[i].duration)
      return {counts + "; the " + std::to_string(i) + "th differs: fast-forward #" + std::to_string(fast[i].index) +
              " at " + std::to_string(fast[i].start) + " ns for " + std::to_string(fast[i].duration) +
              " ns, step by step #" + std::to_string(full[i].index) + " at " + std::to_string(full[i].start) +
              " ns for " + std::to_string(full[i].duration) + " ns"};
  if (fast.size() != full.size()) return {counts};
  return {};
}

namespace {

// Detectors that time an alert at the record that showed them the fault, in
// the interval they read it in, not at the interval's end: the timeout
// detector pages at the job's crash or its watchdog's firing (the
// scheduler sees the job exit then), Falcon at the iteration that crossed
// its threshold.
const std::set<std::string> kTimedAtEvidence = {"timeout", "falcon"};

}  // namespace

std::vector<std::string> alert_problems(const SimulationOutcome& faulty, const SimulationOutcome& fault_free,
                                        sim::Nanos first_onset, sim::Nanos observe_interval, sim::Nanos duration) {
  std::vector<std::string> problems;
  const double interval_s = sim::to_seconds(observe_interval), duration_s = sim::to_seconds(duration);
  const double onset_s = sim::to_seconds(first_onset);
  for (const auto& [name, outcome] : faulty.detectors) {
    std::vector<std::string> before, before_fault_free;
    for (const Alert& a : outcome.alerts) {
      const double intervals = a.time_s / interval_s;
      const bool off_the_grid = !kTimedAtEvidence.contains(name) && std::abs(intervals - std::round(intervals)) > 1e-9;
      if (a.time_s <= 0 || a.time_s > duration_s || off_the_grid)
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

namespace {

// The last sample of each series in OpenMetrics text is its total over the
// run; counts how many samples fed each total, since each was rounded to a
// whole byte.
struct SeriesTotal {
  double total = 0;
  std::size_t samples = 0;
};

std::string label_value(const std::string& series, const std::string& name) {
  const std::string key = name + "=\"";
  const std::size_t at = series.find(key);
  if (at == std::string::npos) return {};
  const std::size_t from = at + key.size();
  return series.substr(from, series.find('"', from) - from);
}

std::map<std::string, SeriesTotal> byte_totals(const std::string& openmetrics) {
  std::map<std::string, SeriesTotal> totals;
  std::istringstream lines(openmetrics);
  for (std::string line_text; std::getline(lines, line_text);) {
    static const char* const kRead[] = {"node_infiniband_port_data_",
                                        "ifHCOutOctets{",
                                        "SAI_PORT_STAT_IF_IN_ERRORS{",
                                        "SAI_PORT_STAT_IF_OUT_DISCARDS{",
                                        "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS{",
                                        "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS{",
                                        "SAI_PORT_STAT_PFC_3_TX_PKTS{",
                                        "SAI_PORT_STAT_PFC_3_RX_PKTS{"};
    if (std::none_of(std::begin(kRead), std::end(kRead), [&](const char* p) { return line_text.starts_with(p); }))
      continue;
    const std::size_t close = line_text.find('}');
    if (close == std::string::npos) continue;
    std::istringstream value(line_text.substr(close + 1));
    double v = 0;
    value >> v;
    SeriesTotal& t = totals[line_text.substr(0, close + 1)];
    t.total = v;
    ++t.samples;
  }
  return totals;
}

bool balanced(const SeriesTotal& a, const SeriesTotal& b) {
  return std::abs(a.total - b.total) <= static_cast<double>(a.samples + b.samples) + 1e-9 * std::max(a.total, b.total);
}

std::string bytes_text(double v) { return std::to_string(static_cast<long long>(std::llround(v))); }

// What the exporters' counters add up to over the run.
struct Counted {
  SeriesTotal sent, received;              // by the RNICs
  SeriesTotal into_leaves, out_of_leaves;  // by the leaves' host-link ports
  // Host link "hX.nicY~leafL" per direction, as the leaf's port counts it.
  std::map<std::string, SeriesTotal> link_up, link_down;
  std::map<std::string, SeriesTotal> nic_sent, nic_received;
  // Switch ports' frames in error or discarded, or dropped by a PFC watchdog.
  double dropped_frames = 0;
  // PAUSE frames on host links, which the octet counters count but no switch
  // forwards: toward the leaves (the RNICs', as the leaves received them)
  // and toward the RNICs (the leaves'). A direction's PFC counters count the
  // frames that push back against its data, so travel the other way.
  double pauses_up = 0, pauses_down = 0;
};

Counted count_bytes(const std::string& openmetrics) {
  Counted c;
  for (const auto& [series, t] : byte_totals(openmetrics)) {
    const std::string component = label_value(series, "component");
    const auto add = [&t](SeriesTotal& into) {
      into.total += t.total;
      into.samples += t.samples;
    };
    const bool host_link = component.starts_with("h") && component.find('~') != std::string::npos;
    const bool up = label_value(series, "direction") == "up";
    if (series.starts_with("SAI_PORT_STAT_IF_") || series.starts_with("PFC_WD_")) {
      c.dropped_frames += t.total;
    } else if (series.starts_with("SAI_PORT_STAT_PFC_3_TX_PKTS{")) {
      if (host_link && up) c.pauses_down += t.total;
    } else if (series.starts_with("SAI_PORT_STAT_PFC_3_RX_PKTS{")) {
      if (host_link && !up) c.pauses_up += t.total;
    } else if (series.starts_with("node_infiniband_port_data_transmitted_bytes_total")) {
      add(c.sent);
      add(c.nic_sent[component]);
    } else if (series.starts_with("node_infiniband_port_data_received_bytes_total")) {
      add(c.received);
      add(c.nic_received[component]);
    } else if (series.starts_with("ifHCOutOctets{")) {
      if (!host_link) continue;
      const std::size_t tilde = component.find('~');
      add(up ? c.link_up[component.substr(0, tilde)] : c.link_down[component.substr(0, tilde)]);
      add(up ? c.into_leaves : c.out_of_leaves);
    }
  }
  return c;
}

}  // namespace

std::vector<std::string> byte_balance_problems(const std::string& openmetrics,
                                               const std::set<std::string>& skewed_hosts, bool octets_count_pauses) {
  Counted c = count_bytes(openmetrics);
  if (!octets_count_pauses) c.pauses_up = c.pauses_down = 0;
  if (c.sent.total == 0 || c.received.total == 0) return {"the exporters showed no RNIC traffic to balance"};
  // The RNICs' byte counters count the same PAUSE frames their links carry.
  const double pause_bytes = sim::PfcParams{}.pause_frame_bytes;
  c.into_leaves.total -= c.pauses_up * pause_bytes;
  c.sent.total -= c.pauses_up * pause_bytes;
  c.out_of_leaves.total -= c.pauses_down * pause_bytes;
  c.received.total -= c.pauses_down * pause_bytes;
  const std::string pauses_text = c.pauses_up + c.pauses_down == 0
                                      ? ""
                                      : " (besides " + bytes_text(c.pauses_up) + " and " + bytes_text(c.pauses_down) +
                                            " PAUSE frames of " + bytes_text(pause_bytes) + " bytes)";
  std::vector<std::string> problems;
  // The fabric delivered what it took in, as the switches count it (their
  // clocks are right; a host's may be skewed), and the RNICs received what
  // they sent: but for the frames switch ports dropped (the packet engine's
  // lost frames, counted in frames, each at most a full frame's bytes).
  const double frame_bytes = sim::TransportParams{}.mtu_payload + sim::TransportParams{}.header_bytes;
  const auto delivered = [&](const SeriesTotal& in, const SeriesTotal& out) {
    if (c.dropped_frames == 0) return balanced(in, out);
    const double rounding = static_cast<double>(in.samples + out.samples);
    return in.total - out.total >= -rounding && in.total - out.total <= c.dropped_frames * frame_bytes + rounding;
  };
  if (!delivered(c.into_leaves, c.out_of_leaves))
    problems.push_back("host links carried " + bytes_text(c.into_leaves.total) + " bytes toward the leaves and " +
                       bytes_text(c.out_of_leaves.total) + " toward the RNICs" + pauses_text + ", with " +
                       bytes_text(c.dropped_frames) + " frames dropped");
  else if (skewed_hosts.empty() && !delivered(c.sent, c.received))
    problems.push_back("RNICs sent " + bytes_text(c.sent.total) + " bytes and received " +
                       bytes_text(c.received.total) + pauses_text + ", with " + bytes_text(c.dropped_frames) +
                       " frames dropped");
  // Per link: what an RNIC sent entered its host link, and what it received
  // left that link toward it.
  const auto check_link = [&problems, &skewed_hosts](const std::map<std::string, SeriesTotal>& nic,
                                                     const std::map<std::string, SeriesTotal>& link,
                                                     const std::string& what, const std::string& direction) {
    std::map<std::string, SeriesTotal> names = nic;
    for (const auto& [name, t] : link) names.try_emplace(name);
    for (const auto& [name, unused] : names) {
      if (skewed_hosts.contains(name.substr(0, name.find('.')))) continue;
      const auto n = nic.find(name), l = link.find(name);
      const SeriesTotal at_nic = n == nic.end() ? SeriesTotal{} : n->second;
      const SeriesTotal on_link = l == link.end() ? SeriesTotal{} : l->second;
      if (!balanced(at_nic, on_link))
        problems.push_back(name + " " + what + " " + bytes_text(at_nic.total) + " bytes, but its host link carried " +
                           bytes_text(on_link.total) + " " + direction);
    }
  };
  check_link(c.nic_sent, c.link_up, "sent", "toward the leaf");
  check_link(c.nic_received, c.link_down, "received", "toward it");
  return problems;
}

}  // namespace gauntlet::harness::soak
