#include "harness/soak/invariants.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness::soak {
namespace {

using models::IterationSpan;

TEST(TimelineProblems, AcceptsARollbackAndCatchesOverlapsSkipsAndEmptySpans) {
  // 10 iterations, a crash, a rollback to iteration 6 and on again.
  const std::vector<IterationSpan> rolled_back = {{0, 10, 0, 100}, {6, 5, 2000, 100}};
  EXPECT_TRUE(timeline_problems(rolled_back).empty());
  EXPECT_EQ(timeline_problems({{0, 10, 0, 100}, {10, 5, 900, 100}}).size(), 1u);   // starts inside the last
  EXPECT_EQ(timeline_problems({{0, 10, 0, 100}, {12, 5, 1000, 100}}).size(), 1u);  // skips 10 and 11
  EXPECT_EQ(timeline_problems({{0, 0, 0, 100}}).size(), 1u);
  EXPECT_EQ(timeline_problems({{3, 1, 0, 100}}).size(), 1u);  // starts past iteration 0
}

TEST(TimelineDifferences, ComparesIterationByIterationHoweverSpansAreCut) {
  const std::vector<IterationSpan> one_span = {{0, 4, 0, 100}};
  const std::vector<IterationSpan> two_spans = {{0, 1, 0, 100}, {1, 3, 100, 100}};
  EXPECT_TRUE(timeline_differences(one_span, two_spans).empty());
  EXPECT_EQ(timeline_differences(one_span, {{0, 1, 0, 100}, {1, 3, 100, 101}}).size(), 1u);
  EXPECT_EQ(timeline_differences(one_span, {{0, 3, 0, 100}}).size(), 1u);
}

SimulationOutcome with_alerts(const std::vector<double>& times) {
  SimulationOutcome outcome;
  for (double t : times) outcome.detectors["c4d"].alerts.push_back({t, "c4d", "fail_slow", {}});
  return outcome;
}

TEST(AlertProblems, AnAlertBeforeTheFirstFaultMustAlsoComeWithoutIt) {
  const sim::Nanos onset = 30 * sim::kSecond, interval = sim::kSecond, duration = 60 * sim::kSecond;
  EXPECT_TRUE(alert_problems(with_alerts({12, 31, 40}), with_alerts({12}), onset, interval, duration).empty());
  EXPECT_EQ(alert_problems(with_alerts({29, 31}), with_alerts({}), onset, interval, duration).size(), 1u);
  EXPECT_EQ(alert_problems(with_alerts({31.5}), with_alerts({}), onset, interval, duration).size(), 1u);
  EXPECT_EQ(alert_problems(with_alerts({61}), with_alerts({}), onset, interval, duration).size(), 1u);
}

TEST(ByteBalance, SentAndReceivedTotalsMustMatch) {
  const std::string balanced =
      "node_infiniband_port_data_transmitted_bytes_total{component=\"h0.nic0\"} 100 1\n"
      "node_infiniband_port_data_transmitted_bytes_total{component=\"h0.nic0\"} 5000 2\n"
      "node_infiniband_port_data_received_bytes_total{component=\"h1.nic0\"} 5000 2\n";
  EXPECT_TRUE(byte_balance_problems(balanced).empty());
  const std::string lost = balanced + "node_infiniband_port_data_transmitted_bytes_total{component=\"h1.nic0\"} 800 2\n";
  EXPECT_EQ(byte_balance_problems(lost).size(), 1u);
}

}  // namespace
}  // namespace gauntlet::harness::soak
