#pragma once
// Switch port and RNIC counters over one sample window, from the traffic
// ledger's flow segments and the background load of congestion faults.
//
// Congestion proxy (DCQCN-like). A port's offered load is what its flows'
// senders would push if this port did not hold them back (each flow's
// demand, see LedgerFlow) plus background traffic. While the offered load
// exceeds the port's capacity C the egress queue builds until ECN marking
// throttles the senders; DCQCN holds it in the marking band, where RED marks
// with probability p = 1 - C / offered (the share of the offered load the
// port cannot drain), so
//   queue      ~ Kmin + (Kmax - Kmin) * p      (time-averaged over the window)
//   ECN marks  = integral of p * C dt / MTU    (packets marked)
//   CNPs       = time a flow crosses an overloaded port / CNP interval
//                (the receiver paces CNPs to one per interval per flow; they
//                are counted at the sender's RNIC, which handles them).
// Otherwise the queue is empty and nothing is marked: a lone flow at line
// rate offers exactly C and is not congestion; a lossy link or a capped flow
// table slows goodput without any queue.
#include <map>
#include <vector>

#include "models/calibration.hpp"
#include "models/telemetry/telemetry_effects.hpp"
#include "models/telemetry/traffic_ledger.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

// Calibration attributes rnic.mtu and fabric.* (models/calibration.hpp).
struct FabricCounterParams {
  double mtu_bytes = calibration::kRnicMtu.default_value;        // RoCE payload per packet
  double ecn_kmin_bytes = calibration::kEcnKmin.default_value;  // marking starts
  double ecn_kmax_bytes = calibration::kEcnKmax.default_value;  // marking probability reaches its maximum
  sim::Nanos cnp_interval = calibration::kCnpInterval.default_duration();

  static FabricCounterParams from(const sim::Calibration& calibration);
};

struct PortWindow {
  double tx_bytes = 0;          // flows and background
  double queue_bytes = 0;       // mean occupancy over the window
  double ecn_marked = 0;        // packets
  double overloaded_seconds = 0;
};

struct NicWindow {
  double tx_bytes = 0;
  double rx_bytes = 0;
  double cnp = 0;  // CNPs handled as a sender
};

struct FabricWindow {
  std::map<int, PortWindow> ports;            // by directed link
  std::map<sim::EndpointId, NicWindow> nics;  // by endpoint
};

FabricWindow measure_fabric(const std::vector<FlowSegment>& segments, const sim::Topology& topology,
                            const TelemetryEffects& effects, sim::Nanos from, sim::Nanos to,
                            const FabricCounterParams& params = {});

}  // namespace gauntlet::models
