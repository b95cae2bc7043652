#include "sim/flow/flow_engine.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "sim/contract.hpp"
#include "sim/flow/maestro_activities.hpp"
#include "sim/rng.hpp"

namespace gauntlet::sim {
namespace s4u = simgrid::s4u;
namespace routing = simgrid::kernel::routing;

namespace {

// A stalled (down) link keeps its transfers alive at this negligible rate so
// they resume where they were when the link comes back.
constexpr double kStalledBytesPerSecond = 1.0;
// The offload path of an RNIC runs at line rate unless a fault caps it.
constexpr double kUncappedFlowTableFactor = 1.0;

bool engine_exists = false;

// Spine-leaf routing computed on demand from the ECMP router, so no route
// table of endpoints squared is ever stored.
class SpineLeafZone final : public routing::NetZoneImpl {
 public:
  SpineLeafZone(const Topology& topology, const EcmpRouter& router)
      : NetZoneImpl("spine-leaf"), topology_(topology), router_(router) {}

  std::vector<s4u::SplitDuplexLink*> host_links;    // per endpoint: UP = RNIC to leaf
  std::vector<s4u::SplitDuplexLink*> fabric_links;  // per leaf*spines+spine: UP = leaf to spine
  std::vector<s4u::SplitDuplexLink*> flow_tables;   // per endpoint: UP = egress

  void get_local_route(const routing::NetPoint* src, const routing::NetPoint* dst, routing::Route* into,
                       double* latency) override {
    const auto a = static_cast<EndpointId>(src->id());
    const auto b = static_cast<EndpointId>(dst->id());
    (void)latency;  // latency is applied by FlowEngine, see start_transfer
    auto add = [&](s4u::Link* link) { into->link_list_.push_back(link->get_impl()); };
    add(flow_tables[static_cast<std::size_t>(a)]->get_link_up());
    add(host_links[static_cast<std::size_t>(a)]->get_link_up());
    if (int spine = router_.spine_for(a, b); spine >= 0) {
      add(fabric_links[static_cast<std::size_t>(topology_.leaf_of(a) * topology_.spines() + spine)]->get_link_up());
      add(fabric_links[static_cast<std::size_t>(topology_.leaf_of(b) * topology_.spines() + spine)]->get_link_down());
    }
    add(host_links[static_cast<std::size_t>(b)]->get_link_down());
    add(flow_tables[static_cast<std::size_t>(b)]->get_link_down());
  }

 private:
  const Topology& topology_;
  const EcmpRouter& router_;
};

}  // namespace

struct FlowEngine::Impl {
  Impl(const Topology& t, std::uint64_t seed)
      : topology(t), router(topology, seed), stall_rng(RngStreams(seed).stream("flow/transfer-stalls")) {}

  Topology topology;
  EcmpRouter router;
  std::unique_ptr<s4u::Engine> engine;
  SpineLeafZone* zone = nullptr;
  std::vector<s4u::Host*> hosts;
  std::vector<PathState> link_states;
  std::vector<PathState> endpoint_states;
  std::uint64_t version = 0;
  Nanos current = 0;

  std::map<std::pair<Nanos, TimerId>, TimerCallback> timers;
  std::unordered_map<TimerId, Nanos> timer_dates;
  TimerId next_timer = 0;

  struct Pending {
    TransferId id;
    s4u::CommPtr comm;
    TransferCallback on_done;
    EndpointId src = 0;
    EndpointId dst = 0;
    double bytes = 0;                               // the whole transfer
    double sent_before = 0;                         // bytes pushed on routes it has left
    double payload = 0;                             // bytes the current comm carries
    std::vector<LinkId> route;                      // the route of the current comm
    std::optional<MaestroActivities::Entry> entry;  // SimGrid's record of the comm, when held
  };
  std::unordered_map<const s4u::Activity*, Pending> transfers;
  std::unordered_map<TransferId, const s4u::Activity*> by_id;
  TransferId next_transfer = 0;
  ReplayLedger replays;
  std::vector<TransferListener> listeners;
  Nanos convergence_delay = kSecond;
  std::multiset<Nanos> convergences;                               // dates of pending routing updates
  std::vector<s4u::CommPtr> cancelled;                             // rerouted comms, kept alive for SimGrid
  std::set<LinkId> drained;                                        // fabric links ECMP avoids whatever their state
  std::unique_ptr<MaestroActivities> activities;                   // once the SimGrid engine exists
  std::map<LinkId, std::map<std::string, TransferStalls>> stalls;  // by link, by cause
  Rng stall_rng;

  Nanos draw_stall(const std::vector<LinkId>& route, double bytes);

  void notify(TransferEvent::Kind kind, const Pending& p, Nanos at) {
    for (const auto& listener : listeners) listener({kind, p.id, p.src, p.dst, p.bytes, at});
  }
  s4u::CommPtr launch(Pending& p, double bytes);
  void relaunch(const std::vector<const s4u::Activity*>& keys, FlowEngine& owner);
  void converge(LinkId link, FlowEngine& owner);
  template <typename Crosses>
  void lift_bounds(s4u::SplitDuplexLink* link, double before, Crosses crosses, FlowEngine& owner);

  void build_platform();
  void fire_due_timers(Nanos up_to);
  void on_activity_completed(const s4u::Activity& activity);
  void apply_link(s4u::SplitDuplexLink* link, double nominal, const PathState& state);
};

void FlowEngine::Impl::build_platform() {
  // RDMA has none of the TCP corrections of SimGrid's default model: use the
  // plain constant-factor model with no bandwidth or latency correction, no
  // RTT-dependent sharing, no reverse ACK traffic and no window bound.
  engine->set_config("network/model:CM02");
  engine->set_config("network/crosstraffic:0");
  engine->set_config("network/weight-S:0");
  engine->set_config("network/latency-factor:1");
  engine->set_config("network/bandwidth-factor:1");
  engine->set_config("network/TCP-gamma:0");

  zone = new SpineLeafZone(topology, router);  // owned by SimGrid once created
  s4u::NetZone* iface = zone->get_iface();
  for (EndpointId e = 0; e < topology.endpoints(); ++e) {
    const std::string name = ComponentId::make_nic(topology.host_of(e), topology.nic_of(e)).str();
    hosts.push_back(iface->create_host(name, 1.0));
    auto* link = iface->create_split_duplex_link(topology.link_name(topology.host_link(e)),
                                                 topology.link_bytes_per_second(topology.host_link(e)));
    zone->host_links.push_back(link);
    auto* ft = iface->create_split_duplex_link(
        name + ".ft", topology.link_bytes_per_second(topology.host_link(e)) * kUncappedFlowTableFactor);
    zone->flow_tables.push_back(ft);
  }
  for (int leaf = 0; leaf < topology.leaves(); ++leaf)
    for (int spine = 0; spine < topology.spines(); ++spine) {
      const LinkId id = topology.fabric_link(leaf, spine);
      auto* link = iface->create_split_duplex_link(topology.link_name(id), topology.link_bytes_per_second(id));
      zone->fabric_links.push_back(link);
    }
  iface->seal();
  // SimGrid numbers a zone's netpoints in creation order; routing relies on
  // the host of endpoint e having id e.
  for (EndpointId e = 0; e < topology.endpoints(); ++e)
    if (hosts[static_cast<std::size_t>(e)]->get_netpoint()->id() != static_cast<unsigned long>(e))
      throw std::logic_error("SimGrid netpoint ids do not follow endpoint numbering");
  s4u::Activity::on_completion_cb([this](const s4u::Activity& a) { on_activity_completed(a); });
}

void FlowEngine::Impl::on_activity_completed(const s4u::Activity& activity) {
  auto it = transfers.find(&activity);
  if (it == transfers.end()) return;
  Pending pending = std::move(it->second);
  transfers.erase(it);
  if (pending.entry) activities->retire(*pending.entry);
  // The two indexes of transfers in flight hold the same ones.
  GAUNTLET_INVARIANT(by_id.erase(pending.id) == 1, "transfer " + std::to_string(pending.id) + " unknown by its id");
  current = std::max(current, from_seconds(s4u::Engine::get_clock()));
  notify(TransferEvent::Kind::finished, pending, current);
  if (pending.on_done) pending.on_done(current);
}

void FlowEngine::Impl::fire_due_timers(Nanos up_to) {
  while (!timers.empty() && timers.begin()->first.first <= up_to) {
    auto node = timers.extract(timers.begin());
    timer_dates.erase(node.key().second);
    current = std::max(current, node.key().first);
    node.mapped()();
  }
}

void FlowEngine::Impl::apply_link(s4u::SplitDuplexLink* link, double nominal, const PathState& state) {
  const double bandwidth = state.up ? nominal * state.bandwidth_factor : kStalledBytesPerSecond;
  for (s4u::Link* direction : {link->get_link_up(), link->get_link_down()}) direction->set_bandwidth(bandwidth);
  ++version;
}

FlowEngine::FlowEngine(const Topology& topology, std::uint64_t seed) : impl_(std::make_unique<Impl>(topology, seed)) {
  if (engine_exists) throw std::logic_error("only one FlowEngine may exist per process (SimGrid is per-process)");
  engine_exists = true;
  int argc = 2;
  char arg0[] = "gauntlet";
  char arg1[] = "--log=root.thres:warning";
  char* argv[] = {arg0, arg1, nullptr};
  impl_->engine = std::make_unique<s4u::Engine>(&argc, argv);
  impl_->link_states.resize(static_cast<std::size_t>(topology.links()));
  impl_->endpoint_states.resize(static_cast<std::size_t>(topology.endpoints()));
  impl_->build_platform();
  impl_->activities = std::make_unique<MaestroActivities>();
}

FlowEngine::~FlowEngine() {
  // SimGrid cannot be torn down and restarted within a process, and
  // destroying transfers still in flight at the horizon makes it complain:
  // the engine and everything it holds are left to the process's exit.
  (void)impl_.release();
}

const Topology& FlowEngine::topology() const { return impl_->topology; }
Nanos FlowEngine::now() const { return impl_->current; }
EcmpRouter& FlowEngine::router() { return impl_->router; }
ReplayLedger* FlowEngine::replays() { return &impl_->replays; }
void FlowEngine::drop_timers() {
  impl_->timers.clear();
  impl_->timer_dates.clear();
}
std::uint64_t FlowEngine::state_version() const { return impl_->version; }
void FlowEngine::add_transfer_listener(TransferListener listener) { impl_->listeners.push_back(std::move(listener)); }
void FlowEngine::set_convergence_delay(Nanos delay) { impl_->convergence_delay = std::max<Nanos>(0, delay); }
Nanos FlowEngine::convergence_delay() const { return impl_->convergence_delay; }

double FlowEngine::transfer_progress(TransferId id) const {
  auto it = impl_->by_id.find(id);
  if (it == impl_->by_id.end()) return 0;
  const Impl::Pending& p = impl_->transfers.at(it->second);
  const double progress = p.sent_before + p.payload - p.comm->get_remaining();
  GAUNTLET_INVARIANT(progress >= 0 && progress <= p.bytes,
                     "transfer " + std::to_string(id) + " at " + std::to_string(progress) + " of its bytes");
  return progress;
}

Nanos FlowEngine::next_internal_change() const {
  auto it = impl_->convergences.upper_bound(impl_->current);
  return it == impl_->convergences.end() ? std::numeric_limits<Nanos>::max() : *it;
}

TimerId FlowEngine::schedule_at(Nanos at, TimerCallback callback) {
  at = std::max(at, impl_->current);
  const TimerId id = ++impl_->next_timer;
  impl_->timers.emplace(std::pair{at, id}, std::move(callback));
  impl_->timer_dates.emplace(id, at);
  Impl* impl = impl_.get();
  simgrid::kernel::timer::Timer::set(to_seconds(at), [impl] {
    // SimGrid dates are doubles: allow a nanosecond of rounding.
    impl->fire_due_timers(from_seconds(s4u::Engine::get_clock()) + 1);
  });
  return id;
}

void FlowEngine::cancel(TimerId id) {
  auto it = impl_->timer_dates.find(id);
  if (it == impl_->timer_dates.end()) return;
  impl_->timers.erase({it->second, id});
  impl_->timer_dates.erase(it);
}

s4u::CommPtr FlowEngine::Impl::launch(Pending& p, double bytes) {
  s4u::CommPtr comm =
      s4u::Comm::sendto_init(hosts.at(static_cast<std::size_t>(p.src)), hosts.at(static_cast<std::size_t>(p.dst)));
  p.entry = activities->take(*comm);
  comm->set_payload_size(static_cast<std::uint64_t>(bytes));
  p.payload = static_cast<double>(static_cast<std::uint64_t>(bytes));
  p.route = router.route(p.src, p.dst);
  p.comm = comm;
  return comm;
}

void FlowEngine::Impl::converge(LinkId link, FlowEngine& owner) {
  const int leaf = topology.leaf_of_fabric_link(link);
  const int spine = topology.spine_of_fabric_link(link);
  const bool up = link_states[static_cast<std::size_t>(link)].up && !drained.count(link);
  if (router.fabric_link_usable(leaf, spine) == up) return;
  router.set_fabric_link_usable(leaf, spine, up);
  ++version;
  if (up) return;  // connections elsewhere stay where they are
  std::vector<const s4u::Activity*> moving;
  for (const auto& [key, p] : transfers)
    if (std::find(p.route.begin(), p.route.end(), link) != p.route.end()) moving.push_back(key);
  relaunch(moving, owner);
}

bool FlowEngine::set_fabric_link_drained(LinkId link, bool drained) {
  if (!impl_->topology.is_fabric_link(link) || link >= impl_->topology.links()) return false;
  if (drained)
    impl_->drained.insert(link);
  else
    impl_->drained.erase(link);
  // Draining is a configuration change, not a failure: no detection delay.
  impl_->converge(link, *this);
  return true;
}

// Restarts these transfers' comms with the bytes they have left, on the route
// routing gives now, in a fixed order (by transfer id) so runs stay
// reproducible.
void FlowEngine::Impl::relaunch(const std::vector<const s4u::Activity*>& keys, FlowEngine& owner) {
  std::vector<const s4u::Activity*> moving = keys;
  std::sort(moving.begin(), moving.end(),
            [&](const s4u::Activity* a, const s4u::Activity* b) { return transfers.at(a).id < transfers.at(b).id; });
  for (const s4u::Activity* key : moving) {
    auto node = transfers.extract(key);
    Pending p = std::move(node.mapped());
    const std::vector<LinkId> old_route = p.route;
    const double left = p.comm->get_remaining();
    // A comm restarted on a new route carries what its last one had left.
    GAUNTLET_INVARIANT(left >= 0 && left <= p.payload,
                       std::to_string(left) + " bytes left of " + std::to_string(p.payload));
    p.sent_before += p.payload - left;
    p.comm->cancel();
    cancelled.push_back(p.comm);  // SimGrid finishes with it later
    s4u::CommPtr comm = launch(p, left);
    by_id[p.id] = comm.get();
    const Pending& moved = transfers.emplace(comm.get(), std::move(p)).first->second;
    comm->start();
    if (moved.route != old_route) notify(TransferEvent::Kind::rerouted, moved, owner.now());
  }
}

// SimGrid caps a comm's rate, once and for all when it starts, at the
// smallest bandwidth on its route. A transfer started while a link of its
// route was down (or degraded) would keep that cap after the link recovers
// and never finish: when a link gets faster, the transfers crossing it
// restart with the bytes they have left, so the cap follows the link.
template <typename Crosses>
void FlowEngine::Impl::lift_bounds(s4u::SplitDuplexLink* link, double before, Crosses crosses, FlowEngine& owner) {
  if (link->get_link_up()->get_bandwidth() <= before) return;
  std::vector<const s4u::Activity*> crossing;
  for (const auto& [key, p] : transfers)
    if (crosses(p)) crossing.push_back(key);
  relaunch(crossing, owner);
}

// The timeouts a transfer waits out on the lossy links of its route (see
// TransferStalls), drawn at its start; each draw moves the state version.
Nanos FlowEngine::Impl::draw_stall(const std::vector<LinkId>& route, double bytes) {
  if (stalls.empty()) return 0;
  Nanos total = 0;
  bool drew = false;
  for (LinkId link : route) {
    auto it = stalls.find(link);
    if (it == stalls.end()) continue;
    drew = true;
    for (const auto& [cause, s] : it->second) {
      const auto packets = static_cast<std::uint64_t>(std::min(std::ceil(bytes / s.packet_bytes), s.tail_packets));
      std::uint64_t timeouts = stall_rng.binomial(packets, s.per_packet);
      if (stall_rng.uniform() < s.per_message) ++timeouts;
      for (std::uint64_t k = 0; k < timeouts; ++k) {
        // A timeout's resend lost too waits twice as long (up to 2^16 times).
        Nanos wait = s.first_timeout;
        total += wait;
        for (int doubling = 0; doubling < 16 && stall_rng.uniform() < s.repeat; ++doubling) total += wait *= 2;
      }
    }
  }
  if (drew) ++version;
  return total;
}

void FlowEngine::set_link_stalls(LinkId link, const std::string& cause, const TransferStalls& stalls) {
  auto& causes = impl_->stalls[link];
  if (stalls.any())
    causes[cause] = stalls;
  else
    causes.erase(cause);
  if (causes.empty()) impl_->stalls.erase(link);
  ++impl_->version;
}

bool FlowEngine::draws_stalls() const { return !impl_->stalls.empty(); }

Nanos FlowEngine::draw_stall(EndpointId src, EndpointId dst, double bytes) {
  return impl_->draw_stall(route(src, dst), bytes);
}

TransferId FlowEngine::start_transfer(EndpointId src, EndpointId dst, double bytes, TransferCallback on_done) {
  const TransferId id = ++impl_->next_transfer;
  Impl::Pending pending{id, nullptr, nullptr, src, dst, bytes, 0, 0, {}, std::nullopt};
  s4u::CommPtr comm = impl_->launch(pending, bytes);
  // SimGrid weighs a flow's share by its route latency (TCP's RTT
  // unfairness); RoCE congestion control shares fairly, so SimGrid links
  // carry no latency and the route latency is added when the last byte has
  // left, as propagation delay.
  const Nanos latency = route_latency(src, dst);
  Impl* impl = impl_.get();
  TransferCallback delivered = [impl, this, latency, on_done = std::move(on_done)](Nanos sent) {
    schedule_at(sent + latency, [impl, on_done] {
      impl->replays.transfer_delivered();
      if (on_done) on_done(impl->current);
    });
  };
  impl_->replays.transfer_started();
  const s4u::Activity* key = comm.get();
  pending.on_done = std::move(delivered);
  impl_->notify(TransferEvent::Kind::started, pending, now());
  const bool fresh = impl_->by_id.emplace(id, key).second && impl_->transfers.emplace(key, std::move(pending)).second;
  GAUNTLET_INVARIANT(fresh, "transfer " + std::to_string(id) + " started twice");
  comm->start();
  return id;
}

void FlowEngine::set_link_state(LinkId link, const PathState& state) {
  const bool was_up = impl_->link_states.at(static_cast<std::size_t>(link)).up;
  impl_->link_states.at(static_cast<std::size_t>(link)) = state;
  const Topology& t = impl_->topology;
  if (t.is_fabric_link(link) && was_up != state.up) {
    const Nanos at = now() + impl_->convergence_delay;
    impl_->convergences.insert(at);
    schedule_at(at, [this, link, at] {
      impl_->convergences.erase(impl_->convergences.find(at));
      impl_->converge(link, *this);
    });
  }
  s4u::SplitDuplexLink* target = t.is_fabric_link(link)
                                     ? impl_->zone->fabric_links[static_cast<std::size_t>(link - t.endpoints())]
                                     : impl_->zone->host_links[static_cast<std::size_t>(link)];
  const double before = target->get_link_up()->get_bandwidth();
  impl_->apply_link(target, t.link_bytes_per_second(link), state);
  impl_->lift_bounds(
      target, before,
      [link](const Impl::Pending& p) { return std::find(p.route.begin(), p.route.end(), link) != p.route.end(); },
      *this);
}

void FlowEngine::set_endpoint_state(EndpointId endpoint, const PathState& state) {
  impl_->endpoint_states.at(static_cast<std::size_t>(endpoint)) = state;
  const Topology& t = impl_->topology;
  s4u::SplitDuplexLink* table = impl_->zone->flow_tables[static_cast<std::size_t>(endpoint)];
  const double before = table->get_link_up()->get_bandwidth();
  impl_->apply_link(table, t.link_bytes_per_second(t.host_link(endpoint)) * kUncappedFlowTableFactor, state);
  impl_->lift_bounds(
      table, before, [endpoint](const Impl::Pending& p) { return p.src == endpoint || p.dst == endpoint; }, *this);
}

const PathState& FlowEngine::link_state(LinkId link) const {
  return impl_->link_states.at(static_cast<std::size_t>(link));
}

const PathState& FlowEngine::endpoint_state(EndpointId endpoint) const {
  return impl_->endpoint_states.at(static_cast<std::size_t>(endpoint));
}

std::vector<LinkId> FlowEngine::route(EndpointId src, EndpointId dst) const { return impl_->router.route(src, dst); }

std::vector<LinkId> FlowEngine::route_from_port(EndpointId src, EndpointId dst, std::uint16_t source_port) const {
  return impl_->router.route(src, dst, source_port);
}

Nanos FlowEngine::route_latency(EndpointId src, EndpointId dst) const {
  Nanos total = endpoint_state(src).extra_latency + endpoint_state(dst).extra_latency;
  for (LinkId link : route(src, dst)) total += impl_->topology.shape().link_latency + link_state(link).extra_latency;
  return total;
}

void FlowEngine::run_until(Nanos until) {
  if (until < impl_->current) return;
  impl_->engine->run_until(to_seconds(until));
  impl_->activities->release();  // SimGrid is done with the comms that finished
  // Timers dated exactly `until` may sit just past SimGrid's double horizon.
  impl_->fire_due_timers(until);
  impl_->current = until;
}

}  // namespace gauntlet::sim
