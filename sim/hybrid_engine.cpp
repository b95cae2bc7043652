#include "sim/hybrid_engine.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "sim/contract.hpp"
#include "sim/rng.hpp"

namespace gauntlet::sim {
namespace {

// Transfers of packet batches are numbered apart from the flow engine's.
constexpr TransferId kBatchIds = TransferId{1} << 62;

void add(PacketPortCounters& to, const PacketPortCounters& c) {
  to.tx_bytes += c.tx_bytes;
  to.tx_packets += c.tx_packets;
  to.ecn_marked += c.ecn_marked;
  to.pause_sent += c.pause_sent;
  to.pause_received += c.pause_received;
  to.drops += c.drops;
  to.crc_errors += c.crc_errors;
  to.queue_byte_ns += c.queue_byte_ns;
  to.paused_ns += c.paused_ns;
  to.pfcwd_detected += c.pfcwd_detected;
  to.pfcwd_restored += c.pfcwd_restored;
  to.pfcwd_tx_dropped += c.pfcwd_tx_dropped;
  to.pfcwd_rx_dropped += c.pfcwd_rx_dropped;
}

void add(PacketRnicCounters& to, const PacketRnicCounters& c) {
  to.tx_bytes += c.tx_bytes;
  to.rx_bytes += c.rx_bytes;
  to.tx_packets += c.tx_packets;
  to.rx_packets += c.rx_packets;
  to.retransmitted_packets += c.retransmitted_packets;
  to.naks_sent += c.naks_sent;
  to.naks_received += c.naks_received;
  to.out_of_sequence += c.out_of_sequence;
  to.cnp_sent += c.cnp_sent;
  to.cnp_handled += c.cnp_handled;
  to.timeouts += c.timeouts;
  to.qp_errors += c.qp_errors;
  to.ecn_marked_received += c.ecn_marked_received;
  to.pause_storm_errors += c.pause_storm_errors;
}

}  // namespace

struct HybridEngine::Impl {
  Impl(const Topology& t, std::uint64_t s, const HybridParams& p)
      : seed(s),
        params(p),
        flow(t, s),
        ports(static_cast<std::size_t>(t.links()) * 2),
        rnics(static_cast<std::size_t>(t.endpoints())) {}

  HybridEngine* owner = nullptr;  // transfers re-enter through it
  std::uint64_t seed;
  HybridParams params;
  FlowEngine flow;
  std::uint64_t version = 0;  // packet fault changes

  // Packet faults in force, per link (or endpoint) and cause.
  std::map<LinkId, std::map<std::string, double>> losses;
  std::map<LinkId, std::map<std::string, double>> loads;
  std::map<EndpointId, Nanos> endpoint_storms;  // until
  std::map<LinkId, Nanos> leaf_storms;

  struct Member {
    TransferId id = 0;
    EndpointId src = 0;
    EndpointId dst = 0;
    double bytes = 0;
    TransferCallback on_done;
  };
  std::vector<Member> pending;  // started at this instant, not simulated yet
  bool flush_scheduled = false;
  TransferId next_id = kBatchIds;

  // A batch transfer's sending span, for its progress.
  struct Span {
    double bytes = 0;
    Nanos start = 0;
    Nanos sent = -1;  // its last byte left; -1: not simulated yet
  };
  std::unordered_map<TransferId, Span> spans;
  std::vector<TransferListener> listeners;

  std::vector<PacketPortCounters> ports;  // link * 2 + upward
  std::vector<PacketRnicCounters> rnics;
  std::uint64_t transfers = 0;
  std::uint64_t batches = 0;
  std::uint64_t hops = 0;

  void notify(TransferEvent::Kind kind, const Member& m, Nanos at) {
    for (const auto& listener : listeners) listener({kind, m.id, m.src, m.dst, m.bytes, at});
  }
  bool storming(const std::map<int, Nanos>& storms, int key) const {
    auto it = storms.find(key);
    return it != storms.end() && it->second > flow.now();
  }
  bool faulted(LinkId link) const { return losses.count(link) || loads.count(link) || storm_holds(link); }
  // The link's port storms, or it feeds a switch a storm pauses.
  bool storm_holds(LinkId link) const {
    const Topology& t = flow.topology();
    return storming(leaf_storms, link) || (!t.is_fabric_link(link) && storming(endpoint_storms, link)) ||
           feeds_paused_switch(link);
  }
  // A storm pauses one switch's egress; its shared buffer fills with frames
  // for the stormer, and PFC then pauses every port feeding that switch, so
  // traffic that only passes through it waits too (head-of-line blocking).
  // An RNIC's storm pauses its leaf; a leaf port's storm on a fabric link
  // pauses that spine. The links into the paused switch go to packet level
  // with the storm's own: one hop of the spread. On packets a switch whose
  // buffer fills behind the paused one pauses its own feeders in turn.
  bool feeds_paused_switch(LinkId link) const {
    const Topology& t = flow.topology();
    const bool fabric = t.is_fabric_link(link);
    const int leaf = fabric ? t.leaf_of_fabric_link(link) : t.leaf_of(link);
    for (const auto& [endpoint, until] : endpoint_storms)
      if (until > flow.now() && t.leaf_of(endpoint) == leaf) return true;
    if (!fabric) return false;
    const int spine = t.spine_of_fabric_link(link);
    for (const auto& [stormed, until] : leaf_storms)
      if (until > flow.now() && t.is_fabric_link(stormed) && t.spine_of_fabric_link(stormed) == spine) return true;
    return false;
  }
  bool storm_on_route(EndpointId src, EndpointId dst) const {
    const std::vector<LinkId> path = flow.route(src, dst);
    return std::any_of(path.begin(), path.end(), [this](LinkId link) { return storm_holds(link); });
  }
  // One batch simulated on its own fabric, from now, for at most `horizon`.
  struct Batch {
    std::vector<Nanos> delivered;                           // per transfer, after the start; -1: not within the horizon
    std::vector<double> acknowledged;                       // per undelivered transfer, its bytes acknowledged in order
    Nanos span = 0;                                         // until the last delivery, or the horizon
    std::vector<std::pair<int, PacketPortCounters>> ports;  // by link * 2 + upward
    std::vector<std::pair<EndpointId, PacketRnicCounters>> rnics;
    std::uint64_t hops = 0;
  };
  Batch run_batch(const std::vector<TransferRequest>& requests, Nanos horizon);
  // Accounts a batch run now, its counters from its end on.
  void count(Batch batch, std::size_t members);
  void flush();
  void simulate(std::vector<Member> members);
};

// The batch of this instant: every transfer started at it that goes to
// packet level, in the order they started.
void HybridEngine::Impl::flush() {
  flush_scheduled = false;
  std::vector<Member> members = std::move(pending);
  pending.clear();
  if (!members.empty()) simulate(std::move(members));
}

HybridEngine::Impl::Batch HybridEngine::Impl::run_batch(const std::vector<TransferRequest>& requests, Nanos horizon) {
  const Topology& t = flow.topology();
  const Nanos start = flow.now();
  std::vector<char> footprint(static_cast<std::size_t>(t.links()), 0);
  // Acknowledgements, NAKs and CNPs travel back over the reverse route,
  // which ECMP hashes on its own.
  for (const TransferRequest& r : requests)
    for (const std::vector<LinkId>& path : {flow.route(r.src, r.dst), flow.route(r.dst, r.src)})
      for (LinkId link : path) footprint[static_cast<std::size_t>(link)] = 1;
  Batch out;
  out.delivered.assign(requests.size(), -1);
  out.acknowledged.assign(requests.size(), 0);
  PacketEngine batch(t, mix_seed(seed, "hybrid/batch", batches), params.roce, footprint, seed);
  batch.set_convergence_delay(0);
  // Routing as the flow engine's has converged, so packets take its routes.
  for (int leaf = 0; leaf < t.leaves(); ++leaf)
    for (int spine = 0; spine < t.spines(); ++spine)
      if (!flow.router().fabric_link_usable(leaf, spine))
        batch.set_fabric_link_drained(t.fabric_link(leaf, spine), true);
  for (LinkId link = 0; link < t.links(); ++link) {
    if (!footprint[static_cast<std::size_t>(link)]) continue;
    if (flow.link_state(link) != PathState{}) batch.set_link_state(link, flow.link_state(link));
    if (!t.is_fabric_link(link) && flow.endpoint_state(link) != PathState{})
      batch.set_endpoint_state(link, flow.endpoint_state(link));
    if (auto it = losses.find(link); it != losses.end())
      for (const auto& [cause, rate] : it->second) batch.set_link_loss(link, cause, rate);
    if (auto it = loads.find(link); it != loads.end())
      for (const auto& [cause, load] : it->second) batch.set_background_load(link, cause, load);
    if (storming(leaf_storms, link)) batch.start_pfc_storm_from_leaf(link, leaf_storms.at(link) - start);
    if (!t.is_fabric_link(link) && storming(endpoint_storms, link))
      batch.start_pfc_storm_from_endpoint(link, endpoint_storms.at(link) - start);
  }
  std::vector<TransferId> ids;
  std::size_t left = requests.size();
  for (std::size_t i = 0; i < requests.size(); ++i)
    ids.push_back(batch.start_transfer(requests[i].src, requests[i].dst, requests[i].bytes, [&out, &left, i](Nanos at) {
      out.delivered[i] = at;
      --left;
    }));
  for (Nanos step = kMillisecond; left > 0 && batch.now() < horizon; step = std::min(2 * step, horizon))
    batch.run_until(std::min(batch.now() + step, horizon));
  // Each transfer delivered once, within the horizon, or not at all.
  GAUNTLET_INVARIANT(
      std::all_of(out.delivered.begin(), out.delivered.end(), [horizon](Nanos at) { return at <= horizon; }) &&
          left == static_cast<std::size_t>(std::count(out.delivered.begin(), out.delivered.end(), -1)),
      std::to_string(left) + " of " + std::to_string(requests.size()) + " transfers left");
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (out.delivered[i] < 0) out.acknowledged[i] = batch.transfer_acknowledged(ids[i]);
    out.span = std::max(out.span, out.delivered[i] < 0 ? horizon : out.delivered[i]);
  }
  for (LinkId link = 0; link < t.links(); ++link) {
    if (!footprint[static_cast<std::size_t>(link)]) continue;
    for (bool upward : {false, true})
      out.ports.emplace_back(link * 2 + (upward ? 1 : 0), batch.port_counters(link, upward));
    if (!t.is_fabric_link(link)) out.rnics.emplace_back(link, batch.rnic_counters(link));
  }
  out.hops = batch.packet_hops();
  return out;
}

void HybridEngine::Impl::count(Batch batch, std::size_t members) {
  GAUNTLET_INVARIANT(members > 0 && batch.span >= 0, "a batch of " + std::to_string(members) + " transfers");
  ++batches;
  transfers += members;
  hops += batch.hops;
  // Each batch is a draw of its own (loss, marks), not a state a job may
  // repeat: the state version moves, so iterations are not fast-forwarded.
  ++version;
  // The counters count when the batch's packets are done, as a packet
  // engine's would have counted them by then (a timeout late, not early).
  flow.schedule_at(flow.now() + batch.span,
                   [this, ports_counted = std::move(batch.ports), rnics_counted = std::move(batch.rnics)] {
                     for (const auto& [index, c] : ports_counted) add(ports[static_cast<std::size_t>(index)], c);
                     for (const auto& [endpoint, c] : rnics_counted) add(rnics[static_cast<std::size_t>(endpoint)], c);
                   });
}

void HybridEngine::Impl::simulate(std::vector<Member> members) {
  const Nanos start = flow.now();
  // A batch holds the transfers that started at this one instant, each
  // still waiting for its outcome.
  for (const Member& m : members) {
    auto span = spans.find(m.id);
    GAUNTLET_INVARIANT(span != spans.end() && span->second.start == start && span->second.sent < 0,
                       "transfer " + std::to_string(m.id) + " batched out of its instant");
  }
  std::vector<TransferRequest> requests;
  for (const Member& m : members) requests.push_back({m.src, m.dst, m.bytes});
  Batch batch = run_batch(requests, params.batch_horizon);
  const std::vector<Nanos> delivered = batch.delivered;
  const std::vector<double> acknowledged = batch.acknowledged;
  count(std::move(batch), members.size());

  ReplayLedger* ledger = flow.replays();
  GAUNTLET_INVARIANT(ledger != nullptr && delivered.size() == members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    Member m = std::move(members[i]);
    if (delivered[i] >= 0) {
      const Nanos latency = flow.route_latency(m.src, m.dst);
      spans[m.id].sent = start + std::max<Nanos>(0, delivered[i] - latency);
      flow.schedule_at(start + delivered[i], [this, ledger, m = std::move(m), latency] {
        spans.erase(m.id);
        notify(TransferEvent::Kind::finished, m, flow.now() - latency);
        ledger->transfer_delivered();
        if (m.on_done) m.on_done(flow.now());
      });
      continue;
    }
    // Not delivered within the horizon: the rest goes on at flow level,
    // which models loss and congestion but not a storm; while one still
    // holds its route, the rest goes to a batch of that instant instead.
    spans[m.id].sent = start + params.batch_horizon;
    const double rest = std::max(1.0, m.bytes - acknowledged[i]);
    flow.schedule_at(start + params.batch_horizon, [this, ledger, m = std::move(m), rest] {
      spans.erase(m.id);
      notify(TransferEvent::Kind::finished, m, flow.now());
      ledger->transfer_delivered();
      // The hybrid's own start sends it to flow level if its route went down.
      NetworkEngine& next = storm_on_route(m.src, m.dst) ? static_cast<NetworkEngine&>(*owner) : flow;
      next.start_transfer(m.src, m.dst, rest, m.on_done);
    });
  }
}

HybridEngine::HybridEngine(const Topology& topology, std::uint64_t seed, const HybridParams& params)
    : impl_(std::make_unique<Impl>(topology, seed, params)) {
  impl_->owner = this;
}

HybridEngine::~HybridEngine() = default;

FlowEngine& HybridEngine::flow() { return impl_->flow; }
const Topology& HybridEngine::topology() const { return impl_->flow.topology(); }
Nanos HybridEngine::now() const { return impl_->flow.now(); }
TimerId HybridEngine::schedule_at(Nanos at, TimerCallback callback) {
  return impl_->flow.schedule_at(at, std::move(callback));
}
void HybridEngine::cancel(TimerId id) { impl_->flow.cancel(id); }
void HybridEngine::set_link_state(LinkId link, const PathState& state) { impl_->flow.set_link_state(link, state); }
void HybridEngine::set_endpoint_state(EndpointId endpoint, const PathState& state) {
  impl_->flow.set_endpoint_state(endpoint, state);
}
const PathState& HybridEngine::link_state(LinkId link) const { return impl_->flow.link_state(link); }
const PathState& HybridEngine::endpoint_state(EndpointId endpoint) const {
  return impl_->flow.endpoint_state(endpoint);
}
std::vector<LinkId> HybridEngine::route(EndpointId src, EndpointId dst) const { return impl_->flow.route(src, dst); }

std::vector<LinkId> HybridEngine::route_from_port(EndpointId src, EndpointId dst, std::uint16_t source_port) const {
  return impl_->flow.route_from_port(src, dst, source_port);
}
Nanos HybridEngine::route_latency(EndpointId src, EndpointId dst) const { return impl_->flow.route_latency(src, dst); }
void HybridEngine::run_until(Nanos until) { impl_->flow.run_until(until); }
// Both counts only grow, so their sum changes whenever either does.
std::uint64_t HybridEngine::state_version() const { return impl_->flow.state_version() + impl_->version; }
Nanos HybridEngine::next_internal_change() const { return impl_->flow.next_internal_change(); }
bool HybridEngine::set_fabric_link_drained(LinkId link, bool drained) {
  return impl_->flow.set_fabric_link_drained(link, drained);
}

void HybridEngine::add_transfer_listener(TransferListener listener) {
  impl_->listeners.push_back(listener);
  impl_->flow.add_transfer_listener(std::move(listener));
}

bool HybridEngine::packet_faults_active() const {
  auto storming = [this](const std::map<int, Nanos>& storms) {
    return std::any_of(storms.begin(), storms.end(), [this](const auto& s) { return s.second > now(); });
  };
  return !impl_->losses.empty() || !impl_->loads.empty() || storming(impl_->endpoint_storms) ||
         storming(impl_->leaf_storms);
}

ReplayLedger* HybridEngine::replays() { return impl_->flow.replays(); }

// While packet faults last, every batch moves the version: no outcome
// recorded then ever replays, and none recorded without them replays then.
std::uint64_t HybridEngine::outcome_salt() const { return packet_faults_active() ? impl_->version : 0; }

// The transfers at packet level go to a batch of their own, the others to
// the flow engine's simulation apart; both are outcomes on an idle network.
std::optional<std::vector<Nanos>> HybridEngine::simulate_apart(const std::vector<TransferRequest>& transfers,
                                                               Nanos limit) {
  if (!packet_faults_active()) return impl_->flow.simulate_apart(transfers, limit);
  std::vector<TransferRequest> packets, flows;
  std::vector<std::size_t> packet_index, flow_index;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const bool packet = transfers[i].bytes > 0 && at_packet_level(transfers[i].src, transfers[i].dst);
    (packet ? packets : flows).push_back(transfers[i]);
    (packet ? packet_index : flow_index).push_back(i);
  }
  std::vector<Nanos> offsets(transfers.size(), 0);
  if (!flows.empty()) {
    const std::optional<std::vector<Nanos>> flow_offsets = impl_->flow.simulate_apart(flows, limit);
    if (!flow_offsets) return std::nullopt;
    for (std::size_t k = 0; k < flows.size(); ++k) offsets[flow_index[k]] = (*flow_offsets)[k];
  }
  if (packets.empty()) return offsets;
  Impl::Batch batch = impl_->run_batch(packets, std::min(limit, impl_->params.batch_horizon));
  GAUNTLET_INVARIANT(batch.delivered.size() == packets.size() &&
                     batch.span <= std::min(limit, impl_->params.batch_horizon));
  for (std::size_t k = 0; k < packets.size(); ++k) {
    if (batch.delivered[k] < 0) return std::nullopt;  // left to be simulated in place
    offsets[packet_index[k]] = batch.delivered[k];
  }
  impl_->count(std::move(batch), packets.size());
  return offsets;
}

bool HybridEngine::at_packet_level(EndpointId src, EndpointId dst) const {
  if (src == dst || !packet_faults_active()) return false;
  const FlowEngine& flow = impl_->flow;
  if (!flow.endpoint_state(src).up || !flow.endpoint_state(dst).up) return false;
  bool faulted = false;
  for (LinkId link : flow.route(src, dst)) {
    if (!flow.link_state(link).up) return false;
    faulted = faulted || impl_->faulted(link);
  }
  return faulted;
}

TransferId HybridEngine::start_transfer(EndpointId src, EndpointId dst, double bytes, TransferCallback on_done) {
  if (bytes <= 0 || !at_packet_level(src, dst)) {
    const TransferId id = impl_->flow.start_transfer(src, dst, bytes, std::move(on_done));
    // transfer_progress tells the two apart by number.
    GAUNTLET_INVARIANT(id < kBatchIds, "the flow engine's transfer " + std::to_string(id) + " among the batches'");
    return id;
  }
  Impl::Member m{++impl_->next_id, src, dst, bytes, std::move(on_done)};
  impl_->notify(TransferEvent::Kind::started, m, now());
  impl_->flow.replays()->transfer_started();
  impl_->spans[m.id] = {bytes, now(), -1};
  const TransferId id = m.id;
  impl_->pending.push_back(std::move(m));
  if (!impl_->flush_scheduled) {
    impl_->flush_scheduled = true;
    Impl* impl = impl_.get();
    impl_->flow.schedule_at(now(), [impl] { impl->flush(); });
  }
  return id;
}

double HybridEngine::transfer_progress(TransferId id) const {
  if (id < kBatchIds) return impl_->flow.transfer_progress(id);
  auto it = impl_->spans.find(id);
  if (it == impl_->spans.end() || it->second.sent < 0) return 0;
  const Impl::Span& s = it->second;
  GAUNTLET_INVARIANT(s.sent >= s.start, "transfer " + std::to_string(id) + " sent before it started");
  // The batch knows when the last byte left, not each byte: linear between.
  if (now() >= s.sent || s.sent <= s.start) return s.bytes;
  return s.bytes * static_cast<double>(now() - s.start) / static_cast<double>(s.sent - s.start);
}

namespace {

void set_cause(std::map<LinkId, std::map<std::string, double>>& causes, LinkId link, const std::string& cause,
               double value) {
  if (value > 0) {
    causes[link][cause] = value;
    return;
  }
  auto it = causes.find(link);
  if (it == causes.end()) return;
  it->second.erase(cause);
  if (it->second.empty()) causes.erase(it);
}

}  // namespace

void HybridEngine::set_link_loss(LinkId link, const std::string& cause, double rate) {
  set_cause(impl_->losses, link, cause, rate);
  ++impl_->version;
}

void HybridEngine::set_background_load(LinkId link, const std::string& cause, double load) {
  set_cause(impl_->loads, link, cause, load);
  ++impl_->version;
}

// A storm ends by itself; its end changes the network's state as well.
void HybridEngine::start_pfc_storm_from_endpoint(EndpointId endpoint, Nanos until) {
  Nanos& end = impl_->endpoint_storms[endpoint];
  end = std::max(end, until);
  ++impl_->version;
  impl_->flow.schedule_at(until, [impl = impl_.get()] { ++impl->version; });
}

void HybridEngine::start_pfc_storm_from_leaf(LinkId link, Nanos until) {
  Nanos& end = impl_->leaf_storms[link];
  end = std::max(end, until);
  ++impl_->version;
  impl_->flow.schedule_at(until, [impl = impl_.get()] { ++impl->version; });
}

PacketPortCounters HybridEngine::port_counters(LinkId link, bool upward) const {
  return impl_->ports.at(static_cast<std::size_t>(link) * 2 + (upward ? 1 : 0));
}
PacketRnicCounters HybridEngine::rnic_counters(EndpointId endpoint) const {
  return impl_->rnics.at(static_cast<std::size_t>(endpoint));
}
std::uint64_t HybridEngine::packet_transfers() const { return impl_->transfers; }
std::uint64_t HybridEngine::packet_batches() const { return impl_->batches; }
std::uint64_t HybridEngine::packet_hops() const { return impl_->hops; }

}  // namespace gauntlet::sim
