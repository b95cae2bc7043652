// Go-back-N goodput against frame loss at 40, 100 and 400 Gb/s, against
// the analytical model of Bertsekas and Gallager (Data Networks, 2nd ed.,
// 1992, section 2.4.2, the efficiency of go-back-n ARQ): when each lost
// frame costs the W frame times the sender spends before it learns of the
// loss, the share of frame times carrying new data is
// (1 - p) / (1 - p + p W) for frame loss p.
//
// On RoCE the loss is learnt from the responder's NAK, sent when the next
// frame reveals the hole. W is that loop in data frame times, rounded up to
// the frame the sender is putting on the wire when the NAK arrives: the
// lost frame's and the revealing frame's two store-and-forward hops (three
// frame times), the 64-byte NAK's two hops and four link delays (a sender
// paced at the line rate has no frames waiting behind the one on the
// wire, so nothing else is already committed). A lost resend
// or a lost NAK costs instead the responder's NAK interval (the hole is
// NAKed again only after it): to first order each loss costs
// W + (p + p_nak) x interval, where the NAK, a 64-byte frame, is lost less
// often than a data frame: by its bits at 40 Gb/s (no FEC), by the RS-FEC
// codewords it touches at 100 and 400 Gb/s (sim/fec.hpp).
// Those stalls are rare (one loss in 1/p), so their mean needs far more
// losses than a test window holds at HPCC's 500 us interval; the responder
// here re-NAKs after 20 us, about three loops at 40 Gb/s.
//
// The path: sender and receiver under one leaf, 1 us per link, loss on the
// receiver's host link (both ways), an endless stream measured after a
// warm-up.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/fec.hpp"
#include "sim/packet/packet_engine.hpp"
#include "sim/packet/packet_test_support.hpp"

namespace gauntlet::sim {
namespace {

struct Point {
  double gbps;
  double loss;  // a data frame's
  Nanos window;
};

double data_frame_bytes(const RoceParams& params) {
  return params.transport.mtu_payload + params.transport.header_bytes;
}

double analytic_goodput(const Point& point, const RoceParams& params, Nanos link_latency) {
  const double bytes_per_s = point.gbps * 1e9 / 8;
  const double frame_s = data_frame_bytes(params) / bytes_per_s;
  const double nak_s = 64 / bytes_per_s;
  const double loop_s = 3 * frame_s + 2 * nak_s + 4 * to_seconds(link_latency);
  const double window = std::ceil(loop_s / frame_s);
  const bool rs_fec = point.gbps >= kRsFecFromGbps;
  const double nak_loss = frame_loss_by_length(point.loss, data_frame_bytes(params), 64, rs_fec);
  const double cost = window + (point.loss + nak_loss) * to_seconds(params.transport.nak_interval) / frame_s;
  return (1 - point.loss) / (1 - point.loss + point.loss * cost);
}

double measured_goodput(const Point& point, const RoceParams& params, std::uint64_t seed) {
  ClusterShape shape = small_packet_fabric(2, 1);
  shape.host_link_gbps = shape.fabric_link_gbps = point.gbps;
  Topology topology(shape);
  PacketEngine engine(topology, seed, params);
  engine.set_link_loss(topology.host_link(1), point.loss);
  const TransferId stream = engine.start_transfer(0, 1, 1e15, nullptr);
  const Nanos warm_up = kMillisecond;
  engine.run_until(warm_up);
  const double before = engine.transfer_acknowledged(stream);
  engine.run_until(warm_up + point.window);
  const double payload_per_s = point.gbps * 1e9 / 8 * params.transport.mtu_payload / data_frame_bytes(params);
  return (engine.transfer_acknowledged(stream) - before) / (payload_per_s * to_seconds(point.window));
}

TEST(GoBackN, GoodputFollowsBertsekasGallagersEfficiencyAt40And100And400G) {
  RoceParams params;
  params.transport.nak_interval = 20 * kMicrosecond;
  // Each window holds 500 to 600 losses: binomial noise in the loss
  // penalty is about 4.5% (one standard deviation).
  const Point points[] = {{40, 3e-3, 150 * kMillisecond}, {40, 1e-2, 50 * kMillisecond},
                          {100, 3e-3, 60 * kMillisecond}, {100, 1e-2, 20 * kMillisecond},
                          {400, 1e-3, 45 * kMillisecond}, {400, 3e-3, 15 * kMillisecond}};
  for (const Point& point : points) {
    const double model = analytic_goodput(point, params, kMicrosecond);
    const double measured = measured_goodput(point, params, 9);
    // The loss penalty 1/goodput - 1 within 15% of the model's. The penalty
    // grows with the line rate (W is 8, 16 and 52 frames), which a
    // rate-blind loss model would miss by far more than that.
    const double model_penalty = 1 / model - 1, measured_penalty = 1 / measured - 1;
    EXPECT_NEAR(measured_penalty, model_penalty, 0.15 * model_penalty)
        << point.gbps << " Gb/s, loss " << point.loss << ": goodput " << measured << ", model " << model;
  }
}

}  // namespace
}  // namespace gauntlet::sim
