#pragma once
// Capability of an engine without packets: retransmission-timeout stalls
// drawn per transfer across a lossy link (a packet engine acts the loss out
// itself). The rates are the transport model's (models/roce_transport.hpp);
// the collectives draw them when a flow set's bytes are delivered
// (models/collectives/flows.cpp), so a set's recorded outcome stays the
// network's and replays, and every replay draws anew.
#include <string>

#include "sim/network_engine.hpp"  // LinkId
#include "sim/time.hpp"

namespace gauntlet::sim {

// What a lossy link costs each transfer crossing it in retransmission
// timeouts: a transfer of n packets waits out Binomial(min(n, tail_packets),
// per_packet) plus Bernoulli(per_message) timeouts per lossy link of its
// route, each `first_timeout` long and followed by another twice as long
// while the resend after it is lost too (probability `repeat`).
struct TransferStalls {
  double per_packet = 0;
  double per_message = 0;
  double repeat = 0;
  Nanos first_timeout = 0;
  double packet_bytes = 4096;  // payload per packet, to count a transfer's packets
  double tail_packets = 0;     // the last stretch of a transfer whose holes may stall it
  bool any() const { return per_packet > 0 || per_message > 0; }
};

// Each change is named by the fault that causes it; a cause's rates on one
// link add to the others'.
class TransportStalls {
 public:
  virtual ~TransportStalls() = default;
  // Transfers starting across `link` from now on draw stalls at these rates;
  // rates with nothing to draw end `cause`'s.
  virtual void set_link_stalls(LinkId link, const std::string& cause, const TransferStalls& stalls) = 0;
  // Whether some link draws stalls now.
  virtual bool draws_stalls() const = 0;
  // The timeouts a transfer of `bytes` from src to dst waits out on the
  // lossy links of its route now, drawn from the engine's own stream; a
  // draw moves the engine's state version (no iteration that drew is
  // repeated as it was).
  virtual Nanos draw_stall(EndpointId src, EndpointId dst, double bytes) = 0;
};

}  // namespace gauntlet::sim
