#pragma once
// The flow engine's network physics, as measured on packets. `gauntlet
// calibrate` runs the packet engine on micro-scenarios and writes what it
// saw into a table; the flow engine, which has no packets, reads its
// transport and queueing figures from that table instead of closed forms:
//   - loss: per (loss rate, packets in flight), the goodput go-back-N leaves
//     a long stream and the retransmissions, NAKs and timeouts it costs;
//   - load: per ECN setting (Kmin, Kmax, Pmax) and offered load (the bytes
//     a port is offered over its capacity), the bottleneck queue's mean
//     delay, the share of its packets ECN marks and the CNPs per second a
//     sender crossing it handles;
//   - pfc_storm: how much a sender that shares a switch with a storming RNIC
//     is paused and what it still delivers to an innocent peer.
// Between grid points the table is interpolated: linearly in log loss rate
// and log packets in flight, linearly in offered load; below the smallest
// loss toward the lossless stream, outside the grid clamped to its edge.
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace gauntlet::sim {

struct LossPoint {
  double loss = 0;                      // per-packet loss probability on the link, each way
  double bdp_packets = 0;               // line rate x propagation round trip / MTU
  double goodput = 1;                   // new data delivered over the line rate's packets
  double retransmitted_per_packet = 0;  // per new packet delivered
  double naks_per_packet = 0;           // NAKs the responder sent, per new packet
  double timeouts_per_second = 0;       // retransmission timeouts of the stream
};

struct LoadPoint {
  double offered_load = 0;       // offered bytes over capacity at the bottleneck port
  double queueing_delay_ns = 0;  // mean wait in its egress queue
  double ecn_marked_per_packet = 0;
  double cnp_per_second = 0;  // handled by one sender crossing the port
};

struct EcnProfile {
  double kmin_bytes = 0;
  double kmax_bytes = 0;
  double pmax = 0;
  std::vector<LoadPoint> points;  // by offered load, ascending
};

struct StormPoint {
  int flows_to_storming_rnic = 0;  // the sender's flows toward the RNIC that storms
  double pause_fraction = 0;       // of the window its uplink was paused
  double victim_goodput = 0;       // its flow to an innocent peer, over the line rate
};

struct LossResponse {
  double goodput = 1;
  double retransmitted_per_packet = 0;
  double naks_per_packet = 0;
};

struct LoadResponse {
  Nanos queueing_delay = 0;
  double ecn_marked_per_packet = 0;
  double cnp_per_second = 0;
};

struct NetworkCalibration {
  // Where the table came from: the command that wrote it, the packet
  // engine's ns-3 build and the seed every micro-scenario derives its own from.
  std::string command;
  std::string ns3;
  std::uint64_t seed = 0;
  bool quick = false;
  double line_rate_gbps = 0;  // of every micro-scenario's links
  double mtu_bytes = 0;
  double loss_window_s = 0;  // how long each loss point streamed
  double load_window_s = 0;
  double storm_window_s = 0;
  std::vector<LossPoint> loss;  // a grid: every loss rate at every bdp
  std::vector<EcnProfile> ecn;
  std::vector<StormPoint> pfc_storm;

  // Interpolated (see the file comment); loss 0 is a clean stream.
  LossResponse loss_response(double loss, double bdp_packets) const;
  // For the profile nearest (Kmin, Kmax, Pmax), in log distance.
  const EcnProfile& ecn_profile(double kmin_bytes, double kmax_bytes, double pmax) const;
  static LoadResponse load_response(const EcnProfile& profile, double offered_load);
};

// The table as `gauntlet calibrate` writes it (JSON, fixed key order and
// number format: the same table gives the same bytes).
std::string to_json(const NetworkCalibration& table);
std::string to_json(const LossPoint& point);
std::string to_json(const LoadPoint& point);
std::string to_json(const StormPoint& point);
// Reads a table; bad input is an InputError naming `file_name` (with line
// and column for malformed JSON, the entry's path otherwise).
NetworkCalibration parse_network_calibration(std::string_view text, const std::string& file_name);
// The table shipped in data/calibration/network.json, compiled in.
const NetworkCalibration& shipped_network_calibration();

}  // namespace gauntlet::sim
