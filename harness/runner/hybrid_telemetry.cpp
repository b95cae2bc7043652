#include "harness/runner/hybrid_telemetry.hpp"

#include <map>
#include <string>
#include <utility>

namespace gauntlet::harness {
namespace {

bool counts_anything(const telemetry::PortCounters& p) {
  return p.tx_packets() > 0 || p.crc_errors() > 0 || p.drops() > 0 || p.pause_sent() > 0 || p.pause_received() > 0 ||
         p.ecn_marked() > 0 || p.pfc_wd_deadlock_detected() > 0 || p.pfc_wd_deadlock_restored() > 0 ||
         p.pfc_wd_tx_dropped_packets() > 0 || p.pfc_wd_rx_dropped_packets() > 0;
}

bool counts_anything(const telemetry::RnicTransportCounters& t) {
  return t.retransmitted_packets() > 0 || t.naks_sent() > 0 || t.naks_received() > 0 || t.out_of_sequence() > 0 ||
         t.cnp_sent() > 0 || t.cnp_handled() > 0 || t.timeouts() > 0 || t.qp_errors() > 0 || t.pause_storm_errors() > 0;
}

std::string port_key(const telemetry::PortCounters& p) { return p.link() + (p.upward() ? "+" : "-"); }

// The counters packets show take the model's estimate's place.
void overlay(const telemetry::PortCounters& counted, telemetry::PortCounters* model) {
  model->set_crc_errors(counted.crc_errors());
  model->set_drops(counted.drops());
  model->set_pause_sent(counted.pause_sent());
  model->set_pause_received(counted.pause_received());
  model->set_pause_duration_us(counted.pause_duration_us());
  model->set_ecn_marked(counted.ecn_marked());
  model->set_pfc_wd_deadlock_detected(counted.pfc_wd_deadlock_detected());
  model->set_pfc_wd_deadlock_restored(counted.pfc_wd_deadlock_restored());
  model->set_pfc_wd_tx_dropped_packets(counted.pfc_wd_tx_dropped_packets());
  model->set_pfc_wd_rx_dropped_packets(counted.pfc_wd_rx_dropped_packets());
}

}  // namespace

void PacketCountMerge::merge(const telemetry::Batch& packets, telemetry::Batch* out) {
  // The model's plain records, by port direction or RNIC and time.
  PortIndex ports;
  RnicIndex rnics;
  for (telemetry::Record& r : *out->mutable_records()) {
    if (r.has_port()) {
      ports[{port_key(r.port()), r.port().time_ns()}] = r.mutable_port();
      model_ports_[port_key(r.port())] = r.port();
    } else if (r.has_transport()) {
      rnics[{r.transport().nic(), r.transport().time_ns()}] = r.mutable_transport();
      model_rnics_[r.transport().nic()] = r.transport();
    }
  }
  for (const telemetry::Record& r : packets.records()) {
    if (r.has_port())
      merge_port(r.port(), ports, out);
    else if (r.has_transport())
      merge_rnic(r.transport(), rnics, out);
  }
}

void PacketCountMerge::merge_rnic(const telemetry::RnicTransportCounters& t, const RnicIndex& rnics,
                                  telemetry::Batch* out) {
  const bool counts = counts_anything(t);
  telemetry::RnicTransportCounters* shown = nullptr;
  if (const auto it = rnics.find({t.nic(), t.time_ns()}); it != rnics.end()) {
    overlaid_rnics_.erase(t.nic());  // the model's own record speaks for the RNIC again
    if (!counts) return;
    shown = it->second;
  } else {
    // Quiet where the model's last record stands: nothing to say. Quiet
    // after a batch's counts: the model's last record again.
    if (!counts && !overlaid_rnics_.erase(t.nic())) return;
    shown = out->add_records()->mutable_transport();
    if (const auto held = model_rnics_.find(t.nic()); held != model_rnics_.end())
      *shown = held->second;
    else
      shown->set_nic(t.nic());
    shown->set_time_ns(t.time_ns());
    if (!counts) return;
    overlaid_rnics_.insert(t.nic());
  }
  shown->set_retransmitted_packets(t.retransmitted_packets());
  shown->set_naks_sent(t.naks_sent());
  shown->set_naks_received(t.naks_received());
  shown->set_out_of_sequence(t.out_of_sequence());
  shown->set_cnp_sent(t.cnp_sent());
  shown->set_cnp_handled(t.cnp_handled());
  shown->set_timeouts(t.timeouts());
  shown->set_qp_errors(t.qp_errors());
  shown->set_pause_storm_errors(t.pause_storm_errors());
}

void PacketCountMerge::merge_port(const telemetry::PortCounters& p, const PortIndex& ports, telemetry::Batch* out) {
  const std::string key = port_key(p);
  if (const auto it = ports.find({key, p.time_ns()}); it != ports.end()) {
    overlaid_.erase(key);  // the model's own record speaks for the port again
    if (counts_anything(p)) overlay(p, it->second);
    return;
  }
  // Quiet where the model's last record stands: nothing to say. Quiet after
  // a batch's counts: the model's last record again.
  const bool counts = counts_anything(p);
  if (!counts && !overlaid_.erase(key)) return;
  telemetry::PortCounters* shown = out->add_records()->mutable_port();
  if (const auto held = model_ports_.find(key); held != model_ports_.end()) {
    *shown = held->second;
  } else {  // the model never counted a byte on it
    shown->set_link(p.link());
    shown->set_upward(p.upward());
    shown->set_link_up(p.link_up());
  }
  shown->set_time_ns(p.time_ns());
  if (!counts) return;
  overlay(p, shown);
  overlaid_.insert(key);
}

}  // namespace gauntlet::harness
