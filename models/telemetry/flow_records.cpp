#include "models/telemetry/flow_records.hpp"

#include <cmath>

#include "sim/component_id.hpp"
#include "sim/ecmp.hpp"
#include "models/telemetry/traffic_ledger.hpp"

namespace gauntlet::models {

FlowRecordParams FlowRecordParams::from(const sim::Calibration& c, std::uint64_t seed) {
  namespace k = calibration;
  FlowRecordParams p;
  p.active_timeout = static_cast<sim::Nanos>(c.value(k::kFlowActiveTimeout));
  p.idle_timeout = static_cast<sim::Nanos>(c.value(k::kFlowIdleTimeout));
  p.sampling_interval = static_cast<std::uint64_t>(c.value(k::kFlowSamplingInterval));
  p.mtu_bytes = c.value(k::kRnicMtu);
  p.seed = seed;
  return p;
}

std::string underlay_address(const sim::Topology& topology, sim::EndpointId endpoint) {
  const int host = topology.host_of(endpoint);
  return "10." + std::to_string(host / 256) + "." + std::to_string(host % 256) + "." +
         std::to_string(topology.nic_of(endpoint) + 1);
}

FlowRecordExporter::FlowRecordExporter(const sim::Topology& topology, FlowRecordParams params)
    : topology_(topology), params_(params), rng_(sim::mix_seed(params.seed, "flow records/sampling")) {}

std::uint64_t FlowRecordExporter::sampled(std::uint64_t packets) {
  const std::uint64_t n = params_.sampling_interval;
  if (n <= 1) return packets;
  return rng_.binomial(packets, 1.0 / static_cast<double>(n)) * n;
}

void FlowRecordExporter::meter(sim::Nanos at, const std::vector<FlowRate>& flows, const OverlayDirectory* overlay,
                               telemetry::Batch* out) {
  const auto overlay_of = [overlay](sim::EndpointId e) {
    const VirtualFunction* vf = overlay ? overlay->attached_vf(e) : nullptr;
    return vf ? overlay_address_text(vf->overlay_address) : std::string();
  };
  // `flows` and the cache are both in (src, dst) order: one pass joins them.
  auto it = cache_.begin();
  for (const FlowRate& f : flows) {
    if (f.bytes_per_second <= 0) continue;
    const auto packets = static_cast<std::uint64_t>(std::ceil(f.bytes_per_second / params_.mtu_bytes));
    const std::uint64_t kept = sampled(packets);
    const std::uint64_t resent = sampled(static_cast<std::uint64_t>(std::llround(f.retransmitted_per_second)));
    if (kept == 0) continue;  // no packet of the flow sampled this second
    const Key key{f.src, f.dst};
    while (it != cache_.end() && it->first < key) ++it;
    if (it != cache_.end() && it->first == key && at - it->second.start > params_.active_timeout) {
      export_entry(key, it->second, FlowEndReason::active_timeout, out);
      it = cache_.erase(it);
    }
    if (it == cache_.end() || it->first != key) {
      it = cache_.emplace_hint(it, key, Entry{});
      it->second.start = at - sim::kSecond;
      it->second.src_overlay = overlay_of(f.src);
      it->second.dst_overlay = overlay_of(f.dst);
    }
    Entry& e = it->second;
    e.last_active = at;
    e.bytes += params_.sampling_interval <= 1
                   ? f.bytes_per_second
                   : static_cast<double>(kept) * f.bytes_per_second / static_cast<double>(packets);
    e.packets += kept;
    e.retransmitted += resent;
    if (e.directions != f.directions) e.directions = f.directions;
  }
  for (auto it = cache_.begin(); it != cache_.end();) {
    if (at - it->second.last_active >= params_.idle_timeout) {
      export_entry(it->first, it->second, FlowEndReason::idle_timeout, out);
      it = cache_.erase(it);
    } else {
      ++it;
    }
  }
}

void FlowRecordExporter::flush(sim::Nanos at, telemetry::Batch* out) {
  (void)at;
  for (const auto& [key, entry] : cache_) export_entry(key, entry, FlowEndReason::forced_end, out);
  cache_.clear();
}

void FlowRecordExporter::export_entry(const Key& key, const Entry& e, FlowEndReason reason, telemetry::Batch* out) {
  telemetry::Record* record = out->add_records();
  telemetry::FlowRecord* r = record->mutable_flow();
  r->set_exporter(nic_name(key.first));
  r->set_src(nic_name(key.first));
  r->set_dst(nic_name(key.second));
  r->set_src_address(underlay_address(topology_, key.first));
  r->set_dst_address(underlay_address(topology_, key.second));
  r->set_src_overlay(e.src_overlay);
  r->set_dst_overlay(e.dst_overlay);
  r->set_protocol(sim::kUdpProtocol);
  r->set_src_port(sim::connection_source_port(key.first, key.second));
  r->set_dst_port(sim::kRoceUdpPort);
  r->set_start_ns(e.start);
  r->set_end_ns(e.last_active);
  r->set_bytes(static_cast<std::uint64_t>(std::llround(e.bytes)));
  r->set_packets(e.packets);
  r->set_retransmitted_packets(e.retransmitted);
  for (int direction : e.directions) r->add_path(link_name(link_of_direction(direction)));
  r->set_sampling_interval(static_cast<std::uint32_t>(params_.sampling_interval));
  r->set_end_reason(static_cast<std::uint32_t>(reason));
  published_bytes_ += record->ByteSizeLong();
}

const std::string& FlowRecordExporter::link_name(sim::LinkId link) {
  auto it = link_names_.find(link);
  if (it == link_names_.end()) it = link_names_.emplace(link, topology_.link_name(link)).first;
  return it->second;
}

const std::string& FlowRecordExporter::nic_name(sim::EndpointId endpoint) {
  auto it = nic_names_.find(endpoint);
  if (it == nic_names_.end())
    it = nic_names_
             .emplace(endpoint,
                      sim::ComponentId::make_nic(topology_.host_of(endpoint), topology_.nic_of(endpoint)).str())
             .first;
  return it->second;
}

}  // namespace gauntlet::models
