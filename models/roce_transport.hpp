#pragma once
// RoCE's reliable transport resends with go-back-N: a lost packet makes the
// sender resend everything it had in flight after it. Goodput therefore
// collapses super-linearly with loss once the window is large, which is what
// makes a 1% lossy link so much worse than a 1% slower one. How much, and
// what it costs in retransmissions and NAKs, the packet engine measures
// (sim/network_calibration.hpp); this file holds the transport's constants.
#include "sim/time.hpp"
#include "sim/transport_stalls.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

struct RoceTransportParams {
  double mtu_bytes = 4096;
  // Tries after the first before the queue pair gives up (the verbs
  // retry_cnt, 7 in NCCL's default set-up).
  int retry_count = 7;
  // Packets one connection carries in a collective exchange: 4 GiB at 4 KiB.
  double exchange_packets = 1 << 20;
  // A data frame on the wire: the MTU's payload and RoCEv2's 62 bytes of
  // Ethernet, IPv4, UDP, BTH, ICRC and FCS (sim/packet/roce_params.hpp);
  // ACKs and NAKs are 64-byte frames.
  double header_bytes = 62;
  double control_frame_bytes = 64;
  // Adaptive retransmission's first timeout (the calibration attribute
  // transport.retransmit_initial_timeout, models/packet_transport_calibration.hpp).
  sim::Nanos initial_retransmit_timeout = 1'048'576;
  // How long a responder waits to NAK a persisting hole again
  // (transport.nak_interval).
  sim::Nanos nak_interval = 500'000;
};

// Propagation round trip of a cross-spine path: four hops each way.
inline sim::Nanos cross_spine_round_trip(const sim::Topology& topology) { return 8 * topology.shape().link_latency; }

// Packets in flight on a path of this rate and propagation round trip: the
// network calibration table's bdp_packets.
inline double bdp_packets(double bytes_per_second, sim::Nanos rtt, const RoceTransportParams& params) {
  return bytes_per_second * sim::to_seconds(rtt) / params.mtu_bytes;
}

// Loss rate at which, in expectation, one packet of an exchange is lost on
// every try (N p^(retry_count+1) = 1): from there on the queue pair errors
// out and the collective fails instead of merely slowing down.
double retry_exhaustion_loss(const RoceTransportParams& params);

// The retransmission timeouts a message waits out on a link of this line
// rate losing `loss` of its data frames (and control frames by their
// length, as RS-FEC loses them, sim/fec.hpp), where go-back-N leaves
// `goodput` of the line, as the packet engine runs the transport: the
// responder NAKs a hole once, and again only if packets still arrive
// nak_interval later. A hole whose NAK or first resend is lost in the
// message's last nak_interval of sending (its last goodput x line rate x
// nak_interval bytes) leaves the sender waiting for its timeout once it has
// sent the rest; earlier ones are NAKed again, which the table's endless
// streams include. So does a message whose last packet, or its ACK, is
// lost: nothing comes after it to reveal the hole. Per packet of that last
// stretch loss x (loss + control loss), per message loss + control loss,
// and a timeout's resend is lost again with the loss.
sim::TransferStalls transfer_stalls(double loss, double line_rate_gbps, double goodput,
                                    const RoceTransportParams& params);

}  // namespace gauntlet::models
