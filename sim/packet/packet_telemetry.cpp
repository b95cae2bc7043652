#include "sim/packet/packet_telemetry.hpp"

#include <cmath>
#include <string>

#include "sim/component_id.hpp"
#include "sim/contract.hpp"
#include "sim/fec.hpp"

namespace gauntlet::sim {
namespace {

// Samples are differences of counters kept since the engine started: one
// that went back would wrap around as an unsigned difference.
bool only_grew(const PacketPortCounters& now, const PacketPortCounters& was) {
  return now.tx_bytes >= was.tx_bytes && now.tx_packets >= was.tx_packets && now.ecn_marked >= was.ecn_marked &&
         now.pause_sent >= was.pause_sent && now.pause_received >= was.pause_received && now.drops >= was.drops &&
         now.crc_errors >= was.crc_errors && now.queue_byte_ns >= was.queue_byte_ns && now.paused_ns >= was.paused_ns &&
         now.pfcwd_detected >= was.pfcwd_detected && now.pfcwd_restored >= was.pfcwd_restored &&
         now.pfcwd_tx_dropped >= was.pfcwd_tx_dropped && now.pfcwd_rx_dropped >= was.pfcwd_rx_dropped;
}

bool only_grew(const PacketRnicCounters& now, const PacketRnicCounters& was) {
  return now.tx_bytes >= was.tx_bytes && now.rx_bytes >= was.rx_bytes && now.tx_packets >= was.tx_packets &&
         now.rx_packets >= was.rx_packets && now.retransmitted_packets >= was.retransmitted_packets &&
         now.naks_sent >= was.naks_sent && now.naks_received >= was.naks_received &&
         now.out_of_sequence >= was.out_of_sequence && now.cnp_sent >= was.cnp_sent &&
         now.cnp_handled >= was.cnp_handled && now.timeouts >= was.timeouts && now.qp_errors >= was.qp_errors &&
         now.ecn_marked_received >= was.ecn_marked_received && now.pause_storm_errors >= was.pause_storm_errors;
}

// The receiving side's FEC counts over `bits` of line time: the symbol
// errors that lose the share of frames the receiver discarded as corrupted.
void set_fec(double bits, std::uint64_t frames, std::uint64_t corrupted, telemetry::PortCounters* p) {
  if (corrupted == 0 || frames == 0) return;
  const double loss = static_cast<double>(corrupted) / static_cast<double>(frames);
  const double frame_bytes = static_cast<double>(p->tx_bytes()) / static_cast<double>(frames);
  const FecCounts fec = fec_counts(symbol_error_probability_for(loss, frame_bytes), bits);
  p->set_fec_corrected(static_cast<std::uint64_t>(std::llround(fec.corrected_codewords)));
  p->set_fec_uncorrectable(static_cast<std::uint64_t>(std::llround(fec.uncorrectable_codewords)));
  p->set_fec_symbol_errors(static_cast<std::uint64_t>(std::llround(fec.symbol_errors)));
}

}  // namespace

PacketTelemetry::PacketTelemetry(const PacketCounterSource& engine)
    : engine_(engine),
      ports_(static_cast<std::size_t>(engine.topology().links() * 2)),
      rnics_(static_cast<std::size_t>(engine.topology().endpoints())) {}

double PacketTelemetry::cnp_rate(EndpointId endpoint) const {
  return rnics_[static_cast<std::size_t>(endpoint)].cnp_rate;
}

double PacketTelemetry::port_bytes_per_second(LinkId link, bool upward) const {
  return ports_[static_cast<std::size_t>(link * 2 + (upward ? 1 : 0))].bytes_per_second;
}

void PacketTelemetry::sample(Nanos at, telemetry::Batch* out) {
  const Topology& topology = engine_.topology();
  const Nanos span = at - last_at_;
  if (span <= 0) return;
  for (LinkId link = 0; link < topology.links(); ++link)
    for (bool upward : {true, false}) {
      PortState& state = ports_[static_cast<std::size_t>(link * 2 + (upward ? 1 : 0))];
      const PacketPortCounters now = engine_.port_counters(link, upward);
      const PacketPortCounters& was = state.last;
      GAUNTLET_INVARIANT(only_grew(now, was), "a counter of " + topology.link_name(link) + " went back");
      const bool counted = now.tx_packets != was.tx_packets || now.pause_sent != was.pause_sent ||
                           now.pause_received != was.pause_received || now.drops != was.drops ||
                           now.crc_errors != was.crc_errors || now.queue_byte_ns != was.queue_byte_ns ||
                           now.pfcwd_detected != was.pfcwd_detected || now.pfcwd_restored != was.pfcwd_restored ||
                           now.pfcwd_tx_dropped != was.pfcwd_tx_dropped || now.pfcwd_rx_dropped != was.pfcwd_rx_dropped;
      if (counted || state.active) {
        auto* p = out->add_records()->mutable_port();
        p->set_link(topology.link_name(link));
        p->set_upward(upward);
        p->set_time_ns(at);
        p->set_tx_bytes(now.tx_bytes - was.tx_bytes);
        p->set_tx_packets(now.tx_packets - was.tx_packets);
        p->set_queue_depth((now.queue_byte_ns - was.queue_byte_ns) / static_cast<double>(span));
        p->set_ecn_marked(now.ecn_marked - was.ecn_marked);
        p->set_link_up(engine_.link_state(link).up);
        p->set_pause_sent(now.pause_sent - was.pause_sent);
        p->set_pause_received(now.pause_received - was.pause_received);
        p->set_drops(now.drops - was.drops);
        p->set_crc_errors(now.crc_errors - was.crc_errors);
        p->set_pause_duration_us(static_cast<std::uint64_t>((now.paused_ns - was.paused_ns) / 1000));
        p->set_pfc_wd_deadlock_detected(now.pfcwd_detected - was.pfcwd_detected);
        p->set_pfc_wd_deadlock_restored(now.pfcwd_restored - was.pfcwd_restored);
        p->set_pfc_wd_tx_dropped_packets(now.pfcwd_tx_dropped - was.pfcwd_tx_dropped);
        p->set_pfc_wd_rx_dropped_packets(now.pfcwd_rx_dropped - was.pfcwd_rx_dropped);
        set_fec(topology.link_bytes_per_second(link) * 8 * to_seconds(span), now.tx_packets - was.tx_packets,
                now.crc_errors - was.crc_errors, p);
        published_bytes_ += static_cast<std::uint64_t>(p->ByteSizeLong());
      }
      const double bytes_per_second = static_cast<double>(now.tx_bytes - was.tx_bytes) / to_seconds(span);
      if (bytes_per_second != state.bytes_per_second) ++version_;
      state.bytes_per_second = bytes_per_second;
      state.active = counted;
      state.last = now;
    }
  for (EndpointId e = 0; e < topology.endpoints(); ++e) {
    RnicState& state = rnics_[static_cast<std::size_t>(e)];
    const PacketRnicCounters now = engine_.rnic_counters(e);
    const PacketRnicCounters& was = state.last;
    GAUNTLET_INVARIANT(only_grew(now, was), "a counter of endpoint " + std::to_string(e) + " went back");
    const bool counted = now.retransmitted_packets != was.retransmitted_packets || now.naks_sent != was.naks_sent ||
                         now.naks_received != was.naks_received || now.out_of_sequence != was.out_of_sequence ||
                         now.cnp_sent != was.cnp_sent || now.cnp_handled != was.cnp_handled ||
                         now.timeouts != was.timeouts || now.qp_errors != was.qp_errors ||
                         now.ecn_marked_received != was.ecn_marked_received ||
                         now.pause_storm_errors != was.pause_storm_errors;
    if (counted || state.active) {
      auto* r = out->add_records()->mutable_transport();
      r->set_nic(ComponentId::make_nic(topology.host_of(e), topology.nic_of(e)).str());
      r->set_time_ns(at);
      r->set_retransmitted_packets(now.retransmitted_packets - was.retransmitted_packets);
      r->set_naks_sent(now.naks_sent - was.naks_sent);
      r->set_naks_received(now.naks_received - was.naks_received);
      r->set_out_of_sequence(now.out_of_sequence - was.out_of_sequence);
      r->set_cnp_sent(now.cnp_sent - was.cnp_sent);
      r->set_cnp_handled(now.cnp_handled - was.cnp_handled);
      r->set_timeouts(now.timeouts - was.timeouts);
      r->set_qp_errors(now.qp_errors - was.qp_errors);
      r->set_ecn_marked_received(now.ecn_marked_received - was.ecn_marked_received);
      r->set_pause_storm_errors(now.pause_storm_errors - was.pause_storm_errors);
      published_bytes_ += static_cast<std::uint64_t>(r->ByteSizeLong());
    }
    const double cnp_rate = static_cast<double>(now.cnp_handled - was.cnp_handled) / to_seconds(span);
    if (cnp_rate != state.cnp_rate) ++version_;
    state.cnp_rate = cnp_rate;
    state.active = counted;
    state.last = now;
  }
  last_at_ = at;
}

}  // namespace gauntlet::sim
