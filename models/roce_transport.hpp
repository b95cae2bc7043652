#pragma once
// RoCE's reliable transport resends with go-back-N: a lost packet makes the
// sender resend everything it had in flight after it. Goodput therefore
// collapses super-linearly with loss once the window is large, which is what
// makes a 1% lossy link so much worse than a 1% slower one. How much, and
// what it costs in retransmissions and NAKs, the packet engine measures
// (sim/network_calibration.hpp); this file holds the transport's constants.
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

struct RoceTransportParams {
  double mtu_bytes = 4096;
  // Tries after the first before the queue pair gives up (the verbs
  // retry_cnt, 7 in NCCL's default set-up).
  int retry_count = 7;
  // Packets one connection carries in a collective exchange: 4 GiB at 4 KiB.
  double exchange_packets = 1 << 20;
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

}  // namespace gauntlet::models
