#include "sim/network_calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/input_error.hpp"
#include "sim/rng.hpp"

namespace gauntlet::sim {
namespace {

// Packet-by-packet go-back-N with a perfect NAK path: the sender streams;
// when a packet is lost, the receiver discards the rest of the window that
// went out before the NAK reached the sender, which then resends from the
// lost packet. The best go-back-N can do at this loss and window.
double ideal_go_back_n_goodput(double loss, double window) {
  Rng rng = RngStreams(11).stream("gbn");
  long long sent = 0;
  int delivered = 0;
  while (delivered < 200000) {
    ++sent;
    if (rng.uniform() < loss) {
      sent += static_cast<long long>(window) - 1;
      continue;
    }
    ++delivered;
  }
  return static_cast<double>(delivered) / static_cast<double>(sent);
}

const NetworkCalibration& shipped() { return shipped_network_calibration(); }

TEST(ShippedNetworkCalibration, GoodputFallsWithLossAndNeverBeatsIdealGoBackN) {
  for (const LossPoint& p : shipped().loss) {
    const double ideal = ideal_go_back_n_goodput(p.loss, p.bdp_packets);
    // NAKs lost, retransmissions lost again (the responder re-NAKs only
    // every 500 us) and ACK coalescing all cost more than the ideal.
    EXPECT_LE(p.goodput, ideal * 1.05 + 0.005) << p.loss << " at " << p.bdp_packets;
    if (p.loss <= 1e-3) EXPECT_GT(p.goodput, ideal * 0.85) << p.loss << " at " << p.bdp_packets;
    // Go-back-N resends about a window per lost packet while losses are rare.
    if (p.loss <= 1e-3) {
      EXPECT_GT(p.retransmitted_per_packet, 0.5 * p.loss * p.bdp_packets) << p.loss << " at " << p.bdp_packets;
      EXPECT_LT(p.retransmitted_per_packet, 3.0 * p.loss * p.bdp_packets) << p.loss << " at " << p.bdp_packets;
    }
    // One NAK per hole (a lost packet), give or take lost NAKs and re-NAKs.
    if (p.loss <= 1e-2) {
      EXPECT_GT(p.naks_per_packet, 0.5 * p.loss) << p.loss << " at " << p.bdp_packets;
      EXPECT_LT(p.naks_per_packet, 2.0 * p.loss) << p.loss << " at " << p.bdp_packets;
    }
  }
  for (double bdp : {16.0, 64.0, 256.0}) {
    double previous = 1.0;
    for (double loss : {1e-4, 1e-2, 1e-1}) {
      const double g = shipped().loss_response(loss, bdp).goodput;
      EXPECT_LT(g, previous) << loss << " at " << bdp;
      previous = g;
    }
    EXPECT_GT(shipped().loss_response(1e-4, bdp).goodput, 0.95);
    EXPECT_LT(shipped().loss_response(1e-1, bdp).goodput, 0.05);  // collapse, far beyond the 10% lost
  }
  // At the fault scenarios' 1% and a 400 Gb/s cross-spine path (98 packets
  // in flight) go-back-N leaves about half the line.
  const double one_percent = shipped().loss_response(0.01, 97.7).goodput;
  EXPECT_GT(one_percent, 0.2);
  EXPECT_LT(one_percent, 0.6);
}

TEST(ShippedNetworkCalibration, QueueingRisesWithLoadAndNothingIsMarkedBelowCapacity) {
  ASSERT_FALSE(shipped().ecn.empty());
  for (const EcnProfile& profile : shipped().ecn) {
    const std::string name = std::to_string(profile.kmin_bytes) + "/" + std::to_string(profile.kmax_bytes);
    double previous = 0;
    for (const LoadPoint& p : profile.points) {
      const double queue_bytes = p.queueing_delay_ns * 1e-9 * shipped().line_rate_gbps * 1e9 / 8;
      if (p.offered_load <= 1.0) {
        // Below capacity the queue stays under a frame, far below Kmin:
        // nothing is marked and no sender hears a CNP.
        EXPECT_LT(queue_bytes, 4158) << name << " at " << p.offered_load;
        EXPECT_EQ(p.ecn_marked_per_packet, 0) << name << " at " << p.offered_load;
        EXPECT_EQ(p.cnp_per_second, 0) << name << " at " << p.offered_load;
      } else {
        EXPECT_GT(p.cnp_per_second, 0) << name << " at " << p.offered_load;
        EXPECT_GT(p.ecn_marked_per_packet, 0) << name << " at " << p.offered_load;
        // DCQCN holds the queue near the marking band's foot: some
        // fraction of Kmin up to a few Kmin, never at Kmax.
        EXPECT_LT(queue_bytes, profile.kmax_bytes) << name << " at " << p.offered_load;
      }
      // Above capacity a queue stands. It need not rise with load: the
      // firmware's byte counter (one increase stage per 32 KB sent) makes
      // DCQCN's increases scale with the QP's rate as its cuts do, so the
      // share of packets marked that holds the job against the tenants
      // is about the same whatever share they leave it (the measured
      // points move both ways by up to 5x, one seed each).
      if (p.offered_load > 1.0) EXPECT_GT(p.queueing_delay_ns, previous) << name << " at " << p.offered_load;
      if (p.offered_load <= 1.0) previous = p.queueing_delay_ns;
    }
  }
  // A steeper Pmax cuts senders sooner: the same band holds a shorter queue.
  const EcnProfile& gentle = shipped().ecn_profile(100e3, 400e3, 0.01);
  const EcnProfile& steep = shipped().ecn_profile(100e3, 400e3, 0.2);
  ASSERT_NE(&gentle, &steep);
  for (double load : {1.1, 1.5, 1.9})
    EXPECT_LT(NetworkCalibration::load_response(steep, load).queueing_delay,
              NetworkCalibration::load_response(gentle, load).queueing_delay)
        << load;
}

TEST(ShippedNetworkCalibration, AStormingRnicPausesASenderThatSharesItsLeafOnlyWhenItSendsThere) {
  ASSERT_GE(shipped().pfc_storm.size(), 2u);
  for (const StormPoint& p : shipped().pfc_storm) {
    if (p.flows_to_storming_rnic == 0) {
      EXPECT_EQ(p.pause_fraction, 0);
      EXPECT_GT(p.victim_goodput, 0.95);
    } else {
      // Head-of-line blocking: its frames for the stormer fill its ingress
      // queue at the leaf, which pauses it, so its innocent flow stops too.
      EXPECT_GT(p.pause_fraction, 0.9);
      EXPECT_LT(p.victim_goodput, 0.05);
    }
  }
}

NetworkCalibration grid_table() {
  NetworkCalibration t;
  t.loss = {{1e-3, 10, 0.9, 0.1, 1e-3, 0},
            {1e-3, 100, 0.7, 0.4, 1e-3, 0},
            {1e-1, 10, 0.1, 9, 0.1, 0},
            {1e-1, 100, 0.01, 90, 0.1, 0}};
  t.ecn = {{100e3, 400e3, 0.01, {{1.0, 0, 0, 0}, {2.0, 2000, 0.01, 1000}}},
           {50e3, 2e6, 0.01, {{1.0, 0, 0, 0}, {2.0, 4000, 0.02, 500}}}};
  return t;
}

TEST(NetworkCalibration, InterpolatesInLogLossAndLogPacketsInFlight) {
  const NetworkCalibration t = grid_table();
  EXPECT_DOUBLE_EQ(t.loss_response(1e-3, 10).goodput, 0.9);                   // a grid point
  EXPECT_NEAR(t.loss_response(1e-2, 10).goodput, 0.5, 1e-12);                 // halfway in log loss
  EXPECT_NEAR(t.loss_response(1e-3, std::sqrt(1000.0)).goodput, 0.8, 1e-12);  // halfway in log bdp
  // Toward a clean stream below the grid, linearly in loss: half the loss, half the cost.
  EXPECT_NEAR(t.loss_response(5e-4, 10).goodput, 0.95, 1e-12);
  EXPECT_NEAR(t.loss_response(5e-4, 10).retransmitted_per_packet, 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(t.loss_response(0, 10).goodput, 1.0);
  // Clamped beyond it.
  EXPECT_NEAR(t.loss_response(0.5, 1000).goodput, 0.01, 1e-15);
}

TEST(NetworkCalibration, LoadResponseForTheNearestEcnSetting) {
  const NetworkCalibration t = grid_table();
  const EcnProfile& p = t.ecn_profile(120e3, 350e3, 0.01);
  EXPECT_EQ(p.kmin_bytes, 100e3);
  EXPECT_EQ(NetworkCalibration::load_response(p, 1.5).queueing_delay, 1000);
  EXPECT_DOUBLE_EQ(NetworkCalibration::load_response(p, 1.5).cnp_per_second, 500);
  EXPECT_EQ(NetworkCalibration::load_response(p, 3.0).queueing_delay, 2000);  // clamped
  EXPECT_EQ(NetworkCalibration::load_response(t.ecn_profile(50e3, 2e6, 0.01), 2.0).queueing_delay, 4000);
}

TEST(NetworkCalibration, WrittenTableReadsBackToTheSameBytes) {
  const std::string text = to_json(shipped());
  EXPECT_EQ(to_json(parse_network_calibration(text, "again.json")), text);
}

TEST(NetworkCalibration, BadTablesNameWhereTheyAreWrong) {
  try {
    parse_network_calibration("{\n  \"format\": ,\n}", "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "t.json");
    EXPECT_EQ(e.line(), 2);
    EXPECT_GT(e.column(), 1);
  }
  std::string text = to_json(shipped());
  const std::string goodput = "\"goodput\": ";
  text.replace(text.find(goodput) + goodput.size(), 1, "7");  // 7... > 1
  try {
    parse_network_calibration(text, "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("loss.points[0].goodput: must be in [0, 1]"), std::string::npos) << e.what();
  }
  std::string partial = to_json(shipped());
  const std::size_t first = partial.find("{\"loss\"");
  partial.erase(first, partial.find("{\"loss\"", first + 1) - first);  // one grid point gone
  EXPECT_THROW(parse_network_calibration(partial, "t.json"), InputError);
}

}  // namespace
}  // namespace gauntlet::sim
