#include "sim/packet/packet_calibration.hpp"

#include <ns3/version-defines.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/contract.hpp"
#include "sim/packet/packet_engine.hpp"
#include "sim/packet/packet_test_support.hpp"

namespace gauntlet::sim {
namespace {

constexpr double kLineRate = kCalibrationLineRateGbps * 1e9 / 8;  // bytes per second
constexpr double kEndless = 1e12;                                 // a message no window sees the end of

// A point's seed: the table's, mixed with what the point measures (FNV-1a
// over its description), so that it does not depend on the other points.
std::uint64_t point_seed(std::uint64_t seed, const char* kind, double a, double b = 0, double c = 0, double d = 0) {
  char text[160];
  std::snprintf(text, sizeof text, "%s %.9g %.9g %.9g %.9g", kind, a, b, c, d);
  std::uint64_t h = 1469598103934665603ULL ^ seed;
  for (const char* p = text; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ULL;
  return h;
}

// The payload rate of a clean stream: the line rate less RoCEv2 headers.
double payload_rate(const RoceParams& params) {
  const double mtu = params.transport.mtu_payload;
  return kLineRate * mtu / (mtu + params.transport.header_bytes);
}

ClusterShape hosts_under_one_leaf(int hosts, Nanos link_latency) {
  ClusterShape shape = small_packet_fabric(hosts, 1);
  shape.host_link_gbps = shape.fabric_link_gbps = kCalibrationLineRateGbps;
  shape.link_latency = link_latency;
  return shape;
}

}  // namespace

CalibrationGrid full_calibration_grid() {
  CalibrationGrid g;
  g.losses = {1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1};
  g.bdp_packets = {16, 64, 256};
  // The DCQCN paper's guideline setting (5 KB / 200 KB / 1% at 40 Gb/s)
  // scaled to 400 Gb/s, both engines' default fabric.ecn_* and the same
  // band marked as steeply as HPCC's ns-3 model does (Pmax 0.2).
  g.ecn = {{50e3, 2e6, 0.01}, {100e3, 400e3, 0.01}, {100e3, 400e3, 0.2}};
  g.offered_loads = {0.5, 0.9, 1.0, 1.1, 1.3, 1.5, 1.7, 1.9};
  g.storm_flows = {0, 1, 2};
  g.loss_window = 5 * kMillisecond;
  // DCQCN against other tenants' steady traffic cycles over milliseconds
  // (a cut, then recovery at 55 us steps): the window spans many cycles.
  g.load_window = 40 * kMillisecond;
  g.storm_window = 2 * kMillisecond;
  return g;
}

CalibrationGrid quick_calibration_grid() {
  CalibrationGrid g = full_calibration_grid();
  g.losses = {1e-3, 1e-2, 1e-1};
  g.bdp_packets = {16, 256};
  g.ecn = {g.ecn[1]};
  g.offered_loads = {0.5, 1.0, 1.5, 1.9};
  g.storm_flows = {0, 1};
  g.warm_up = kMillisecond / 2;
  g.loss_window = g.load_window = g.storm_window = kMillisecond / 2;
  return g;
}

LossPoint measure_loss_point(double loss, double bdp_packets, std::uint64_t seed, const CalibrationGrid& grid) {
  const RoceParams params;
  const Nanos latency = std::llround(bdp_packets * params.transport.mtu_payload / (4 * kLineRate) * 1e9);
  Topology topology(hosts_under_one_leaf(2, std::max<Nanos>(1, latency)));
  PacketEngine engine(topology, point_seed(seed, "loss", loss, bdp_packets), params);
  engine.set_link_loss(topology.host_link(1), loss);
  const TransferId stream = engine.start_transfer(0, 1, kEndless, nullptr);
  engine.run_until(grid.warm_up);
  const double sent_before = engine.transfer_acknowledged(stream);
  const PacketRnicCounters sender_before = engine.rnic_counters(0), receiver_before = engine.rnic_counters(1);
  engine.run_until(grid.warm_up + grid.loss_window);
  const double new_bytes = engine.transfer_acknowledged(stream) - sent_before;
  const PacketRnicCounters sender = engine.rnic_counters(0), receiver = engine.rnic_counters(1);
  // A window's figures are differences of counters that only grow.
  GAUNTLET_INVARIANT(new_bytes >= 0 && sender.retransmitted_packets >= sender_before.retransmitted_packets &&
                     receiver.naks_sent >= receiver_before.naks_sent && sender.timeouts >= sender_before.timeouts);
  const double new_packets = std::max(1.0, new_bytes / params.transport.mtu_payload);
  const double window = to_seconds(grid.loss_window);
  LossPoint p;
  p.loss = loss;
  p.bdp_packets = bdp_packets;
  p.goodput = std::min(1.0, new_bytes / (payload_rate(params) * window));
  p.retransmitted_per_packet =
      static_cast<double>(sender.retransmitted_packets - sender_before.retransmitted_packets) / new_packets;
  p.naks_per_packet = static_cast<double>(receiver.naks_sent - receiver_before.naks_sent) / new_packets;
  p.timeouts_per_second = static_cast<double>(sender.timeouts - sender_before.timeouts) / window;
  return p;
}

LoadPoint measure_load_point(const EcnSetting& ecn, double offered_load, std::uint64_t seed,
                             const CalibrationGrid& grid) {
  RoceParams params;
  params.dcqcn.kmin_bytes = ecn.kmin_bytes;
  params.dcqcn.kmax_bytes = ecn.kmax_bytes;
  params.dcqcn.pmax = ecn.pmax;
  Topology topology(hosts_under_one_leaf(2, kMicrosecond));
  PacketEngine engine(topology, point_seed(seed, "load", offered_load, ecn.kmin_bytes, ecn.kmax_bytes, ecn.pmax),
                      params);
  const LinkId bottleneck = topology.host_link(1);
  const bool job_crosses = offered_load >= 1.0;
  const double background = job_crosses ? offered_load - 1.0 : offered_load;
  if (background > 0) engine.set_background_load(bottleneck, background);
  if (job_crosses) engine.start_transfer(0, 1, kEndless, nullptr);
  engine.run_until(grid.warm_up);
  const PacketPortCounters port_before = engine.port_counters(bottleneck, /*upward=*/false);
  const std::uint64_t cnp_before = engine.rnic_counters(0).cnp_handled;
  engine.run_until(grid.warm_up + grid.load_window);
  const PacketPortCounters port = engine.port_counters(bottleneck, /*upward=*/false);
  GAUNTLET_INVARIANT(port.tx_packets >= port_before.tx_packets && port.ecn_marked >= port_before.ecn_marked &&
                     port.queue_byte_ns >= port_before.queue_byte_ns &&
                     engine.rnic_counters(0).cnp_handled >= cnp_before);
  const double window_ns = static_cast<double>(grid.load_window);
  const double packets = static_cast<double>(port.tx_packets - port_before.tx_packets);
  LoadPoint p;
  p.offered_load = offered_load;
  // Mean bytes queued over the line rate: the mean wait of a packet arriving at a random time.
  p.queueing_delay_ns = (port.queue_byte_ns - port_before.queue_byte_ns) / window_ns / kLineRate * 1e9;
  p.ecn_marked_per_packet = packets > 0 ? static_cast<double>(port.ecn_marked - port_before.ecn_marked) / packets : 0;
  p.cnp_per_second =
      static_cast<double>(engine.rnic_counters(0).cnp_handled - cnp_before) / to_seconds(grid.load_window);
  return p;
}

StormPoint measure_storm_point(int flows_to_storming_rnic, std::uint64_t seed, const CalibrationGrid& grid) {
  const RoceParams params;
  Topology topology(hosts_under_one_leaf(3, kMicrosecond));
  PacketEngine engine(topology, point_seed(seed, "pfc_storm", flows_to_storming_rnic), params);
  engine.start_pfc_storm_from_endpoint(0, std::numeric_limits<Nanos>::max() / 4);
  const TransferId victim = engine.start_transfer(1, 2, kEndless, nullptr);
  for (int i = 0; i < flows_to_storming_rnic; ++i) engine.start_transfer(1, 0, kEndless, nullptr);
  engine.run_until(grid.warm_up);
  const double sent_before = engine.transfer_acknowledged(victim);
  const Nanos paused_before = engine.port_counters(topology.host_link(1), /*upward=*/true).paused_ns;
  engine.run_until(grid.warm_up + grid.storm_window);
  const double window = to_seconds(grid.storm_window);
  GAUNTLET_INVARIANT(engine.transfer_acknowledged(victim) >= sent_before &&
                     engine.port_counters(topology.host_link(1), true).paused_ns >= paused_before);
  StormPoint p;
  p.flows_to_storming_rnic = flows_to_storming_rnic;
  p.pause_fraction =
      std::min(1.0, static_cast<double>(engine.port_counters(topology.host_link(1), true).paused_ns - paused_before) /
                        static_cast<double>(grid.storm_window));
  p.victim_goodput =
      std::min(1.0, (engine.transfer_acknowledged(victim) - sent_before) / (payload_rate(params) * window));
  return p;
}

NetworkCalibration run_calibration(const CalibrationGrid& grid, std::uint64_t seed,
                                   const std::function<void(int, int)>& progress) {
  NetworkCalibration t;
  t.ns3 = ns3_build();
  t.seed = seed;
  t.line_rate_gbps = kCalibrationLineRateGbps;
  t.mtu_bytes = RoceParams{}.transport.mtu_payload;
  t.loss_window_s = to_seconds(grid.loss_window);
  t.load_window_s = to_seconds(grid.load_window);
  t.storm_window_s = to_seconds(grid.storm_window);
  const int total = static_cast<int>(grid.losses.size() * grid.bdp_packets.size() +
                                     grid.ecn.size() * grid.offered_loads.size() + grid.storm_flows.size());
  int done = 0;
  auto step = [&] {
    if (progress) progress(++done, total);
  };
  for (double loss : grid.losses)
    for (double bdp : grid.bdp_packets) {
      t.loss.push_back(measure_loss_point(loss, bdp, seed, grid));
      step();
    }
  for (const EcnSetting& ecn : grid.ecn) {
    EcnProfile profile{ecn.kmin_bytes, ecn.kmax_bytes, ecn.pmax, {}};
    for (double load : grid.offered_loads) {
      profile.points.push_back(measure_load_point(ecn, load, seed, grid));
      step();
    }
    t.ecn.push_back(std::move(profile));
  }
  for (int flows : grid.storm_flows) {
    t.pfc_storm.push_back(measure_storm_point(flows, seed, grid));
    step();
  }
  return t;
}

std::string ns3_build() {
  char text[96];
  std::snprintf(text, sizeof text, "ns-3 %d.%d.%d, %s build profile", NS3_VERSION_MAJOR, NS3_VERSION_MINOR,
                NS3_VERSION_PATCH, NS3_VERSION_BUILD_PROFILE);
  return text;
}

}  // namespace gauntlet::sim
