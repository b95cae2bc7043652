// The naive baselines fire on exactly what their rules say, once per crossing.
#include <gtest/gtest.h>

#include "harness/detectors/clock_peers_detector.hpp"
#include "harness/detectors/counter_threshold_detector.hpp"

namespace gauntlet::harness {
namespace {

telemetry::Record port(const std::string& link, sim::Nanos at, std::uint64_t crc) {
  telemetry::Record r;
  auto* p = r.mutable_port();
  p->set_link(link);
  p->set_upward(true);
  p->set_time_ns(at);
  p->set_crc_errors(crc);
  return r;
}

telemetry::Record gpu(const std::string& name, sim::Nanos at, double clock, double sm, std::uint32_t xid = 0) {
  telemetry::Record r;
  auto* g = r.mutable_gpu();
  g->set_gpu(name);
  g->set_time_ns(at);
  g->set_clock_mhz(clock);
  g->set_sm_utilization(sm);
  g->set_xid(xid);
  return r;
}

telemetry::Batch batch(sim::Nanos until, std::vector<telemetry::Record> records) {
  telemetry::Batch b;
  b.set_until_ns(until);
  for (auto& r : records) *b.add_records() = std::move(r);
  return b;
}

TEST(CounterThreshold, AlertsOncePerCrossingOfTheCrcThreshold) {
  CounterThresholdDetector d({.crc_per_second = 2, .xid = false});
  d.observe(batch(1 * sim::kSecond, {port("leaf0~spine1", 1 * sim::kSecond, 2)}));
  EXPECT_TRUE(d.take_alerts().empty());  // at the threshold, not above
  d.observe(batch(2 * sim::kSecond, {port("leaf0~spine1", 2 * sim::kSecond, 3)}));
  d.observe(batch(3 * sim::kSecond, {port("leaf0~spine1", 3 * sim::kSecond, 9)}));
  auto alerts = d.take_alerts();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].suspects[0].id, "leaf0~spine1");
  EXPECT_EQ(alerts[0].time_s, 2);
  d.observe(batch(4 * sim::kSecond, {port("leaf0~spine1", 4 * sim::kSecond, 0)}));
  d.observe(batch(5 * sim::kSecond, {port("leaf0~spine1", 5 * sim::kSecond, 5)}));
  EXPECT_EQ(d.take_alerts().size(), 1u);  // crossed again
}

TEST(CounterThreshold, AlertsOnEachNewXid) {
  CounterThresholdDetector d({});
  d.observe(batch(1 * sim::kSecond, {gpu("h1.gpu2", 1 * sim::kSecond, 1755, 0.9, 0)}));
  d.observe(batch(2 * sim::kSecond, {gpu("h1.gpu2", 2 * sim::kSecond, 1755, 0.9, 13)}));
  d.observe(batch(3 * sim::kSecond, {gpu("h1.gpu2", 3 * sim::kSecond, 1740, 0.9, 13)}));
  auto alerts = d.take_alerts();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].suspects[0].id, "h1.gpu2");
  EXPECT_EQ(alerts[0].kind, "fail_stop");
}

TEST(ClockPeers, NamesTheBusyGpuBelowItsPeersMedianByTheMargin) {
  ClockPeersDetector d({.margin = 0.05});
  std::vector<telemetry::Record> records;
  for (int g = 0; g < 7; ++g) records.push_back(gpu("h0.gpu" + std::to_string(g), sim::kSecond, 1755, 0.9));
  records.push_back(gpu("h0.gpu7", sim::kSecond, 1680, 0.9));  // 4.3% below: within the margin
  records.push_back(gpu("h1.gpu0", sim::kSecond, 345, 0));     // idle: not a peer, never a suspect
  d.observe(batch(sim::kSecond, records));
  EXPECT_TRUE(d.take_alerts().empty());
  d.observe(batch(2 * sim::kSecond, {gpu("h0.gpu7", 2 * sim::kSecond, 1395, 0.9)}));  // 0.8 x 1755 = 1404
  auto alerts = d.take_alerts();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].suspects[0].id, "h0.gpu7");
  EXPECT_EQ(alerts[0].kind, "fail_slow");
  d.observe(batch(3 * sim::kSecond, {gpu("h0.gpu7", 3 * sim::kSecond, 1380, 0.9)}));
  EXPECT_TRUE(d.take_alerts().empty());  // still low: the same crossing
}

}  // namespace
}  // namespace gauntlet::harness
