#include "models/communicator_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "models/job_test_support.hpp"

namespace gauntlet::models {
namespace {

using Kind = telemetry::JobEvent;
using testing::JobHarness;
using testing::JobReport;

TEST(NcclFallback, Nic0MovesToNic1AndEveryOtherRnicToNic0) {
  EXPECT_EQ(nccl_fallback_rnic(0, 8), 1);
  EXPECT_EQ(nccl_fallback_rnic(3, 8), 0);
  EXPECT_EQ(nccl_fallback_rnic(1, 2), 0);
  EXPECT_FALSE(nccl_fallback_rnic(0, 1).has_value());  // nothing to fall back to
}

TEST(CommunicatorModel, RetriesRunOutFromAbout17Point7PercentLoss) {
  // 2^20 packets per exchange, 8 tries each: N p^8 = 1 at p = 2^-2.5.
  const double threshold = std::pow(2.0, -2.5);
  sim::Topology topology(testing::rail_pods(1, 8));
  sim::FlowEngine engine(topology, 1);
  sim::TelemetryBus bus;
  TrainingJob job(testing::tp8_pp2_dp4_job(), topology, engine, bus);
  const CommunicatorModel communicator(engine, job);
  EXPECT_FALSE(communicator.exhausts_retries(threshold - 1e-3));
  EXPECT_TRUE(communicator.exhausts_retries(threshold + 1e-3));
  EXPECT_EQ(communicator.transport_timeout(), 4 * sim::kSecond);
}

// h0.nic0's host link goes down at 10 s for `outage`; the model watches it.
JobReport run_outage(sim::Nanos outage) {
  return testing::run_job(
      testing::rail_pods(1, 8), testing::tp8_pp2_dp4_job(), 2 * sim::kMinute, true, [outage](JobHarness& h) {
        auto communicator = std::make_shared<CommunicatorModel>(h.engine, h.job);
        const sim::Topology& topology = h.engine.topology();
        const sim::LinkId link = topology.host_link(topology.endpoint(0, 0));
        const sim::Nanos down_at = 10 * sim::kSecond;
        h.engine.schedule_at(down_at, [&h, link] { h.engine.set_link_state(link, {1.0, 0, false}); });
        h.engine.schedule_at(down_at + outage, [&h, link] { h.engine.set_link_state(link, {1.0, 0, true}); });
        communicator->watch_outage(down_at, link);
        const auto verdicts = communicator->verdict_times();
        h.job.set_change_horizon([verdicts, &h] {
          for (sim::Nanos t : verdicts)
            if (t > h.engine.now()) return t;
          return std::numeric_limits<sim::Nanos>::max();
        });
        h.keep = communicator;
      });
}

TEST(CommunicatorModel, AnOutageLongerThanTheTransportTimeoutFailsTheCollective) {
  const JobReport brief = run_outage(3 * sim::kSecond);
  EXPECT_EQ(brief.count(Kind::CRASH), 0);
  const JobReport longer = run_outage(6 * sim::kSecond);
  ASSERT_EQ(longer.count(Kind::CRASH), 1);
  EXPECT_EQ(longer.first(Kind::CRASH)->time, 14 * sim::kSecond);
  EXPECT_EQ(longer.first(Kind::CRASH)->error, "NCCL Error");
}

}  // namespace
}  // namespace gauntlet::models
