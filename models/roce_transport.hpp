#pragma once
// RoCE's reliable transport resends with go-back-N: a lost packet makes the
// sender resend everything it had in flight after it. Goodput therefore
// collapses super-linearly with loss once the window is large, which is what
// makes a 1% lossy link so much worse than a 1% slower one.
#include "sim/time.hpp"

namespace gauntlet::models {

struct RoceTransportParams {
  double mtu_bytes = 4096;
  // Round trip seen by the sender beyond propagation: NIC processing and
  // ACK coalescing.
  sim::Nanos ack_overhead = 2 * sim::kMicrosecond;
};

// Packets in flight on a path of this rate and round-trip time.
double window_packets(double bytes_per_second, sim::Nanos rtt, const RoceTransportParams& params);

// Fraction of the line rate delivered as new data with per-packet loss
// probability `loss` and `window` packets in flight:
//   (1 - p) / (1 + p (W - 1)).
double go_back_n_goodput(double loss, double window);

}  // namespace gauntlet::models
