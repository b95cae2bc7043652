// The RoCE requester's retransmission timeout as a ConnectX NIC with
// adaptive retransmission runs it under NCCL's QP settings:
// - InfiniBand Architecture Specification vol. 1, 9.7.6.1.3 (local ACK
//   timeout 4.096 us x 2^timeout);
// - NCCL 2.23.4 (to 2.30.7), src/transport/net_ib: NCCL_IB_TIMEOUT 20,
//   NCCL_IB_RETRY_CNT 7; NCCL 2.4 to 2.13 set NCCL_IB_TIMEOUT 14;
// - NVIDIA, "Adaptive Retransmission: Parameters Control", algorithm and
//   formulas: the timeout doubles per consecutive timeout, is capped by the
//   QP's ack timeout, and the QP errors with IBV_WC_RETRY_EXC_ERR after
//   QP.ack_timeout x QP.retry_num without forward progress.
#include <gtest/gtest.h>

#include <vector>

#include "sim/packet/packet_engine.hpp"
#include "sim/packet/packet_test_support.hpp"

namespace gauntlet::sim {
namespace {

struct OutageRun {
  std::vector<Nanos> timeouts;  // when the sender's timeout counter moved (to the sampling step)
  Nanos failed_at = -1;         // when the transfer's QP errored
  std::uint64_t qp_errors = 0;
};

// A 20 MB message from endpoint 0 to 1 under one leaf, whose receiver's
// link goes down 50 us in and never comes back. The sender's timeout count
// is sampled every 10 us for the first 40 ms, every millisecond after.
OutageRun run_outage(const RoceParams& params, Nanos horizon) {
  Topology topology(small_packet_fabric(2, 1));
  PacketEngine engine(topology, 3, params);
  OutageRun run;
  engine.set_qp_error_handler([&](EndpointId, EndpointId) { run.failed_at = engine.now(); });
  engine.start_transfer(0, 1, 20e6, nullptr);
  PathState down;
  down.up = false;
  engine.schedule_at(50 * kMicrosecond, [&] { engine.set_link_state(topology.host_link(1), down); });
  std::uint64_t seen = 0;
  for (Nanos t = 0; t <= horizon; t += t < 40 * kMillisecond ? 10 * kMicrosecond : kMillisecond) {
    engine.schedule_at(t, [&, t] {
      const std::uint64_t now = engine.rnic_counters(0).timeouts;
      for (; seen < now; ++seen) run.timeouts.push_back(t);
    });
  }
  engine.run_until(horizon);
  run.qp_errors = engine.rnic_counters(0).qp_errors;
  return run;
}

TEST(RetransmissionTimeout, DoublesFromTheInitialTimeoutUpToTheQpTimeoutThenTheQpErrors) {
  const RoceParams params;  // NCCL 2.23.4 defaults: timeout 20, retry count 7
  const TransportParams& t = params.transport;
  ASSERT_EQ(t.qp_timeout(), 4'294'967'296);  // 4.096 us x 2^20
  const OutageRun run = run_outage(params, 40 * kSecond);
  ASSERT_GE(run.timeouts.size(), 13u);
  // The first fires one initial timeout after the last acknowledgement (in
  // the 50 us before the outage), each next one after twice the previous.
  EXPECT_GE(run.timeouts[0], t.initial_retransmit_timeout);
  EXPECT_LE(run.timeouts[0], t.initial_retransmit_timeout + 70 * kMicrosecond);
  Nanos expected_gap = t.initial_retransmit_timeout;
  for (std::size_t i = 1; i < run.timeouts.size(); ++i) {
    expected_gap = std::min(expected_gap * 2, t.qp_timeout());
    const Nanos step = run.timeouts[i] < 40 * kMillisecond ? 10 * kMicrosecond : kMillisecond;
    EXPECT_NEAR(static_cast<double>(run.timeouts[i] - run.timeouts[i - 1]), static_cast<double>(expected_gap),
                static_cast<double>(step))
        << "timeout " << i;
  }
  // 1.05 ms x (1 + 2 + ... + 4096) = 8.59 s in 13 timeouts (the 13th one
  // the QP's 4.29 s), then 4.29 s each: the QP gives up at the first timeout
  // 7 x 4.29 s = 30.06 s or more after its last progress. The 18th comes
  // 1.05 ms short of that, so it is the 19th, 34.36 s in.
  EXPECT_EQ(run.timeouts.size(), 19u);
  EXPECT_EQ(run.qp_errors, 1u);
  ASSERT_GT(run.failed_at, 0);
  EXPECT_GE(run.failed_at, t.qp_give_up());
  EXPECT_LT(run.failed_at, t.qp_give_up() + t.qp_timeout() + kMillisecond);
  EXPECT_NEAR(static_cast<double>(run.failed_at), static_cast<double>(run.timeouts.back()), 1e6);
}

TEST(RetransmissionTimeout, AnInitialTimeoutEqualToTheQpTimeoutIsTheFixedTimeoutTransport) {
  // NCCL before 2.14 set NCCL_IB_TIMEOUT 14: 4.096 us x 2^14 = 67.1 ms.
  RoceParams params;
  params.transport.ib_timeout = 14;
  params.transport.initial_retransmit_timeout = params.transport.qp_timeout();
  const Nanos qp_timeout = params.transport.qp_timeout();
  ASSERT_EQ(qp_timeout, 67'108'864);
  const OutageRun run = run_outage(params, kSecond);
  ASSERT_EQ(run.timeouts.size(), 7u);  // fails on the 7th: 7 x 67.1 ms without progress
  for (std::size_t i = 1; i < run.timeouts.size(); ++i)
    EXPECT_NEAR(static_cast<double>(run.timeouts[i] - run.timeouts[i - 1]), static_cast<double>(qp_timeout), 1e6);
  EXPECT_EQ(run.qp_errors, 1u);
  EXPECT_GE(run.failed_at, 7 * qp_timeout);
  EXPECT_LT(run.failed_at, 7 * qp_timeout + kMillisecond);
}

}  // namespace
}  // namespace gauntlet::sim
