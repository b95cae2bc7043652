#include "models/telemetry/fabric_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "sim/component_id.hpp"

namespace gauntlet::models {

FabricSampler::FabricSampler(sim::NetworkEngine& engine, const TelemetryEffects& effects, FabricSamplerParams params)
    : engine_(engine), effects_(effects), params_(params), ledger_(engine) {
  cnp_rate_.assign(static_cast<std::size_t>(engine.topology().endpoints()), 0.0);
  iteration_lookup_.assign(2 * static_cast<std::size_t>(engine.topology().links()), nullptr);
  idle_lookup_ = iteration_lookup_;
}

void FabricSampler::index_rates(const std::map<int, PortRate>& rates, std::vector<const PortRate*>* lookup) const {
  std::fill(lookup->begin(), lookup->end(), nullptr);
  for (const auto& [direction, rate] : rates) (*lookup)[static_cast<std::size_t>(direction)] = &rate;
}

namespace {

constexpr std::size_t kKnownFlowSets = 16;

}  // namespace

FabricSampler::PortRate FabricSampler::port_rate(const PortWindow& p, double seconds) {
  return {p.tx_bytes / seconds,         p.ecn_marked / seconds,    p.queue_bytes,
          p.crc_errors / seconds,       p.fec_corrected / seconds, p.fec_uncorrectable / seconds,
          p.fec_symbol_errors / seconds};
}

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

std::uint64_t mix_state(std::uint64_t h, const sim::PathState& s) {
  std::uint64_t bits = 0;
  static_assert(sizeof(bits) == sizeof(s.bandwidth_factor));
  std::memcpy(&bits, &s.bandwidth_factor, sizeof(bits));
  return mix(mix(mix(h, bits), static_cast<std::uint64_t>(s.extra_latency)), s.up ? 1 : 0);
}

}  // namespace

std::uint64_t FabricSampler::traffic_key(const telemetry::Batch& batch) const {
  const sim::Topology& topology = engine_.topology();
  std::uint64_t h = 0;
  for (sim::LinkId link = 0; link < topology.links(); ++link) h = mix_state(h, engine_.link_state(link));
  for (sim::EndpointId e = 0; e < topology.endpoints(); ++e) h = mix_state(h, engine_.endpoint_state(e));
  const std::hash<std::string> text;
  for (const telemetry::Record& r : batch.records()) {
    if (!r.has_collective()) continue;
    const auto& c = r.collective();
    h = mix(mix(mix(mix(h, text(c.worker())), text(c.peer())), text(c.op())), c.bytes());
  }
  return h;
}

void FabricSampler::observe_traffic(const telemetry::Batch& batch) {
  sim::Nanos from = std::numeric_limits<sim::Nanos>::max(), to = std::numeric_limits<sim::Nanos>::min();
  for (const telemetry::Record& r : batch.records()) {
    if (!r.has_iteration()) continue;
    from = std::min(from, r.iteration().start_ns());
    to = std::max(to, r.iteration().end_ns());
  }
  if (to <= from) return;
  ledger_.snapshot(engine_.now());
  const std::vector<FlowSegment> segments = ledger_.segments(from, to);
  const std::uint64_t key = traffic_key(batch);
  const auto known = std::find_if(known_.begin(), known_.end(), [key](const auto& k) { return k.first == key; });
  Rates rates;
  if (segments.empty() && known != known_.end()) {
    rates = known->second;  // a replayed flow set
  } else {
    rates = rates_of(measure_fabric(segments, engine_.topology(), effects_, from, to, params_.counters, params_.flows),
                     sim::to_seconds(to - from));
    if (!segments.empty() && known == known_.end()) {
      known_.emplace_back(key, rates);
      if (known_.size() > kKnownFlowSets) known_.pop_front();
    }
  }
  set_rates(std::move(rates));
  ledger_.forget_before(to);
}

FabricSampler::Rates FabricSampler::rates_of(const FabricWindow& window, double seconds) const {
  Rates out;
  for (const auto& [direction, p] : window.ports)
    if (p.tx_bytes > 0 || p.ecn_marked > 0 || p.fec_corrected > 0 || p.fec_uncorrectable > 0)
      out.ports[direction] = port_rate(p, seconds);
  out.cnp.assign(cnp_rate_.size(), 0.0);
  for (const auto& [endpoint, n] : window.nics) {
    out.cnp[static_cast<std::size_t>(endpoint)] = n.cnp / seconds;
    if (n.retransmitted > 0 || n.naks_sent > 0 || n.naks_received > 0 || n.cnp_sent > 0 || n.ecn_marked_received > 0)
      out.transport[endpoint] = {n.retransmitted / seconds,   n.naks_sent / seconds, n.naks_received / seconds,
                                 n.out_of_sequence / seconds, n.cnp_sent / seconds,  n.ecn_marked_received / seconds};
  }
  out.flows.reserve(window.flows.size());
  for (const auto& [pair, f] : window.flows)
    out.flows.push_back({pair.first, pair.second, f.directions, f.bytes / seconds, f.retransmitted / seconds});
  return out;
}

void FabricSampler::set_rates(Rates rates) {
  const auto same_port = [](const auto& a, const auto& b) { return a.first == b.first && a.second == b.second; };
  const bool same = rates.cnp == cnp_rate_ && rates.transport == transport_rates_ && rates.flows == flow_rates_ &&
                    rates.ports.size() == iteration_rates_.size() &&
                    std::equal(rates.ports.begin(), rates.ports.end(), iteration_rates_.begin(), same_port);
  if (same) return;
  iteration_rates_ = std::move(rates.ports);
  index_rates(iteration_rates_, &iteration_lookup_);
  queueing_delays_stale_ = true;
  cnp_rate_ = std::move(rates.cnp);
  transport_rates_ = std::move(rates.transport);
  flow_rates_ = std::move(rates.flows);
  ++version_;
  measured_ = true;
}

const std::vector<FlowRate>& FabricSampler::flow_rates() const {
  static const std::vector<FlowRate> kNone;
  return flowing_now_ ? flow_rates_ : kNone;
}

double FabricSampler::cnp_rate(sim::EndpointId endpoint) const { return cnp_rate_[static_cast<std::size_t>(endpoint)]; }

sim::Nanos FabricSampler::queueing_delay(sim::LinkId link) const {
  if (queueing_delays_stale_) {
    const sim::Topology& topology = engine_.topology();
    queueing_delays_.assign(static_cast<std::size_t>(topology.links()), 0);
    for (sim::LinkId l = 0; l < topology.links(); ++l) {
      double seconds = 0;
      for (bool up : {true, false})
        if (const PortRate* rate = iteration_lookup_[static_cast<std::size_t>(directed_link(l, up))])
          seconds += rate->queue_bytes / topology.link_bytes_per_second(l);
      queueing_delays_[static_cast<std::size_t>(l)] = static_cast<sim::Nanos>(seconds / 2 * 1e9);
    }
    queueing_delays_stale_ = false;
  }
  return queueing_delays_[static_cast<std::size_t>(link)];
}

FabricSampler::TransportValue FabricSampler::transport_value(sim::EndpointId endpoint,
                                                             const TransportRate& rate) const {
  const auto count = [](double per_second) { return static_cast<std::uint64_t>(std::llround(per_second)); };
  return {count(rate.retransmitted),   count(rate.naks_sent), count(rate.naks_received),
          count(rate.out_of_sequence), count(rate.cnp_sent),  count(rate.ecn_marked_received),
          count(cnp_rate(endpoint))};
}

void FabricSampler::write_transport_record(telemetry::Record* r, sim::EndpointId endpoint, const TransportValue& v,
                                           sim::Nanos at) const {
  const sim::Topology& topology = engine_.topology();
  auto* t = r->mutable_transport();
  t->set_nic(sim::ComponentId::make_nic(topology.host_of(endpoint), topology.nic_of(endpoint)).str());
  t->set_time_ns(at);
  t->set_retransmitted_packets(v.retransmitted);
  t->set_naks_sent(v.naks_sent);
  t->set_naks_received(v.naks_received);
  t->set_out_of_sequence(v.out_of_sequence);
  t->set_cnp_sent(v.cnp_sent);
  t->set_ecn_marked_received(v.ecn_marked_received);
  t->set_cnp_handled(v.cnp_handled);
}

// Each RNIC's counters are a plain record when they change and a repeat
// otherwise: a fleet's corrupting links keep thousands of RNICs counting
// retransmissions at a steady rate for hours.
void FabricSampler::write_transport(sim::Nanos at, bool flowing, telemetry::Batch* out) {
  if (quiet_now_) {
    if (!transports_repeating_)
      for (auto& [endpoint, transport] : transports_)
        if (transport.repeat_from < 0) transport.repeat_from = at;
    transports_repeating_ = true;
    return;
  }
  transports_repeating_ = false;
  std::map<sim::EndpointId, TransportValue> now;
  if (flowing)
    for (const auto& [endpoint, rate] : transport_rates_) now.emplace(endpoint, transport_value(endpoint, rate));
  const auto publish = [&](sim::EndpointId endpoint, const TransportValue& v) {
    telemetry::Record* r = out->add_records();
    write_transport_record(r, endpoint, v, at);
    published_bytes_ += r->ByteSizeLong();
  };
  for (const auto& [endpoint, v] : now) {
    auto it = transports_.find(endpoint);
    if (it != transports_.end() && it->second.last == v) {
      if (it->second.repeat_from < 0) it->second.repeat_from = at;
      continue;
    }
    if (it != transports_.end()) close_transport(endpoint, it->second, previous_);
    publish(endpoint, v);
    transports_[endpoint] = {v, -1};
  }
  // Counters that stop counting say so once, as the packet engine's do.
  for (auto it = transports_.begin(); it != transports_.end();) {
    if (now.count(it->first)) {
      ++it;
      continue;
    }
    close_transport(it->first, it->second, previous_);
    publish(it->first, {});
    it = transports_.erase(it);
  }
}

FabricSampler::PortValue FabricSampler::value_of(int direction, bool flowing) const {
  PortValue v;
  v.link_up = engine_.link_state(link_of_direction(direction)).up;
  const PortRate* rate = (flowing ? iteration_lookup_ : idle_lookup_)[static_cast<std::size_t>(direction)];
  if (!rate) return v;
  v.tx_bytes = static_cast<std::uint64_t>(std::llround(rate->tx_bytes));
  v.tx_packets = static_cast<std::uint64_t>(std::ceil(static_cast<double>(v.tx_bytes) / params_.counters.mtu_bytes));
  v.ecn_marked = static_cast<std::uint64_t>(std::llround(rate->ecn_marked));
  v.crc_errors = static_cast<std::uint64_t>(std::llround(rate->crc_errors));
  v.fec_corrected = static_cast<std::uint64_t>(std::llround(rate->fec_corrected));
  v.fec_uncorrectable = static_cast<std::uint64_t>(std::llround(rate->fec_uncorrectable));
  v.fec_symbol_errors = static_cast<std::uint64_t>(std::llround(rate->fec_symbol_errors));
  v.queue_depth = std::round(rate->queue_bytes);
  return v;
}

void FabricSampler::write_record(telemetry::Record* r, int direction, const PortValue& v, sim::Nanos at) const {
  auto* p = r->mutable_port();
  p->set_link(link_name(link_of_direction(direction)));
  p->set_upward(direction_upward(direction));
  p->set_time_ns(at);
  p->set_tx_bytes(v.tx_bytes);
  p->set_tx_packets(v.tx_packets);
  p->set_queue_depth(v.queue_depth);
  p->set_ecn_marked(v.ecn_marked);
  p->set_link_up(v.link_up);
  p->set_crc_errors(v.crc_errors);
  p->set_fec_corrected(v.fec_corrected);
  p->set_fec_uncorrectable(v.fec_uncorrectable);
  p->set_fec_symbol_errors(v.fec_symbol_errors);
}

void FabricSampler::measure_second(sim::Nanos at, bool traffic_flowing) {
  if (measured_at_ == at) return;
  measured_at_ = at;
  flowing_now_ = traffic_flowing;
  const sim::Nanos period = sim::kSecond;
  // Nothing the counters read has changed since the last second: the rates,
  // the links' states, whether the job iterates, and, while it does not (its
  // iterations' rates hold the background of their own windows), the
  // background load and loss.
  quiet_now_ = previous_ >= 0 && at - previous_ == period && !measured_ &&
               engine_.state_version() == previous_engine_version_ && traffic_flowing == previous_flowing_ &&
               (traffic_flowing || effects_.next_link_change(previous_ - period) >= at);
  if (quiet_now_ || traffic_flowing) return;
  // Background traffic of congestion faults alone, over this second.
  const sim::Nanos from = std::max<sim::Nanos>(0, at - period);
  const FabricWindow window = measure_fabric({}, engine_.topology(), effects_, from, at, params_.counters);
  std::map<int, PortRate> rates;
  const double seconds = sim::to_seconds(at - from);
  for (const auto& [direction, p] : window.ports)
    if (p.tx_bytes > 0 || p.fec_corrected > 0 || p.fec_uncorrectable > 0) {
      PortRate rate = port_rate(p, seconds);
      rate.crc_errors = 0;  // no job traffic to corrupt
      rates[direction] = rate;
    }
  // The RNICs' counters read these rates through host_link_bytes_per_second:
  // a change must show in version() (a background load ending while the job
  // is stopped once left the RNICs counting it for the rest of the run).
  if (rates != idle_rates_) ++version_;
  idle_rates_ = std::move(rates);
  index_rates(idle_rates_, &idle_lookup_);
}

double FabricSampler::host_link_bytes_per_second(sim::EndpointId endpoint, bool upward) const {
  return static_cast<double>(
      value_of(directed_link(engine_.topology().host_link(endpoint), upward), flowing_now_).tx_bytes);
}

void FabricSampler::sample(sim::Nanos at, bool traffic_flowing, telemetry::Batch* out) {
  measure_second(at, traffic_flowing);
  if (quiet_now_) {
    // Touch the ports only when some of them start repeating now.
    if (!all_repeating_)
      for (auto& [direction, port] : ports_)
        if (port.repeat_from < 0) port.repeat_from = at;
    all_repeating_ = true;
  } else {
    all_repeating_ = false;
    const std::map<int, PortRate>& rates = traffic_flowing ? iteration_rates_ : idle_rates_;
    std::vector<int> directions;
    for (const auto& [direction, port] : ports_) directions.push_back(direction);
    for (const auto& [direction, rate] : rates) directions.push_back(direction);
    std::sort(directions.begin(), directions.end());
    directions.erase(std::unique(directions.begin(), directions.end()), directions.end());
    for (int direction : directions) {
      const PortValue v = value_of(direction, traffic_flowing);
      const bool idle = v.idle();
      auto it = ports_.find(direction);
      if (it != ports_.end() && it->second.last == v) {
        if (it->second.repeat_from < 0) it->second.repeat_from = at;
        continue;
      }
      if (it == ports_.end() && idle) continue;
      if (it != ports_.end()) close(direction, it->second, previous_);
      telemetry::Record* r = out->add_records();
      write_record(r, direction, v, at);
      published_bytes_ += r->ByteSizeLong();
      if (idle)
        ports_.erase(it);  // one zero record, then silence
      else
        ports_[direction].last = v;
    }
  }
  if (traffic_flowing || !transports_.empty()) write_transport(at, traffic_flowing, out);
  if (at % params_.hold == 0) {
    for (auto& [direction, port] : ports_) close(direction, port, at);
    for (auto& [endpoint, transport] : transports_) close_transport(endpoint, transport, at);
    all_repeating_ = false;
    transports_repeating_ = false;
  }
  previous_ = at;
  previous_engine_version_ = engine_.state_version();
  previous_flowing_ = traffic_flowing;
  measured_ = false;
  emit_closed(out);
}

void FabricSampler::flush(telemetry::Batch* out) {
  for (auto& [direction, port] : ports_) close(direction, port, previous_);
  for (auto& [endpoint, transport] : transports_) close_transport(endpoint, transport, previous_);
  all_repeating_ = false;
  transports_repeating_ = false;
  emit_closed(out);
}

const std::string& FabricSampler::link_name(sim::LinkId link) const {
  auto it = names_.find(link);
  if (it == names_.end()) it = names_.emplace(link, engine_.topology().link_name(link)).first;
  return it->second;
}

void FabricSampler::close(int direction, Port& port, sim::Nanos until) {
  if (port.repeat_from < 0) return;
  closed_[{port.repeat_from, until}].ports.push_back({direction, port.last, port.repeat_from});
  port.repeat_from = -1;
}

void FabricSampler::close_transport(sim::EndpointId endpoint, Transport& transport, sim::Nanos until) {
  if (transport.repeat_from < 0) return;
  closed_[{transport.repeat_from, until}].transports.push_back({endpoint, transport.last, transport.repeat_from});
  transport.repeat_from = -1;
}

// Blocks are written where they are published: the batch may live on an
// arena, and a cluster's ports make blocks of thousands of records.
void FabricSampler::emit_closed(telemetry::Batch* out) {
  for (const auto& [span, closed] : closed_) {
    telemetry::SteadySamples* block = out->add_steady_samples();
    block->set_from_ns(span.first);
    block->set_until_ns(span.second);
    block->set_period_ns(sim::kSecond);
    block->mutable_samples()->Reserve(static_cast<int>(closed.ports.size() + closed.transports.size()));
    for (const ClosedPort& p : closed.ports) write_record(block->add_samples(), p.direction, p.value, p.from);
    for (const ClosedTransport& t : closed.transports)
      write_transport_record(block->add_samples(), t.endpoint, t.value, t.from);
    published_bytes_ += block->ByteSizeLong();
  }
  closed_.clear();
}

}  // namespace gauntlet::models
