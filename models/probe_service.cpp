#include "models/probe_service.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "sim/component_id.hpp"
#include "sim/ecmp.hpp"

namespace gauntlet::models {

ProbeCost ProbeCost::from(const sim::Calibration& c) {
  namespace k = calibration;
  ProbeCost cost;
  cost.ping_interval = c.duration(k::kProbePingInterval);
  cost.pings_per_probe = c.count(k::kProbePings);
  cost.concurrency = c.count(k::kProbeConcurrency);
  cost.ping_bytes = c.bytes(k::kProbePingSize);
  cost.processing = c.duration(k::kProbeProcessing);
  cost.overlay_processing = c.duration(k::kProbeOverlayProcessing);
  return cost;
}

ProbeService::ProbeService(sim::NetworkEngine& engine, sim::TelemetryBus& bus, std::uint64_t seed, ProbeCost cost)
    : engine_(engine),
      bus_(bus),
      rng_(sim::RngStreams(seed).stream("probes")),
      pings_rng_(sim::RngStreams(seed).stream("probes/pings")),
      cost_(cost),
      slot_free_(static_cast<std::size_t>(engine.topology().endpoints()),
                 std::vector<sim::Nanos>(static_cast<std::size_t>(std::max(1, cost.concurrency)), 0)) {}

void ProbeService::add_loss(const std::string& component, sim::Nanos from, sim::Nanos to, double rate) {
  // Probes name the components they cross canonically, so only a canonical
  // name is one of theirs.
  const sim::Topology& topology = engine_.topology();
  const auto id = sim::ComponentId::parse(component);
  if (!id || id->str() != component || !topology.contains(*id)) return;
  if (id->kind == sim::ComponentKind::flow_table) {
    flow_table_loss_[topology.endpoint(id->host, id->index)].push_back({from, to, rate});
  } else if (const auto link = topology.link_of(*id); link && topology.link_name(*link) == component) {
    link_loss_[*link].push_back({from, to, rate});
  }
}

void ProbeService::add_agent_down(int host, sim::Nanos from, sim::Nanos to) {
  agent_down_[host].push_back({from, to, 1.0});
}

bool ProbeService::agent_up(int host, sim::Nanos at) const {
  auto it = agent_down_.find(host);
  if (it == agent_down_.end()) return true;
  return std::none_of(it->second.begin(), it->second.end(),
                      [at](const Window& w) { return at >= w.from && at < w.to; });
}

ProbeOutcome ProbeService::evaluate(const ProbeOrder& order, sim::Rng& rng) const {
  Finished finished;
  std::vector<Hop> hops;
  evaluate_hops(order, rng, &finished, &hops);
  ProbeOutcome out;
  out.rtt = finished.rtt;
  out.lost = finished.lost;
  out.pings_lost = finished.pings_lost;
  for (const Hop& hop : hops) out.path.push_back(hop_name(hop));
  return out;
}

double ProbeService::hop_loss(const Hop& hop, sim::Nanos at) const {
  const auto& windows = hop.flow_table ? flow_table_loss_ : link_loss_;
  auto it = windows.find(hop.id);
  if (it == windows.end()) return 0;
  double delivered = 1.0;
  for (const Window& w : it->second)
    if (at >= w.from && at < w.to) delivered *= 1.0 - w.rate;
  return 1.0 - delivered;
}

int ProbeService::pings_lost(double ping_loss) const {
  const int pings = cost_.pings_per_probe;
  if (ping_loss >= 1) return pings;
  if (ping_loss <= 0) return 1;  // lost only because the draw said so: one ping
  // The first lost ping, given that one is: a geometric truncated at the
  // train's length, by inversion; then each later ping on its own.
  const double log_kept = std::log1p(-ping_loss);
  const double any_lost = -std::expm1(pings * log_kept);
  const double u = pings_rng_.uniform();
  int first = static_cast<int>(std::ceil(std::log1p(-u * any_lost) / log_kept));
  first = std::clamp(first, 1, pings);
  return 1 + static_cast<int>(pings_rng_.binomial(static_cast<std::uint64_t>(pings - first), ping_loss));
}

namespace {

// names[index], made by `make` the first time it is asked for.
template <typename Make>
const std::string& cached_name(std::vector<std::string>& names, int count, int index, Make make) {
  if (names.empty()) names.resize(static_cast<std::size_t>(count));
  std::string& name = names[static_cast<std::size_t>(index)];
  if (name.empty()) name = make();
  return name;
}

}  // namespace

const std::string& ProbeService::hop_name(const Hop& hop) const {
  const sim::Topology& t = engine_.topology();
  if (hop.flow_table)
    return cached_name(flow_table_names_, t.endpoints(), hop.id,
                       [&] { return sim::ComponentId::make_flow_table(t.host_of(hop.id), t.nic_of(hop.id)).str(); });
  return cached_name(link_names_, t.links(), hop.id, [&] { return t.link_name(hop.id); });
}

const std::string& ProbeService::nic_name(sim::EndpointId endpoint) const {
  const sim::Topology& t = engine_.topology();
  return cached_name(nic_names_, t.endpoints(), endpoint,
                     [&] { return sim::ComponentId::make_nic(t.host_of(endpoint), t.nic_of(endpoint)).str(); });
}

void ProbeService::evaluate_hops(const ProbeOrder& order, sim::Rng& rng, Finished* out, std::vector<Hop>* hops) const {
  const sim::Topology& topology = engine_.topology();
  const sim::Nanos now = engine_.now();
  bool up = true;
  double delivered = 1.0;  // probability one ping makes the round trip
  sim::Nanos rtt = cost_.processing;
  auto cross_flow_table = [&](sim::EndpointId e) {
    const sim::PathState& s = engine_.endpoint_state(e);
    hops->push_back({e, true});
    up = up && s.up;
    // A stale entry sends the RNIC's ingress to the software slow path, which
    // one round trip crosses once (the seed case: 16 us -> 120 us RTT for
    // ~104 us of extra latency).
    rtt += s.extra_latency;
    delivered *= 1.0 - hop_loss(hops->back(), now);
  };
  if (order.overlay) {
    rtt += cost_.overlay_processing;
    cross_flow_table(order.src);
    // The source VF's vSwitch encapsulates toward the destination VF's
    // underlay endpoint. A peer its rules do not name yet is resolved on the
    // slow path by the train's first ping and offloaded for the rest, so
    // only an address no container holds stops the probe here.
    const VirtualFunction* dst_vf = overlay_ ? overlay_->attached_vf(order.dst) : nullptr;
    if (overlay_ && !dst_vf) {
      out->lost = true;
      out->pings_lost = cost_.pings_per_probe;
      return;
    }
    if (dst_vf) {
      const std::optional<sim::EndpointId> underlay = overlay_->rule(order.src, dst_vf->overlay_address);
      if (underlay && *underlay != order.dst) {  // a rule left pointing at the peer's old host
        out->lost = true;
        out->pings_lost = cost_.pings_per_probe;
        return;
      }
    }
  }
  const std::vector<sim::LinkId> route = order.source_port == 0
                                             ? engine_.route(order.src, order.dst)
                                             : engine_.route_from_port(order.src, order.dst, order.source_port);
  for (sim::LinkId link : route) {
    const sim::PathState& s = engine_.link_state(link);
    hops->push_back({link, false});
    up = up && s.up;
    // A probe waits in the queues the traffic builds.
    const sim::Nanos queued = queueing_delay_ ? queueing_delay_(link) : engine_.queueing_delay(link);
    const sim::Nanos one_way = topology.shape().link_latency + s.extra_latency + queued;
    rtt += 2 * one_way;
    const double p = hop_loss(hops->back(), now);
    delivered *= (1.0 - p) * (1.0 - p);  // the ping and its reply both cross the link
  }
  if (order.overlay) cross_flow_table(order.dst);

  // The train is flagged lost when any of its pings is lost; one draw per
  // probe keeps the RNG stream independent of the train length.
  const double train_delivered = std::pow(delivered, cost_.pings_per_probe);
  out->lost = !up || rng.uniform() >= train_delivered;
  out->rtt = out->lost ? 0 : rtt;
  if (out->lost) out->pings_lost = up ? pings_lost(1 - delivered) : cost_.pings_per_probe;
}

std::uint32_t ProbeService::detector_index(const std::string& detector) const {
  return static_cast<std::uint32_t>(std::find(detectors_.begin(), detectors_.end(), detector) - detectors_.begin());
}

void ProbeService::submit(const std::string& detector, const std::vector<ProbeOrder>& orders) {
  const sim::Nanos now = engine_.now();
  const int endpoints = engine_.topology().endpoints();
  const std::uint32_t index = detector_index(detector);
  if (index == detectors_.size()) {
    detectors_.push_back(detector);
    sent_.push_back(0);
  }
  for (const ProbeOrder& order : orders) {
    if (order.src < 0 || order.src >= endpoints || order.dst < 0 || order.dst >= endpoints || order.src == order.dst)
      continue;
    auto& slots = slot_free_[static_cast<std::size_t>(order.src)];
    auto slot = std::min_element(slots.begin(), slots.end());
    const sim::Nanos at = std::max(now, *slot);
    *slot = at + cost_.probe_duration();
    if (at > horizon_) continue;
    auto [it, fresh] = waves_.try_emplace(at);
    it->second.push_back({order, index});
    if (fresh) engine_.schedule_at(at, [this, at] { run_wave(at); });
  }
}

void ProbeService::run_wave(sim::Nanos at) {
  auto node = waves_.extract(at);
  if (node.empty()) return;
  const sim::Topology& topology = engine_.topology();
  auto wave = std::make_shared<std::vector<Queued>>(std::move(node.mapped()));
  auto results = std::make_shared<WaveResults>();
  for (std::size_t i = 0; i < wave->size(); ++i) {
    const Queued& q = (*wave)[i];
    if (!agent_up(topology.host_of(q.order.src), at)) continue;
    if (q.order.overlay && overlay_ && !overlay_->attached_vf(q.order.src)) continue;  // no VF to leave from
    Finished& finished = results->probes.emplace_back();
    finished.queued = i;
    finished.hops_begin = results->hops.size();
    evaluate_hops(q.order, rng_, &finished, &results->hops);
    finished.hops_end = results->hops.size();
    ++sent_[q.detector];
  }
  if (results->probes.empty()) return;
  // The agent reports a probe when its ping train is over.
  engine_.schedule_at(at + cost_.probe_duration(), [this, at, wave, results] {
    for (const Finished& f : results->probes) {
      const Queued& q = (*wave)[f.queued];
      bus_.publish_built([&](telemetry::Record& record) {
        auto* r = record.mutable_probe();
        r->set_detector(detectors_[q.detector]);
        r->set_src(nic_name(q.order.src));
        r->set_dst(nic_name(q.order.dst));
        r->set_overlay(q.order.overlay);
        r->set_sent_ns(at);
        r->set_rtt_ns(f.rtt);
        r->set_lost(f.lost);
        r->set_source_port(q.order.source_port != 0 ? q.order.source_port
                                                    : sim::connection_source_port(q.order.src, q.order.dst));
        r->set_pings(static_cast<std::uint32_t>(cost_.pings_per_probe));
        r->set_pings_lost(static_cast<std::uint32_t>(f.pings_lost));
        r->mutable_path()->Reserve(static_cast<int>(f.hops_end - f.hops_begin));
        for (std::size_t h = f.hops_begin; h < f.hops_end; ++h) r->add_path(hop_name(results->hops[h]));
      });
    }
  });
}

void ProbeService::start_heartbeats(sim::Nanos interval, sim::Nanos until) {
  if (interval <= 0) return;
  engine_.schedule_at(engine_.now(), [this, interval, until] { heartbeat(interval, until); });
}

void ProbeService::heartbeat(sim::Nanos interval, sim::Nanos until) {
  const sim::Nanos now = engine_.now();
  for (int host = 0; host < engine_.topology().hosts(); ++host) {
    if (!agent_up(host, now)) continue;
    telemetry::Record record;
    record.mutable_heartbeat()->set_agent(sim::ComponentId::make_agent(host).str());
    record.mutable_heartbeat()->set_time_ns(now);
    bus_.publish(std::move(record));
  }
  if (now + interval <= until)
    engine_.schedule_at(now + interval, [this, interval, until] { heartbeat(interval, until); });
}

long long ProbeService::probes_sent(const std::string& detector) const {
  const std::uint32_t index = detector_index(detector);
  return index == sent_.size() ? 0 : sent_[index];
}

long long ProbeService::probe_bytes(const std::string& detector) const {
  return probes_sent(detector) * static_cast<long long>(cost_.probe_bytes());
}

}  // namespace gauntlet::models
