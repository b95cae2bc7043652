#include "models/telemetry/fabric_counters.hpp"

#include "models/roce_transport.hpp"
#include "sim/fec.hpp"

#include <algorithm>

namespace gauntlet::models {
namespace {

// The window's ends and the times inside it where the link's background
// load or loss may change, sorted.
std::vector<sim::Nanos> cut_points(const TelemetryEffects& effects, sim::LinkId link, sim::Nanos from, sim::Nanos to) {
  std::vector<sim::Nanos> out{from};
  const std::vector<sim::Nanos> inside = effects.link_change_times(link, from, to);
  out.insert(out.end(), inside.begin(), inside.end());
  out.push_back(to);
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

namespace {

// One window's measurement, step by step: traffic, background, congestion,
// CNPs and ECN marks, loss.
class FabricMeasure {
 public:
  FabricMeasure(const sim::Topology& topology, const TelemetryEffects& effects, sim::Nanos from, sim::Nanos to,
                const FabricCounterParams& params)
      : topology_(topology),
        effects_(effects),
        from_(from),
        to_(to),
        params_(params),
        directions_(2 * static_cast<std::size_t>(topology.links())),
        ports_(directions_),
        nics_(static_cast<std::size_t>(topology.endpoints())),
        steps_(directions_),
        overloaded_(directions_) {}

  void count_traffic(const std::vector<FlowSegment>& segments);
  void count_background();
  void find_congestion();
  void count_congestion_signals(const std::vector<FlowSegment>& segments);
  void count_loss(const std::vector<FlowSegment>& segments);
  // Each connection's bytes and resends (after count_loss, which leaves
  // each segment's resends in resent_).
  void count_flows(const std::vector<FlowSegment>& segments, FabricWindow* out) const;
  FabricWindow result() && {
    FabricWindow out;
    out.ports = std::move(ports_).sorted();
    out.nics = std::move(nics_).sorted();
    return out;
  }

 private:
  // A stretch a direction was overloaded, with what a flow crossing it sees.
  struct Congested {
    sim::Nanos from, to;
    double cnp_per_second;
    double marked_per_packet;
  };

  const sim::Topology& topology_;
  const TelemetryEffects& effects_;
  sim::Nanos from_, to_;
  const FabricCounterParams& params_;
  std::size_t directions_;
  Tally<PortWindow> ports_;
  Tally<NicWindow> nics_;
  Tally<std::vector<std::pair<sim::Nanos, double>>> steps_;  // demand steps per directed link
  Tally<std::vector<Congested>> overloaded_;
  std::vector<double> resent_;  // per segment, filled by count_loss
};

void FabricMeasure::count_traffic(const std::vector<FlowSegment>& segments) {
  for (const FlowSegment& s : segments) {
    nics_[s.flow->src].tx_bytes += s.bytes;
    nics_[s.flow->dst].rx_bytes += s.bytes;
    for (int d : s.flow->directions) {
      ports_[d].tx_bytes += s.bytes;
      if (s.moving()) {
        steps_[d].emplace_back(s.from, s.flow->demand);
        steps_[d].emplace_back(s.to, -s.flow->demand);
      }
    }
  }
}

// Background traffic crosses a loaded link in both directions.
void FabricMeasure::count_background() {
  for (sim::LinkId link : effects_.loaded_links()) {
    const double capacity = topology_.link_bytes_per_second(link);
    const std::vector<sim::Nanos> cuts = cut_points(effects_, link, from_, to_);
    double bytes = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
      bytes += effects_.background_load(link, cuts[i]) * capacity * sim::to_seconds(cuts[i + 1] - cuts[i]);
    if (bytes <= 0) continue;
    for (bool up : {true, false}) ports_[directed_link(link, up)].tx_bytes += bytes;
  }
}

// Per direction, the stretches it was overloaded: its queue and marks, and
// what a sender crossing it sees.
void FabricMeasure::find_congestion() {
  for (auto& [direction, events] : steps_.items()) {
    const sim::LinkId link = link_of_direction(direction);
    const double capacity = topology_.link_bytes_per_second(link);
    for (sim::Nanos t : cut_points(effects_, link, from_, to_)) events.emplace_back(t, 0.0);
    std::sort(events.begin(), events.end());
    PortWindow& port = ports_[direction];
    double demand = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
      demand += events[i].second;
      if (i + 1 == events.size()) break;
      const sim::Nanos a = events[i].first, b = events[i + 1].first;
      if (b <= a) continue;
      const double offered = demand + effects_.background_load(link, a) * capacity;
      if (offered <= capacity * (1 + 1e-9)) continue;
      const sim::LoadResponse r = sim::NetworkCalibration::load_response(*params_.ecn, offered / capacity);
      const double dt = sim::to_seconds(b - a);
      port.queue_bytes += sim::to_seconds(r.queueing_delay) * capacity * dt;
      port.ecn_marked += r.ecn_marked_per_packet * capacity * dt / params_.mtu_bytes;
      port.overloaded_seconds += dt;
      overloaded_[direction].push_back({a, b, r.cnp_per_second, r.ecn_marked_per_packet});
    }
    port.queue_bytes /= sim::to_seconds(to_ - from_);
  }
}

// A flow's CNPs (sent by its receiver, handled by its sender) and ECN-marked
// packets received, from the most congested port on its path.
void FabricMeasure::count_congestion_signals(const std::vector<FlowSegment>& segments) {
  for (const FlowSegment& s : segments) {
    double cnp = 0, marked = 0;
    const double span = sim::to_seconds(s.to - s.from);
    for (int d : s.flow->directions)
      if (const std::vector<Congested>* stretches = overloaded_.find(d)) {
        double cnp_here = 0, marked_here = 0;
        for (const Congested& c : *stretches) {
          const double overlap =
              sim::to_seconds(std::max<sim::Nanos>(0, std::min(c.to, s.to) - std::max(c.from, s.from)));
          cnp_here += c.cnp_per_second * overlap;
          if (span > 0) marked_here += c.marked_per_packet * s.bytes / params_.mtu_bytes * overlap / span;
        }
        cnp = std::max(cnp, cnp_here);
        marked = std::max(marked, marked_here);
      }
    if (cnp > 0) {
      cnp = std::min(cnp, s.bytes / params_.mtu_bytes);
      nics_[s.flow->src].cnp += cnp;
      nics_[s.flow->dst].cnp_sent += cnp;
    }
    if (marked > 0) nics_[s.flow->dst].ecn_marked_received += marked;
  }
}

// Loss: CRC errors where frames are corrupted, go-back-N's cost at the ends.
void FabricMeasure::count_loss(const std::vector<FlowSegment>& segments) {
  for (sim::LinkId link : effects_.lossy_links()) {
    const double loss = effects_.link_loss(link, from_);
    if (loss <= 0) continue;
    const sim::FecCounts fec =
        sim::fec_counts(sim::symbol_error_probability_for(loss, params_.mtu_bytes),
                        topology_.link_bytes_per_second(link) * 8 * sim::to_seconds(to_ - from_));
    for (bool up : {true, false}) {
      PortWindow& port = ports_[directed_link(link, up)];
      port.crc_errors += loss * port.tx_bytes / params_.mtu_bytes;
      port.fec_corrected += fec.corrected_codewords;
      port.fec_uncorrectable += fec.uncorrectable_codewords;
      port.fec_symbol_errors += fec.symbol_errors;
    }
  }
  const sim::Nanos round_trip = cross_spine_round_trip(topology_);
  resent_.assign(segments.size(), 0.0);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const FlowSegment& s = segments[i];
    double delivered = 1;
    for (int d : s.flow->directions) delivered *= 1 - effects_.link_loss(link_of_direction(d), s.from);
    if (delivered >= 1 || s.flow->directions.empty()) continue;
    const double rate = topology_.link_bytes_per_second(link_of_direction(s.flow->directions.front()));
    const sim::LossResponse r = params_.table->loss_response(
        1 - delivered, bdp_packets(rate, round_trip, RoceTransportParams{params_.mtu_bytes}));
    const double packets = s.bytes / params_.mtu_bytes;
    NicWindow& src = nics_[s.flow->src];
    src.retransmitted += r.retransmitted_per_packet * packets;
    resent_[i] = r.retransmitted_per_packet * packets;
    src.naks_received += r.naks_per_packet * packets;
    NicWindow& dst = nics_[s.flow->dst];
    dst.naks_sent += r.naks_per_packet * packets;
    // Go-back-N: the receiver discards what arrives past a hole, which is
    // what the sender sends again, less the lost packets themselves.
    dst.out_of_sequence += std::max(0.0, r.retransmitted_per_packet - (1 - delivered)) * packets;
  }
}

void FabricMeasure::count_flows(const std::vector<FlowSegment>& segments, FabricWindow* out) const {
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const FlowSegment& s = segments[i];
    if (s.bytes <= 0) continue;
    FlowWindow& flow = out->flows[{s.flow->src, s.flow->dst}];
    flow.bytes += s.bytes;
    flow.retransmitted += resent_[i];
    if (s.to >= flow.last_seen) {
      flow.last_seen = s.to;
      flow.directions = s.flow->directions;
    }
  }
}

}  // namespace

FabricWindow measure_fabric(const std::vector<FlowSegment>& segments, const sim::Topology& topology,
                            const TelemetryEffects& effects, sim::Nanos from, sim::Nanos to,
                            const FabricCounterParams& params, bool per_flow) {
  FabricMeasure measure(topology, effects, from, to, params);
  measure.count_traffic(segments);
  measure.count_background();
  measure.find_congestion();
  measure.count_congestion_signals(segments);
  measure.count_loss(segments);
  FabricWindow flows;
  if (per_flow) measure.count_flows(segments, &flows);
  FabricWindow out = std::move(measure).result();
  out.flows = std::move(flows.flows);
  return out;
}

}  // namespace gauntlet::models
