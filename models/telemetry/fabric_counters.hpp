#pragma once
// Switch port and RNIC counters over one sample window, from the traffic
// ledger's flow segments and the background load of congestion faults.
//
// Congestion and loss, as the packet engine measured them
// (sim/network_calibration.hpp). A port's offered load is what its flows'
// senders would push if this port did not hold them back (each flow's
// demand, see LedgerFlow) plus background traffic. While it exceeds the
// port's capacity C, the table's load response for the switches' ECN
// setting (offered / C) gives, over that time,
//   queue      = mean queueing delay x C            (time-averaged over the window)
//   ECN marks  = marked share x the packets the port sends (C dt / MTU)
//   CNPs       = the CNP rate x the time a flow crosses the port, per flow
//                (sent by the receiver's RNIC, handled by the sender's);
//   ECN-marked packets a flow's receiver gets = the marked share x its
//                packets while it crosses the port (the most congested port
//                on its path counts).
// Below capacity the packet engine builds no queue and marks nothing: a lone
// flow at line rate offers exactly C and is not congestion.
// A lossy link (link_loss) corrupts its share of the frames crossing it
// each way, counted as CRC errors by the receiving side, whose FEC counts
// what the symbol errors that lose that share of MTU frames do to every
// codeword the link carries, traffic or idle (sim/fec.hpp); a flow whose path
// loses p costs, per packet delivered, the table's retransmissions at its
// sender and NAKs sent by its receiver (and received by the sender), at the
// packets in flight of a cross-spine path on its first link; the receiver
// counts as out of sequence what the sender resends, less the lost packets.
#include <map>
#include <vector>

#include "models/calibration.hpp"
#include "models/telemetry/telemetry_effects.hpp"
#include "models/telemetry/traffic_ledger.hpp"
#include "sim/network_calibration.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

// Calibration attributes rnic.mtu and fabric.ecn_* (models/calibration.hpp),
// and the network calibration table that says what they do.
struct FabricCounterParams {
  double mtu_bytes = calibration::kRnicMtu.default_value;  // RoCE payload per packet
  const sim::NetworkCalibration* table = &sim::shipped_network_calibration();
  // The table's load profile nearest the switches' Kmin, Kmax and Pmax.
  const sim::EcnProfile* ecn = &sim::shipped_network_calibration().ecn_profile(
      calibration::kEcnKmin.default_value, calibration::kEcnKmax.default_value, calibration::kEcnPmax.default_value);

  static FabricCounterParams from(const sim::Calibration& calibration, const sim::NetworkCalibration& table);
};

struct PortWindow {
  double tx_bytes = 0;     // flows and background
  double queue_bytes = 0;  // mean occupancy over the window
  double ecn_marked = 0;   // packets
  double crc_errors = 0;   // frames the receiving side discarded
  double overloaded_seconds = 0;
  // The receiving side's FEC counts (sim/fec.hpp) over the window.
  double fec_corrected = 0, fec_uncorrectable = 0, fec_symbol_errors = 0;
};

struct NicWindow {
  double tx_bytes = 0;
  double rx_bytes = 0;
  double cnp = 0;                  // CNPs handled as a sender
  double retransmitted = 0;        // packets resent as a sender
  double naks_sent = 0;            // as a receiver
  double naks_received = 0;        // as a sender
  double cnp_sent = 0;             // as a receiver (notification point)
  double ecn_marked_received = 0;  // as a receiver
  double out_of_sequence = 0;      // as a receiver: packets past a hole, discarded
};

// One connection's traffic over the window (its RNICs' queue pairs toward
// one peer share a 5-tuple), for flow records.
struct FlowWindow {
  double bytes = 0;
  double retransmitted = 0;     // packets its sender resent
  std::vector<int> directions;  // its route, as directed links, when it last moved
  sim::Nanos last_seen = -1;
};

struct FabricWindow {
  std::map<int, PortWindow> ports;            // by directed link
  std::map<sim::EndpointId, NicWindow> nics;  // by endpoint
  // By (src, dst); measured only when asked for.
  std::map<std::pair<sim::EndpointId, sim::EndpointId>, FlowWindow> flows;
};

// `per_flow`: also fill FabricWindow::flows.
FabricWindow measure_fabric(const std::vector<FlowSegment>& segments, const sim::Topology& topology,
                            const TelemetryEffects& effects, sim::Nanos from, sim::Nanos to,
                            const FabricCounterParams& params = {}, bool per_flow = false);

}  // namespace gauntlet::models
