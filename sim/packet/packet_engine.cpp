#include "sim/packet/packet_engine.hpp"

#include <ns3/simulator.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/contract.hpp"
#include "sim/fec.hpp"
#include "sim/ecmp.hpp"
#include "sim/packet/background_traffic.hpp"
#include "sim/packet/packet_fabric.hpp"

namespace gauntlet::sim {
namespace {

bool engine_exists = false;
ns3::Time until_offset(Nanos at) {
  return ns3::NanoSeconds(std::max<Nanos>(0, at - ns3::Simulator::Now().GetNanoSeconds()));
}

}  // namespace

struct PacketEngine::Impl {
  Impl(const Topology& t, std::uint64_t s, const RoceParams& p, const std::vector<char>& footprint,
       std::uint64_t routing_seed)
      : topology(t),
        params(p),
        seed(s),
        router(topology, routing_seed),
        fabric(topology, router, params, s, footprint) {}

  Topology topology;
  RoceParams params;
  std::uint64_t seed;
  EcmpRouter router;
  packet::PacketFabric fabric;
  std::vector<PathState> link_states;
  std::vector<PathState> endpoint_states;
  std::uint64_t version = 0;
  Nanos current = 0;

  struct Timer {
    ns3::EventId event;
    TimerCallback callback;
  };
  std::unordered_map<TimerId, Timer> timers;
  TimerId next_timer = 0;

  struct Pending {
    EndpointId src = 0;
    EndpointId dst = 0;
    double bytes = 0;
    TransferCallback on_done;
    bool delivered = false;
  };
  std::unordered_map<TransferId, Pending> transfers;
  TransferId next_transfer = 0;
  std::vector<TransferListener> listeners;
  QpErrorHandler qp_error;

  // Packet-level faults in force, per link and cause.
  std::map<LinkId, std::map<std::string, double>> loss_causes;
  std::map<LinkId, std::map<std::string, double>> load_causes;

  Nanos convergence_delay = kSecond;
  std::multiset<Nanos> convergences;
  std::set<LinkId> drained;
  std::map<LinkId, std::unique_ptr<packet::BackgroundTraffic>> background;

  void notify(TransferEvent::Kind kind, TransferId id, const Pending& p, Nanos at) {
    for (const auto& listener : listeners) listener({kind, id, p.src, p.dst, p.bytes, at});
  }
  void on_delivered(TransferId id, PacketEngine& owner);
  void on_acked(TransferId id);
  void on_failed(TransferId id, PacketEngine& owner);
  void apply_link(LinkId link);
  void converge(LinkId link);
};

void PacketEngine::Impl::on_delivered(TransferId id, PacketEngine& owner) {
  auto it = transfers.find(id);
  if (it == transfers.end() || it->second.delivered) return;
  Pending& p = it->second;
  p.delivered = true;
  const Nanos now = owner.now();
  notify(TransferEvent::Kind::finished, id, p, now - owner.route_latency(p.src, p.dst));
  TransferCallback done = std::move(p.on_done);
  if (done) done(now);
}

// The sender's QP errored: its transfer never completes; the handler learns
// it (the run fails the job's collective, as NCCL does on a completion with
// IBV_WC_RETRY_EXC_ERR).
void PacketEngine::Impl::on_failed(TransferId id, PacketEngine& owner) {
  auto it = transfers.find(id);
  if (it == transfers.end()) return;
  (void)owner;
  const EndpointId src = it->second.src, dst = it->second.dst;
  fabric.rnic(dst).close_receive(static_cast<std::uint32_t>(id));
  transfers.erase(it);
  if (qp_error) qp_error(src, dst);
}

void PacketEngine::Impl::on_acked(TransferId id) {
  auto it = transfers.find(id);
  if (it == transfers.end()) return;
  // The responder acknowledges the last packet once it holds the message,
  // and the acknowledgement needs a hop back.
  GAUNTLET_INVARIANT(it->second.delivered, "transfer " + std::to_string(id) + " acknowledged before its delivery");
  fabric.rnic(it->second.dst).close_receive(static_cast<std::uint32_t>(id));
  transfers.erase(it);
}

// A link's state on both of its ports and its cable; an endpoint's flow
// table state (its slow path) adds to its host link's.
void PacketEngine::Impl::apply_link(LinkId link) {
  ++version;
  if (!fabric.built(link)) return;
  PathState s = link_states[static_cast<std::size_t>(link)];
  if (!topology.is_fabric_link(link)) {
    const PathState& e = endpoint_states[static_cast<std::size_t>(link)];
    s.bandwidth_factor *= e.bandwidth_factor;
    s.extra_latency += e.extra_latency;
    s.up = s.up && e.up;
  }
  for (packet::RocePort* port : {&fabric.lower_port(link), &fabric.upper_port(link)}) {
    port->set_down(!s.up);
    port->set_rate_factor(s.bandwidth_factor);
  }
  fabric.cable(link).set_extra_latency(s.extra_latency);
  // RNICs whose port came back resume sending.
  if (s.up && !topology.is_fabric_link(link)) fabric.rnic(link).wake();
}

void PacketEngine::Impl::converge(LinkId link) {
  const int leaf = topology.leaf_of_fabric_link(link);
  const int spine = topology.spine_of_fabric_link(link);
  const bool up = link_states[static_cast<std::size_t>(link)].up && !drained.count(link);
  if (router.fabric_link_usable(leaf, spine) == up) return;
  // Packets already queued keep their egress; later ones follow the new hash.
  router.set_fabric_link_usable(leaf, spine, up);
  ++version;
}

PacketEngine::PacketEngine(const Topology& topology, std::uint64_t seed, const RoceParams& params)
    : PacketEngine(topology, seed, params, {}, seed) {}

PacketEngine::PacketEngine(const Topology& topology, std::uint64_t seed, const RoceParams& params,
                           const std::vector<char>& footprint, std::uint64_t routing_seed) {
  if (engine_exists) throw std::logic_error("only one PacketEngine may exist per process (ns-3 is per-process)");
  engine_exists = true;
  impl_ = std::make_unique<Impl>(topology, seed, params, footprint, routing_seed);
  impl_->link_states.resize(static_cast<std::size_t>(topology.links()));
  impl_->endpoint_states.resize(static_cast<std::size_t>(topology.endpoints()));
  for (EndpointId e = 0; e < topology.endpoints(); ++e) {
    if (!impl_->fabric.built(topology.host_link(e))) continue;
    Impl* impl = impl_.get();
    impl_->fabric.rnic(e).set_handlers([impl, this](std::uint32_t qp) { impl->on_delivered(qp, *this); },
                                       [impl](std::uint32_t qp) { impl->on_acked(qp); },
                                       [impl, this](std::uint32_t qp) { impl->on_failed(qp, *this); });
  }
}

PacketEngine::~PacketEngine() {
  for (auto& [id, timer] : impl_->timers) ns3::Simulator::Cancel(timer.event);
  impl_->background.clear();
  impl_.reset();
  ns3::Simulator::Destroy();  // the next engine starts from time zero
  engine_exists = false;
}

const Topology& PacketEngine::topology() const { return impl_->topology; }

Nanos PacketEngine::now() const { return std::max(impl_->current, ns3::Simulator::Now().GetNanoSeconds()); }

TimerId PacketEngine::schedule_at(Nanos at, TimerCallback callback) {
  const TimerId id = ++impl_->next_timer;
  Impl* impl = impl_.get();
  Impl::Timer& timer = impl_->timers[id];
  timer.callback = std::move(callback);
  timer.event = ns3::Simulator::Schedule(until_offset(std::max(at, now())), [impl, id] {
    auto node = impl->timers.extract(id);
    if (!node.empty() && node.mapped().callback) node.mapped().callback();
  });
  return id;
}

void PacketEngine::cancel(TimerId id) {
  auto it = impl_->timers.find(id);
  if (it == impl_->timers.end()) return;
  ns3::Simulator::Cancel(it->second.event);
  impl_->timers.erase(it);
}

TransferId PacketEngine::start_transfer(EndpointId src, EndpointId dst, double bytes, TransferCallback on_done) {
  const TransferId id = ++impl_->next_transfer;
  if (id > std::numeric_limits<std::uint32_t>::max()) throw std::overflow_error("packet engine: QP numbers exhausted");
  Impl::Pending pending{src, dst, bytes, std::move(on_done), false};
  impl_->notify(TransferEvent::Kind::started, id, pending, now());
  if (src != dst && bytes > 0)
    for (LinkId link : route(src, dst))
      if (!impl_->fabric.built(link)) throw std::logic_error("packet engine: a transfer over a link not built");
  if (src == dst || bytes <= 0) {
    // Nothing crosses the network: done after the route's latency.
    TransferCallback done = std::move(pending.on_done);
    schedule_at(now() + route_latency(src, dst), [this, done] {
      if (done) done(now());
    });
    return id;
  }
  const bool fresh = impl_->transfers.emplace(id, std::move(pending)).second;
  GAUNTLET_INVARIANT(fresh, "transfer " + std::to_string(id) + " started twice");
  // The QPs of one RNIC pair share a UDP source port, so ECMP's 5-tuple hash
  // keeps them on the connection's spine.
  impl_->fabric.rnic(src).post_send(static_cast<std::uint32_t>(id), dst, bytes, connection_source_port(src, dst));
  return id;
}

void PacketEngine::set_link_state(LinkId link, const PathState& state) {
  const bool was_up = impl_->link_states.at(static_cast<std::size_t>(link)).up;
  impl_->link_states.at(static_cast<std::size_t>(link)) = state;
  impl_->apply_link(link);
  if (impl_->topology.is_fabric_link(link) && was_up != state.up) {
    const Nanos at = now() + impl_->convergence_delay;
    impl_->convergences.insert(at);
    schedule_at(at, [this, link, at] {
      impl_->convergences.erase(impl_->convergences.find(at));
      impl_->converge(link);
    });
  }
}

void PacketEngine::set_endpoint_state(EndpointId endpoint, const PathState& state) {
  impl_->endpoint_states.at(static_cast<std::size_t>(endpoint)) = state;
  impl_->apply_link(impl_->topology.host_link(endpoint));
}

const PathState& PacketEngine::link_state(LinkId link) const {
  return impl_->link_states.at(static_cast<std::size_t>(link));
}

const PathState& PacketEngine::endpoint_state(EndpointId endpoint) const {
  return impl_->endpoint_states.at(static_cast<std::size_t>(endpoint));
}

std::vector<LinkId> PacketEngine::route(EndpointId src, EndpointId dst) const { return impl_->router.route(src, dst); }

std::vector<LinkId> PacketEngine::route_from_port(EndpointId src, EndpointId dst, std::uint16_t source_port) const {
  return impl_->router.route(src, dst, source_port);
}

Nanos PacketEngine::route_latency(EndpointId src, EndpointId dst) const {
  Nanos total = endpoint_state(src).extra_latency + endpoint_state(dst).extra_latency;
  for (LinkId link : route(src, dst)) total += impl_->topology.shape().link_latency + link_state(link).extra_latency;
  return total;
}

// Runs every event up to and including `until`: ns-3 stops before events
// scheduled for `until` after the stop itself, so those run in further
// zero-length rounds until a round runs nothing but its stop.
void PacketEngine::run_until(Nanos until) {
  if (until < now()) return;
  ns3::Simulator::Stop(until_offset(until));
  ns3::Simulator::Run();
  for (;;) {
    const std::uint64_t before = ns3::Simulator::GetEventCount();
    ns3::Simulator::Stop(ns3::Seconds(0));
    ns3::Simulator::Run();
    if (ns3::Simulator::GetEventCount() - before <= 1) break;
  }
  // No event past `until` ran, so a caller may still schedule what comes next.
  GAUNTLET_INVARIANT(
      ns3::Simulator::Now().GetNanoSeconds() <= until,
      "ran to " + std::to_string(ns3::Simulator::Now().GetNanoSeconds()) + " ns, asked " + std::to_string(until));
  impl_->current = until;
}

std::uint64_t PacketEngine::state_version() const { return impl_->version; }
void PacketEngine::add_transfer_listener(TransferListener listener) { impl_->listeners.push_back(std::move(listener)); }

double PacketEngine::transfer_progress(TransferId id) const {
  auto it = impl_->transfers.find(id);
  if (it == impl_->transfers.end()) return 0;
  return std::min(it->second.bytes, impl_->fabric.rnic(it->second.src).bytes_sent(static_cast<std::uint32_t>(id)));
}

double PacketEngine::transfer_acknowledged(TransferId id) const {
  auto it = impl_->transfers.find(id);
  if (it == impl_->transfers.end()) return 0;
  return std::min(it->second.bytes,
                  impl_->fabric.rnic(it->second.src).bytes_acknowledged(static_cast<std::uint32_t>(id)));
}

double PacketEngine::transfer_rate(TransferId id) const {
  auto it = impl_->transfers.find(id);
  if (it == impl_->transfers.end()) return 0;
  return impl_->fabric.rnic(it->second.src).rate_of(static_cast<std::uint32_t>(id));
}

Nanos PacketEngine::next_internal_change() const {
  auto it = impl_->convergences.upper_bound(now());
  return it == impl_->convergences.end() ? std::numeric_limits<Nanos>::max() : *it;
}

bool PacketEngine::set_fabric_link_drained(LinkId link, bool drained) {
  if (!impl_->topology.is_fabric_link(link) || link >= impl_->topology.links()) return false;
  if (drained)
    impl_->drained.insert(link);
  else
    impl_->drained.erase(link);
  impl_->converge(link);
  return true;
}

void PacketEngine::set_qp_error_handler(QpErrorHandler handler) { impl_->qp_error = std::move(handler); }

void PacketEngine::set_convergence_delay(Nanos delay) { impl_->convergence_delay = std::max<Nanos>(0, delay); }

void PacketEngine::set_link_loss(LinkId link, const std::string& cause, double rate) {
  std::map<std::string, double>& causes = impl_->loss_causes[link];
  if (rate > 0)
    causes[cause] = rate;
  else
    causes.erase(cause);
  ++impl_->version;
  if (!impl_->fabric.built(link)) return;
  double delivered = 1.0;  // independent drops
  for (const auto& [name, r] : causes) delivered *= 1.0 - r;
  // Some frames always get through: a loss of 1 is a link down, not a loss.
  GAUNTLET_INVARIANT(delivered > 0 && delivered <= 1, "delivered share " + std::to_string(delivered));
  // The rate is a full data frame's loss; shorter frames lose less, each
  // port drawing by the frame's length (sim/fec.hpp).
  const TransportParams& t = impl_->params.transport;
  const double data_frame = t.mtu_payload + t.header_bytes;
  const bool rs_fec = impl_->topology.link_bytes_per_second(link) * 8 >= kRsFecFromGbps * 1e9;
  impl_->fabric.lower_port(link).set_receive_loss(1.0 - delivered, data_frame, rs_fec);
  impl_->fabric.upper_port(link).set_receive_loss(1.0 - delivered, data_frame, rs_fec);
}

void PacketEngine::set_background_load(LinkId link, const std::string& cause, double share) {
  std::map<std::string, double>& causes = impl_->load_causes[link];
  if (share > 0)
    causes[cause] = share;
  else
    causes.erase(cause);
  // Each cause's tenants take their share of the capacity the others leave,
  // as the flow engine and the telemetry compose them.
  double free = 1.0;
  for (const auto& [name, l] : causes) free *= 1.0 - std::min(l, 1.0);
  const double load = 1.0 - free;
  GAUNTLET_INVARIANT(load >= 0 && load <= 1, "background load " + std::to_string(load));
  impl_->background.erase(link);
  if (load > 0 && impl_->fabric.built(link))
    impl_->background.emplace(
        link, std::make_unique<packet::BackgroundTraffic>(impl_->fabric.lower_port(link),
                                                          impl_->fabric.upper_port(link), load, impl_->params));
  ++impl_->version;
}

void PacketEngine::start_pfc_storm_from_endpoint(EndpointId endpoint, Nanos until) {
  if (impl_->fabric.built(impl_->topology.host_link(endpoint))) impl_->fabric.rnic(endpoint).storm_pause(until);
  ++impl_->version;
}

void PacketEngine::start_pfc_storm_from_leaf(LinkId link, Nanos until) {
  const Topology& t = impl_->topology;
  ++impl_->version;
  if (!impl_->fabric.built(link)) return;
  if (t.is_fabric_link(link)) {
    impl_->fabric.leaf(t.leaf_of_fabric_link(link)).storm_pause(impl_->fabric.leaf_port_of_link(link), until);
  } else {
    impl_->fabric.leaf(t.leaf_of(link)).storm_pause(impl_->fabric.leaf_port_of_endpoint(link), until);
  }
}

PacketPortCounters PacketEngine::port_counters(LinkId link, bool upward) const {
  if (!impl_->fabric.built(link)) return {};
  const packet::RocePort& tx = upward ? impl_->fabric.lower_port(link) : impl_->fabric.upper_port(link);
  const packet::RocePort& rx = upward ? impl_->fabric.upper_port(link) : impl_->fabric.lower_port(link);
  const packet::PortCounters& t = tx.counters();
  const packet::PortCounters& r = rx.counters();
  // A cable makes no frames: the far end receives (or finds corrupted) at
  // most what this end sent; the rest is on the wire or was cut off.
  GAUNTLET_INVARIANT(r.rx_packets + r.crc_errors <= t.tx_packets && r.rx_bytes <= t.tx_bytes,
                     "link " + impl_->topology.link_name(link) + " delivered more than it carried");
  PacketPortCounters out;
  out.tx_bytes = t.tx_bytes;
  out.tx_packets = t.tx_packets;
  out.ecn_marked = t.ecn_marked;
  out.pause_sent = r.pause_sent;
  out.pause_received = t.pause_received;
  out.drops = t.drops;
  out.crc_errors = r.crc_errors;
  out.queue_byte_ns = t.queue_byte_ns;
  out.paused_ns = t.paused_ns;
  out.pfcwd_detected = t.pfcwd_detected;
  out.pfcwd_restored = t.pfcwd_restored;
  out.pfcwd_tx_dropped = t.pfcwd_tx_dropped;
  out.pfcwd_rx_dropped = t.pfcwd_rx_dropped;
  return out;
}

PacketRnicCounters PacketEngine::rnic_counters(EndpointId endpoint) const {
  if (!impl_->fabric.built(impl_->topology.host_link(endpoint))) return {};
  const packet::Rnic& rnic = impl_->fabric.rnic(endpoint);
  const packet::PortCounters& p = rnic.port().counters();
  const packet::RnicCounters& c = rnic.counters();
  PacketRnicCounters out;
  out.tx_bytes = p.tx_bytes;
  out.rx_bytes = p.rx_bytes;
  out.tx_packets = p.tx_packets;
  out.rx_packets = p.rx_packets;
  out.retransmitted_packets = c.retransmitted_packets;
  out.naks_sent = c.naks_sent;
  out.naks_received = c.naks_received;
  out.out_of_sequence = c.out_of_sequence;
  out.cnp_sent = c.cnp_sent;
  out.cnp_handled = c.cnp_handled;
  out.timeouts = c.timeouts;
  out.qp_errors = c.qp_errors;
  out.ecn_marked_received = c.ecn_marked_received;
  out.pause_storm_errors = c.pause_storm_errors;
  return out;
}

Nanos PacketEngine::queueing_delay(LinkId link) const {
  if (!impl_->fabric.built(link)) return 0;
  double seconds = 0;
  for (const packet::RocePort* port : {&impl_->fabric.lower_port(link), &impl_->fabric.upper_port(link)})
    seconds += port->queued_bytes(impl_->params.data_priority) / port->bytes_per_second();
  return static_cast<Nanos>(seconds / 2 * 1e9);
}

std::uint64_t PacketEngine::events_executed() const { return ns3::Simulator::GetEventCount(); }

std::uint64_t PacketEngine::packet_hops() const {
  std::uint64_t hops = 0;
  for (LinkId link = 0; link < impl_->fabric.links(); ++link)
    if (impl_->fabric.built(link))
      hops +=
          impl_->fabric.lower_port(link).counters().tx_packets + impl_->fabric.upper_port(link).counters().tx_packets;
  return hops;
}

}  // namespace gauntlet::sim
