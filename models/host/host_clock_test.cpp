#include "models/host/host_clock.hpp"

#include <gtest/gtest.h>

namespace gauntlet::models {
namespace {

using sim::kMillisecond;
using sim::kSecond;

TEST(HostClock, SkewedHostsTimestampsMoveByExactlyTheOffsetWhileItLasts) {
  TelemetryEffects effects;
  const sim::Nanos offset = 250 * kMillisecond;
  effects.add_clock_skew(2, 10 * kSecond, 20 * kSecond, offset);
  telemetry::Batch batch;
  auto heartbeat = [&](const std::string& agent, sim::Nanos at) {
    auto* h = batch.add_records()->mutable_heartbeat();
    h->set_agent(agent);
    h->set_time_ns(at);
  };
  heartbeat("h2.agent", 15 * kSecond);  // skewed
  heartbeat("h3.agent", 15 * kSecond);  // other host
  heartbeat("h2.agent", 25 * kSecond);  // after the skew
  auto* c = batch.add_records()->mutable_collective();
  c->set_worker("h2.gpu5");
  c->set_start_ns(12 * kSecond);
  c->set_end_ns(0);  // hung: stays unstamped
  auto* it = batch.add_records()->mutable_iteration();
  it->set_worker("h2.gpu1");
  it->set_start_ns(9 * kSecond);  // before the skew began
  it->set_end_ns(11 * kSecond);
  auto* port = batch.add_records()->mutable_port();
  port->set_link("h2.nic0~leaf0");
  port->set_time_ns(15 * kSecond);
  auto* block = batch.add_steady_samples();
  block->set_from_ns(12 * kSecond);
  block->set_until_ns(18 * kSecond);
  block->set_period_ns(kSecond);
  auto* g = block->add_samples()->mutable_gpu();
  g->set_gpu("h2.gpu0");
  g->set_time_ns(12 * kSecond);
  auto* n = block->add_samples()->mutable_nic();
  n->set_nic("h3.nic0");
  n->set_time_ns(12 * kSecond);
  auto* run = batch.add_steady();
  auto* ri = run->add_records()->mutable_iteration();
  ri->set_worker("h2.gpu2");
  ri->set_start_ns(13 * kSecond);
  ri->set_end_ns(14 * kSecond);

  apply_host_clocks(effects, &batch);
  EXPECT_EQ(batch.records(0).heartbeat().time_ns(), 15 * kSecond + offset);
  EXPECT_EQ(batch.records(1).heartbeat().time_ns(), 15 * kSecond);
  EXPECT_EQ(batch.records(2).heartbeat().time_ns(), 25 * kSecond);
  EXPECT_EQ(batch.records(3).collective().start_ns(), 12 * kSecond + offset);
  EXPECT_EQ(batch.records(3).collective().end_ns(), 0);
  EXPECT_EQ(batch.records(4).iteration().start_ns(), 9 * kSecond);
  EXPECT_EQ(batch.records(4).iteration().end_ns(), 11 * kSecond + offset);
  EXPECT_EQ(batch.records(5).port().time_ns(), 15 * kSecond);  // a switch's clock
  EXPECT_EQ(batch.steady_samples(0).samples(0).gpu().time_ns(), 12 * kSecond + offset);
  EXPECT_EQ(batch.steady_samples(0).samples(1).nic().time_ns(), 12 * kSecond);
  EXPECT_EQ(batch.steady(0).records(0).iteration().end_ns(), 14 * kSecond + offset);
}

}  // namespace
}  // namespace gauntlet::models
