// DCQCN against published behaviour, with the parameters of each source.
//
// 1. The paper's own setting at 40 Gb/s (Zhu et al., "Congestion Control for
//    Large-Scale RDMA Deployments", SIGCOMM 2015; dcqcn_paper_params()):
//    flows sharing a bottleneck converge to equal shares while the switch
//    queue stays in RED's marking band, between Kmin and Kmax (its
//    sections 5 and 6). The paper plots its convergence; no utilisation
//    figure of it is reproduced here, so no utilisation band is asserted
//    for this setting (docs/engines.md gives the engine's measure).
// 2. NVIDIA's firmware defaults at 400 Gb/s against the tuned setting
//    ByteDance deployed on BlueField-3 NICs (Peng et al., "Barre", USENIX
//    ATC 2025, section 6.3, Table 2 and Figure 12): four clients joining
//    one server in turn. With the defaults the server's bandwidth swings
//    low after joins (197.7 of 400 Gb/s at one point, 49%) and the shares
//    stay unfair (not reproduced here: the engine's shares are nearly as
//    fair as with the tuned values); with the tuned values (CNP interval 0-2 us, min_dec_fac
//    80-98, monitor period 1-4 us, AI 8-20 Mb/s, rate timer 20-100 us) the
//    server stays close to full utilisation and the shares are fair.
// 3. An incast under PFC stays lossless and completes (no published
//    completion time at 400 Gb/s is used; the engine's is in
//    docs/engines.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/packet/packet_engine.hpp"
#include "sim/packet/packet_test_support.hpp"

namespace gauntlet::sim {
namespace {

constexpr double kEndless = 1e15;

// Payload bytes per second of a stream at the line rate.
double payload_rate(double gbps, const RoceParams& params) {
  const double mtu = params.transport.mtu_payload;
  return gbps * 1e9 / 8 * mtu / (mtu + params.transport.header_bytes);
}

double jain_index(const std::vector<double>& shares) {
  double sum = 0, squares = 0;
  for (double x : shares) {
    sum += x;
    squares += x * x;
  }
  return sum * sum / (static_cast<double>(shares.size()) * squares);
}

TEST(Dcqcn, WithThePapersSettingTwoFlowsConvergeToEqualSharesWithTheQueueInTheMarkingBand) {
  RoceParams params;
  params.dcqcn = dcqcn_paper_params();
  ClusterShape shape = small_packet_fabric(3, 1);
  shape.host_link_gbps = shape.fabric_link_gbps = 40;
  Topology topology(shape);
  PacketEngine engine(topology, 3, params);
  const LinkId bottleneck = topology.host_link(2);  // the leaf's port toward the receiver
  const TransferId first = engine.start_transfer(0, 2, kEndless, nullptr);
  engine.run_until(10 * kMillisecond);
  const TransferId second = engine.start_transfer(1, 2, kEndless, nullptr);
  const Nanos from = 15 * kMillisecond, window = 40 * kMillisecond;
  engine.run_until(from);
  const double first_before = engine.transfer_acknowledged(first);
  const double second_before = engine.transfer_acknowledged(second);
  const PacketPortCounters port_before = engine.port_counters(bottleneck, /*upward=*/false);
  engine.run_until(from + window);
  const double line = payload_rate(40, params) * to_seconds(window);
  const double a = (engine.transfer_acknowledged(first) - first_before) / line;
  const double b = (engine.transfer_acknowledged(second) - second_before) / line;
  const PacketPortCounters port = engine.port_counters(bottleneck, /*upward=*/false);
  EXPECT_GT(jain_index({a, b}), 0.99) << "shares " << a << " and " << b;
  const double mean_queue = (port.queue_byte_ns - port_before.queue_byte_ns) / static_cast<double>(window);
  EXPECT_GT(mean_queue, params.dcqcn.kmin_bytes);
  EXPECT_LT(mean_queue, params.dcqcn.kmax_bytes);
  EXPECT_GT(port.ecn_marked, port_before.ecn_marked) << "DCQCN, not the senders' NICs, set the shares";
  EXPECT_EQ(port.pause_sent, port_before.pause_sent) << "no PFC needed";
}

struct StagedJoin {
  std::vector<double> utilization;  // the server's line, per 1 ms from the first join
  std::vector<double> last_shares;  // each client's, over the last stage's second half
};

// Clients join one server (all under one leaf) every `stage`.
StagedJoin staged_join(const RoceParams& params, int clients, Nanos stage) {
  Topology topology(small_packet_fabric(clients + 1, 1));
  PacketEngine engine(topology, 5, params);
  const double per_ms = payload_rate(400, params) * 1e-3;
  std::vector<TransferId> flows;
  auto delivered = [&](const TransferId f) { return engine.transfer_acknowledged(f); };
  StagedJoin out;
  std::vector<double> at_half;
  for (int c = 0; c < clients; ++c) {
    flows.push_back(engine.start_transfer(c, clients, kEndless, nullptr));
    for (Nanos t = c * stage; t < (c + 1) * stage; t += kMillisecond) {
      if (c == clients - 1 && t == c * stage + stage / 2)
        for (TransferId f : flows) at_half.push_back(delivered(f));
      double before = 0;
      for (TransferId f : flows) before += delivered(f);
      engine.run_until(t + kMillisecond);
      double after = 0;
      for (TransferId f : flows) after += delivered(f);
      out.utilization.push_back((after - before) / per_ms);
    }
  }
  for (std::size_t i = 0; i < flows.size(); ++i)
    out.last_shares.push_back((delivered(flows[i]) - at_half[i]) / (per_ms * to_seconds(stage / 2) * 1e3));
  return out;
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

std::string describe(const StagedJoin& r) {
  std::string s = "per-ms utilisation";
  for (double u : r.utilization) s += " " + std::to_string(u).substr(0, 4);
  s += "; last-stage shares";
  for (double x : r.last_shares) s += " " + std::to_string(x).substr(0, 5);
  return s;
}

TEST(Dcqcn, At400GTheFirmwareDefaultsDipAfterJoinsWhereBarresTunedSettingStaysNearFullAndFair) {
  const Nanos stage = 8 * kMillisecond;
  const StagedJoin defaults = staged_join(RoceParams{}, 4, stage);
  RoceParams tuned;  // the middle of each Table 2 range
  tuned.dcqcn.cnp_interval = 1 * kMicrosecond;
  tuned.dcqcn.min_decrease_factor = 0.9;
  tuned.dcqcn.rate_reduce_monitor_period = 2 * kMicrosecond;
  tuned.dcqcn.additive_increase = 10e6 / 8;
  tuned.dcqcn.rate_increase_interval = 50 * kMicrosecond;
  const StagedJoin tuned_run = staged_join(tuned, 4, stage);
  const double default_low = *std::min_element(defaults.utilization.begin(), defaults.utilization.end());
  const double tuned_low = *std::min_element(tuned_run.utilization.begin(), tuned_run.utilization.end());
  EXPECT_LT(default_low, 0.7) << "Figure 12(b): a dip toward half the line; " << describe(defaults);
  EXPECT_GT(tuned_low, default_low) << describe(tuned_run);
  EXPECT_GT(mean(tuned_run.utilization), 0.9) << "Figure 12(d): close to full; " << describe(tuned_run);
  // Figure 12(c)'s fair shares; Figure 12(a)'s lasting unfairness under the
  // defaults is not reproduced (docs/engines.md gives both indices).
  EXPECT_GT(jain_index(tuned_run.last_shares), 0.98) << "Figure 12(c): fair; " << describe(tuned_run);
}

TEST(Dcqcn, AnIncastUnderPfcIsLosslessAndCompletes) {
  const RoceParams params;  // the firmware defaults and the engine's default ECN setting, 400 Gb/s
  const int senders = 16;
  const double bytes = 4 * 1024 * 1024;
  Topology topology(small_packet_fabric(senders + 1, 1));
  PacketEngine engine(topology, 4, params);
  Nanos last_done = 0;
  int done = 0;
  for (int s = 0; s < senders; ++s)
    engine.start_transfer(s, senders, bytes, [&](Nanos finished_at) {
      last_done = std::max(last_done, finished_at);
      ++done;
    });
  engine.run_until(50 * kMillisecond);
  ASSERT_EQ(done, senders);
  const double ideal = senders * bytes / payload_rate(400, params);
  EXPECT_GT(to_seconds(last_done), ideal);
  const PacketPortCounters port = engine.port_counters(topology.host_link(senders), /*upward=*/false);
  EXPECT_EQ(port.drops, 0u);
  RecordProperty("time_over_ideal", std::to_string(to_seconds(last_done) / ideal));
  EXPECT_GT(port.ecn_marked, 0u);
}

}  // namespace
}  // namespace gauntlet::sim
