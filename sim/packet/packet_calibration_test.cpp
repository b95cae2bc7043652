#include "sim/packet/packet_calibration.hpp"

#include <gtest/gtest.h>

namespace gauntlet::sim {
namespace {

// The shipped table (data/calibration/network.json) is `gauntlet calibrate`'s
// output: a few of its points, measured again here, give the same bytes.
// The cheap ones: a stream that loss keeps slow and a short overload.
TEST(PacketCalibration, ShippedTableIsWhatTheMicroScenariosMeasure) {
  const NetworkCalibration& shipped = shipped_network_calibration();
  const CalibrationGrid grid = full_calibration_grid();
  EXPECT_EQ(shipped.command, "gauntlet calibrate --seed 1");
  EXPECT_EQ(shipped.ns3, ns3_build());
  EXPECT_EQ(shipped.loss_window_s, to_seconds(grid.loss_window));

  const LossPoint* lossy = nullptr;
  for (const LossPoint& p : shipped.loss)
    if (p.loss == 0.1 && p.bdp_packets == 64) lossy = &p;
  ASSERT_NE(lossy, nullptr);
  EXPECT_EQ(to_json(measure_loss_point(0.1, 64, shipped.seed, grid)), to_json(*lossy));

  const StormPoint& storm = shipped.pfc_storm.at(1);
  EXPECT_EQ(to_json(measure_storm_point(storm.flows_to_storming_rnic, shipped.seed, grid)), to_json(storm));
}

TEST(PacketCalibration, AShortWindowSeesTheSamePhysics) {
  // The quick grid's windows: loss costs goodput super-linearly with the
  // packets in flight, and an overloaded port queues and marks.
  const CalibrationGrid grid = quick_calibration_grid();
  const LossPoint short_path = measure_loss_point(1e-3, 16, 1, grid);
  const LossPoint long_path = measure_loss_point(1e-3, 256, 1, grid);
  EXPECT_GT(short_path.goodput, 0.95);
  EXPECT_LT(long_path.goodput, 0.9);  // 0.1% lost, >10% of the line spent resending
  EXPECT_GT(long_path.retransmitted_per_packet, 10 * short_path.retransmitted_per_packet);
  const EcnSetting ecn{100e3, 400e3, 0.01};
  const LoadPoint below = measure_load_point(ecn, 0.9, 1, grid);
  const LoadPoint above = measure_load_point(ecn, 1.9, 1, grid);
  EXPECT_EQ(below.ecn_marked_per_packet, 0);
  EXPECT_EQ(below.cnp_per_second, 0);
  EXPECT_GT(above.queueing_delay_ns, 100);
  EXPECT_GT(above.cnp_per_second, 0);
}

}  // namespace
}  // namespace gauntlet::sim
