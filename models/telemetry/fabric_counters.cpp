#include "models/telemetry/fabric_counters.hpp"

#include <algorithm>
#include <unordered_map>

namespace gauntlet::models {
namespace {

using Interval = std::pair<sim::Nanos, sim::Nanos>;

// Times inside (from, to) where a link's background load may change.
std::vector<sim::Nanos> cut_points(const std::vector<sim::Nanos>& changes, sim::Nanos from, sim::Nanos to) {
  std::vector<sim::Nanos> out{from, to};
  for (sim::Nanos t : changes)
    if (t > from && t < to) out.push_back(t);
  return out;
}

double overlap_seconds(const std::vector<Interval>& intervals, sim::Nanos from, sim::Nanos to) {
  sim::Nanos total = 0;
  for (const auto& [a, b] : intervals) total += std::max<sim::Nanos>(0, std::min(b, to) - std::max(a, from));
  return sim::to_seconds(total);
}

}  // namespace

FabricCounterParams FabricCounterParams::from(const sim::Calibration& c) {
  namespace k = calibration;
  return {c.value(k::kRnicMtu), c.value(k::kEcnKmin), c.value(k::kEcnKmax), c.duration(k::kCnpInterval)};
}

FabricWindow measure_fabric(const std::vector<FlowSegment>& segments, const sim::Topology& topology,
                            const TelemetryEffects& effects, sim::Nanos from, sim::Nanos to,
                            const FabricCounterParams& params) {
  FabricWindow out;
  const std::vector<sim::Nanos> changes = effects.change_times();

  // Demand steps per directed link.
  std::unordered_map<int, std::vector<std::pair<sim::Nanos, double>>> steps;
  for (const FlowSegment& s : segments) {
    NicWindow& src = out.nics[s.flow->src];
    src.tx_bytes += s.bytes;
    out.nics[s.flow->dst].rx_bytes += s.bytes;
    for (int d : s.flow->directions) {
      out.ports[d].tx_bytes += s.bytes;
      if (s.moving()) {
        steps[d].emplace_back(s.from, s.flow->demand);
        steps[d].emplace_back(s.to, -s.flow->demand);
      }
    }
  }
  // Background traffic crosses a loaded link in both directions.
  for (sim::LinkId link : effects.loaded_links()) {
    const double capacity = topology.link_bytes_per_second(link);
    std::vector<sim::Nanos> cuts = cut_points(changes, from, to);
    std::sort(cuts.begin(), cuts.end());
    double bytes = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
      bytes += effects.background_load(link, cuts[i]) * capacity * sim::to_seconds(cuts[i + 1] - cuts[i]);
    if (bytes <= 0) continue;
    for (bool up : {true, false}) out.ports[directed_link(link, up)].tx_bytes += bytes;
  }

  std::unordered_map<int, std::vector<Interval>> overloaded;
  for (auto& [direction, events] : steps) {
    const sim::LinkId link = link_of_direction(direction);
    const double capacity = topology.link_bytes_per_second(link);
    for (sim::Nanos t : cut_points(changes, from, to)) events.emplace_back(t, 0.0);
    std::sort(events.begin(), events.end());
    PortWindow& port = out.ports[direction];
    double demand = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
      demand += events[i].second;
      if (i + 1 == events.size()) break;
      const sim::Nanos a = events[i].first, b = events[i + 1].first;
      if (b <= a) continue;
      const double offered = demand + effects.background_load(link, a) * capacity;
      if (offered <= capacity * (1 + 1e-9)) continue;
      const double p = 1.0 - capacity / offered;
      const double dt = sim::to_seconds(b - a);
      port.queue_bytes += (params.ecn_kmin_bytes + (params.ecn_kmax_bytes - params.ecn_kmin_bytes) * p) * dt;
      port.ecn_marked += p * capacity * dt / params.mtu_bytes;
      port.overloaded_seconds += dt;
      auto& list = overloaded[direction];
      if (!list.empty() && list.back().second == a)
        list.back().second = b;
      else
        list.emplace_back(a, b);
    }
    port.queue_bytes /= sim::to_seconds(to - from);
  }

  const double cnp_interval = sim::to_seconds(params.cnp_interval);
  for (const FlowSegment& s : segments) {
    double congested = 0;
    for (int d : s.flow->directions)
      if (auto it = overloaded.find(d); it != overloaded.end())
        congested = std::max(congested, overlap_seconds(it->second, s.from, s.to));
    if (congested > 0) out.nics[s.flow->src].cnp += std::min(congested / cnp_interval, s.bytes / params.mtu_bytes);
  }
  return out;
}

}  // namespace gauntlet::models
