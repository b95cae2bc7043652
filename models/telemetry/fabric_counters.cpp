#include "models/telemetry/fabric_counters.hpp"

#include "models/roce_transport.hpp"

#include <algorithm>

namespace gauntlet::models {
namespace {

// Times inside (from, to) where a link's background load may change.
std::vector<sim::Nanos> cut_points(const std::vector<sim::Nanos>& changes, sim::Nanos from, sim::Nanos to) {
  std::vector<sim::Nanos> out{from, to};
  for (sim::Nanos t : changes)
    if (t > from && t < to) out.push_back(t);
  return out;
}

// Values by a dense key (a directed link, an endpoint), kept in the order
// first touched: a window touches tens of thousands of ports, each many
// times, and a tree lookup per touch cost more than the counting.
template <typename V>
class Tally {
 public:
  explicit Tally(std::size_t keys) : slot_(keys, -1) {}
  // The key's value, made on first use; valid until the next new key.
  V& operator[](int key) {
    int& slot = slot_[static_cast<std::size_t>(key)];
    if (slot < 0) {
      slot = static_cast<int>(items_.size());
      items_.emplace_back(key, V{});
    }
    return items_[static_cast<std::size_t>(slot)].second;
  }
  V* find(int key) {
    const int slot = slot_[static_cast<std::size_t>(key)];
    return slot < 0 ? nullptr : &items_[static_cast<std::size_t>(slot)].second;
  }
  std::vector<std::pair<int, V>>& items() { return items_; }
  std::map<int, V> sorted() && {
    std::sort(items_.begin(), items_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::map<int, V> out;
    for (auto& [key, value] : items_) out.emplace_hint(out.end(), key, std::move(value));
    return out;
  }

 private:
  std::vector<int> slot_;
  std::vector<std::pair<int, V>> items_;
};

}  // namespace

FabricCounterParams FabricCounterParams::from(const sim::Calibration& c, const sim::NetworkCalibration& table) {
  namespace k = calibration;
  return {c.value(k::kRnicMtu), &table,
          &table.ecn_profile(c.value(k::kEcnKmin), c.value(k::kEcnKmax), c.value(k::kEcnPmax))};
}

FabricWindow measure_fabric(const std::vector<FlowSegment>& segments, const sim::Topology& topology,
                            const TelemetryEffects& effects, sim::Nanos from, sim::Nanos to,
                            const FabricCounterParams& params) {
  const std::size_t directions = 2 * static_cast<std::size_t>(topology.links());
  Tally<PortWindow> ports(directions);
  Tally<NicWindow> nics(static_cast<std::size_t>(topology.endpoints()));
  const std::vector<sim::Nanos> changes = effects.change_times();

  // Demand steps per directed link.
  Tally<std::vector<std::pair<sim::Nanos, double>>> steps(directions);
  for (const FlowSegment& s : segments) {
    nics[s.flow->src].tx_bytes += s.bytes;
    nics[s.flow->dst].rx_bytes += s.bytes;
    for (int d : s.flow->directions) {
      ports[d].tx_bytes += s.bytes;
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
    for (bool up : {true, false}) ports[directed_link(link, up)].tx_bytes += bytes;
  }

  // Per direction, the stretches it was overloaded and the CNP rate a
  // sender crossing it handles in each.
  struct Congested {
    sim::Nanos from, to;
    double cnp_per_second;
  };
  Tally<std::vector<Congested>> overloaded(directions);
  for (auto& [direction, events] : steps.items()) {
    const sim::LinkId link = link_of_direction(direction);
    const double capacity = topology.link_bytes_per_second(link);
    for (sim::Nanos t : cut_points(changes, from, to)) events.emplace_back(t, 0.0);
    std::sort(events.begin(), events.end());
    PortWindow& port = ports[direction];
    double demand = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
      demand += events[i].second;
      if (i + 1 == events.size()) break;
      const sim::Nanos a = events[i].first, b = events[i + 1].first;
      if (b <= a) continue;
      const double offered = demand + effects.background_load(link, a) * capacity;
      if (offered <= capacity * (1 + 1e-9)) continue;
      const sim::LoadResponse r = sim::NetworkCalibration::load_response(*params.ecn, offered / capacity);
      const double dt = sim::to_seconds(b - a);
      port.queue_bytes += sim::to_seconds(r.queueing_delay) * capacity * dt;
      port.ecn_marked += r.ecn_marked_per_packet * capacity * dt / params.mtu_bytes;
      port.overloaded_seconds += dt;
      overloaded[direction].push_back({a, b, r.cnp_per_second});
    }
    port.queue_bytes /= sim::to_seconds(to - from);
  }

  for (const FlowSegment& s : segments) {
    double cnp = 0;
    for (int d : s.flow->directions)
      if (const std::vector<Congested>* stretches = overloaded.find(d)) {
        double here = 0;
        for (const Congested& c : *stretches)
          here += c.cnp_per_second *
                  sim::to_seconds(std::max<sim::Nanos>(0, std::min(c.to, s.to) - std::max(c.from, s.from)));
        cnp = std::max(cnp, here);
      }
    if (cnp > 0) nics[s.flow->src].cnp += std::min(cnp, s.bytes / params.mtu_bytes);
  }

  // Loss: CRC errors where frames are corrupted, go-back-N's cost at the ends.
  for (auto& [direction, port] : ports.items()) {
    const double loss = effects.link_loss(link_of_direction(direction), from);
    if (loss > 0) port.crc_errors += loss * port.tx_bytes / params.mtu_bytes;
  }
  const sim::Nanos round_trip = cross_spine_round_trip(topology);
  for (const FlowSegment& s : segments) {
    double delivered = 1;
    for (int d : s.flow->directions) delivered *= 1 - effects.link_loss(link_of_direction(d), s.from);
    if (delivered >= 1 || s.flow->directions.empty()) continue;
    const double rate = topology.link_bytes_per_second(link_of_direction(s.flow->directions.front()));
    const sim::LossResponse r = params.table->loss_response(
        1 - delivered, bdp_packets(rate, round_trip, RoceTransportParams{params.mtu_bytes}));
    const double packets = s.bytes / params.mtu_bytes;
    NicWindow& src = nics[s.flow->src];
    src.retransmitted += r.retransmitted_per_packet * packets;
    src.naks_received += r.naks_per_packet * packets;
    nics[s.flow->dst].naks_sent += r.naks_per_packet * packets;
  }
  FabricWindow out;
  out.ports = std::move(ports).sorted();
  out.nics = std::move(nics).sorted();
  return out;
}

}  // namespace gauntlet::models
