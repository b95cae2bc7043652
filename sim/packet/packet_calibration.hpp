#pragma once
// The micro-scenarios `gauntlet calibrate` runs on the packet engine, one
// engine per point, each seeded from the table's seed and the point alone,
// so any one point can be measured again by itself and gives the same
// figures bit for bit.
//   - loss: two hosts under one leaf, 400 Gb/s; the receiver's host link
//     corrupts frames both ways at the rate; one endless message streams,
//     and after a warm-up its new data, retransmissions, NAKs and timeouts
//     are counted over the window. The propagation delay per link sets the
//     packets in flight: bdp = line rate x 4 x latency / MTU.
//   - load: the same two hosts with other tenants' traffic on the
//     receiver's host link; at offered load 1 or more the job's stream
//     (line rate) crosses it too, over the rest. The leaf's egress toward
//     the receiver is the bottleneck: its mean queue, ECN-marked share and
//     the sender's CNPs over the window, for one ECN setting.
//   - pfc_storm: three hosts under one leaf; host 0's RNIC keeps pausing
//     the leaf; host 1 streams to host 2 and to host 0 over k flows.
#include <functional>
#include <string>
#include <vector>

#include "sim/network_calibration.hpp"
#include "sim/time.hpp"

namespace gauntlet::sim {

struct EcnSetting {
  double kmin_bytes = 0;  // at the micro-scenarios' 400 Gb/s
  double kmax_bytes = 0;
  double pmax = 0;
};

struct CalibrationGrid {
  std::vector<double> losses;
  std::vector<double> bdp_packets;
  std::vector<EcnSetting> ecn;
  std::vector<double> offered_loads;
  std::vector<int> storm_flows;
  Nanos warm_up = 2 * kMillisecond;
  Nanos loss_window = 0;
  Nanos load_window = 0;
  Nanos storm_window = 0;
};

// The shipped table's grid, and a coarser one with shorter windows.
CalibrationGrid full_calibration_grid();
CalibrationGrid quick_calibration_grid();

inline constexpr double kCalibrationLineRateGbps = 400;

LossPoint measure_loss_point(double loss, double bdp_packets, std::uint64_t seed, const CalibrationGrid& grid);
LoadPoint measure_load_point(const EcnSetting& ecn, double offered_load, std::uint64_t seed,
                             const CalibrationGrid& grid);
StormPoint measure_storm_point(int flows_to_storming_rnic, std::uint64_t seed, const CalibrationGrid& grid);

// Every point of the grid; `progress` hears each one done (points done, total).
NetworkCalibration run_calibration(const CalibrationGrid& grid, std::uint64_t seed,
                                   const std::function<void(int, int)>& progress = {});

// "ns-3 3.37.0, release build profile": the ns-3 the packet engine links.
std::string ns3_build();

}  // namespace gauntlet::sim
