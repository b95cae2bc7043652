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
  // Tries after the first before the queue pair gives up (the verbs
  // retry_cnt, 7 in NCCL's default set-up).
  int retry_count = 7;
  // Packets one connection carries in a collective exchange: 4 GiB at 4 KiB.
  double exchange_packets = 1 << 20;
};

// Packets in flight on a path of this rate and round-trip time.
double window_packets(double bytes_per_second, sim::Nanos rtt, const RoceTransportParams& params);

// Fraction of the line rate delivered as new data with per-packet loss
// probability `loss` and `window` packets in flight:
//   (1 - p) / (1 + p (W - 1)).
double go_back_n_goodput(double loss, double window);

// Loss rate at which, in expectation, one packet of an exchange is lost on
// every try (N p^(retry_count+1) = 1): from there on the queue pair errors
// out and the collective fails instead of merely slowing down.
double retry_exhaustion_loss(const RoceTransportParams& params);

}  // namespace gauntlet::models
