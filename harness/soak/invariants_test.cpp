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

SimulationOutcome with_alerts(const std::vector<double>& times, const std::string& detector = "c4d") {
  SimulationOutcome outcome;
  for (double t : times) outcome.detectors[detector].alerts.push_back({t, detector, "fail_slow", {}});
  return outcome;
}

TEST(AlertProblems, AnAlertBeforeTheFirstFaultMustAlsoComeWithoutIt) {
  const sim::Nanos onset = 30 * sim::kSecond, interval = sim::kSecond, duration = 60 * sim::kSecond;
  EXPECT_TRUE(alert_problems(with_alerts({12, 31, 40}), with_alerts({12}), onset, interval, duration).empty());
  EXPECT_EQ(alert_problems(with_alerts({29, 31}), with_alerts({}), onset, interval, duration).size(), 1u);
  EXPECT_EQ(alert_problems(with_alerts({31.5}), with_alerts({}), onset, interval, duration).size(), 1u);
  EXPECT_EQ(alert_problems(with_alerts({61}), with_alerts({}), onset, interval, duration).size(), 1u);
}

// The timeout detector pages when the job crashes, as the scheduler sees
// the processes exit (an uncorrectable ECC error kills them at once), not
// at the end of the interval it read the crash in; still within the run.
TEST(AlertProblems, TheTimeoutDetectorPagesAtTheCrashWithinTheRun) {
  const sim::Nanos onset = 30 * sim::kSecond, interval = sim::kSecond, duration = 60 * sim::kSecond;
  EXPECT_TRUE(
      alert_problems(with_alerts({31.5}, "timeout"), with_alerts({}, "timeout"), onset, interval, duration).empty());
  EXPECT_EQ(
      alert_problems(with_alerts({60.5}, "timeout"), with_alerts({}, "timeout"), onset, interval, duration).size(), 1u);
}

TEST(ByteBalance, SentAndReceivedTotalsMustMatch) {
  const std::string balanced =
      "node_infiniband_port_data_transmitted_bytes_total{component=\"h0.nic0\"} 100 1\n"
      "node_infiniband_port_data_transmitted_bytes_total{component=\"h0.nic0\"} 5000 2\n"
      "node_infiniband_port_data_received_bytes_total{component=\"h1.nic0\"} 5000 2\n"
      "ifHCOutOctets{component=\"h0.nic0~leaf0\",direction=\"up\"} 5000 2\n"
      "ifHCOutOctets{component=\"h1.nic0~leaf0\",direction=\"down\"} 5000 2\n";
  EXPECT_TRUE(byte_balance_problems(balanced).empty());
  // h1 sent 800 bytes that no RNIC received, and its link carried them.
  const std::string lost = balanced +
                           "node_infiniband_port_data_transmitted_bytes_total{component=\"h1.nic0\"} 800 2\n"
                           "ifHCOutOctets{component=\"h1.nic0~leaf0\",direction=\"up\"} 800 2\n";
  const std::vector<std::string> problems = byte_balance_problems(lost);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("host links carried 5800 bytes toward the leaves and 5000"), std::string::npos)
      << problems[0];
}

// The packet engine loses frames on a lossy link: the fabric took in more
// than it delivered, by at most the dropped frames' bytes (4,158 each with
// RoCEv2 headers), which its ports count as errors or discards.
TEST(ByteBalance, FramesTheFabricDroppedAreTheOnlyBytesItMayKeep) {
  const std::string sent =
      "node_infiniband_port_data_transmitted_bytes_total{component=\"h0.nic0\"} 20000 2\n"
      "node_infiniband_port_data_received_bytes_total{component=\"h1.nic0\"} 12000 2\n"
      "ifHCOutOctets{component=\"h0.nic0~leaf0\",direction=\"up\"} 20000 2\n"
      "ifHCOutOctets{component=\"h1.nic0~leaf0\",direction=\"down\"} 12000 2\n";
  const std::string two_dropped = "SAI_PORT_STAT_IF_IN_ERRORS{component=\"leaf0~spine0\"} 2 2\n";
  const std::string one_dropped = "SAI_PORT_STAT_IF_OUT_DISCARDS{component=\"leaf0~spine0\"} 1 2\n";
  EXPECT_TRUE(byte_balance_problems(sent + two_dropped).empty());
  // 8,000 bytes missing, but one frame dropped: bytes vanished.
  const std::vector<std::string> problems = byte_balance_problems(sent + one_dropped);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("toward the RNICs, with 1 frames dropped"), std::string::npos) << problems[0];
  EXPECT_FALSE(byte_balance_problems(sent).empty());
}

// A PFC watchdog drops a stormed queue's frames; SONiC counts them apart
// from the port's discards.
TEST(ByteBalance, FramesAPfcWatchdogDroppedAreDroppedFrames) {
  const std::string sent =
      "node_infiniband_port_data_transmitted_bytes_total{component=\"h0.nic0\"} 20000 2\n"
      "node_infiniband_port_data_received_bytes_total{component=\"h1.nic0\"} 16000 2\n"
      "ifHCOutOctets{component=\"h0.nic0~leaf0\",direction=\"up\"} 20000 2\n"
      "ifHCOutOctets{component=\"h1.nic0~leaf0\",direction=\"down\"} 16000 2\n";
  EXPECT_FALSE(byte_balance_problems(sent).empty());
  EXPECT_TRUE(
      byte_balance_problems(sent + "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS{component=\"leaf0~spine0\"} 1 2\n").empty());
  EXPECT_TRUE(
      byte_balance_problems(sent + "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS{component=\"h0.nic0~leaf0\"} 1 2\n").empty());
}

// A PAUSE frame (64 bytes) goes one hop: the sending port's octets and the
// receiving RNIC's bytes count it, but no switch forwards it. Here h0.nic0
// sends 5,000 bytes to h1.nic0 and 2 PAUSE frames to leaf0, which sends 3 to
// h1.nic0 (a storm); leaf0's PFC counters show both, each direction's
// counting the frames against its data.
TEST(ByteBalance, PauseFramesAreHopLocal) {
  const std::string bytes =
      "node_infiniband_port_data_transmitted_bytes_total{component=\"h0.nic0\"} 5128 2\n"
      "node_infiniband_port_data_received_bytes_total{component=\"h1.nic0\"} 5192 2\n"
      "ifHCOutOctets{component=\"h0.nic0~leaf0\",direction=\"up\"} 5128 2\n"
      "ifHCOutOctets{component=\"h1.nic0~leaf0\",direction=\"down\"} 5192 2\n";
  const std::string pauses =
      "SAI_PORT_STAT_PFC_3_RX_PKTS{component=\"h0.nic0~leaf0\",direction=\"down\",instance=\"leaf0\"} 2 2\n"
      "SAI_PORT_STAT_PFC_3_TX_PKTS{component=\"h1.nic0~leaf0\",direction=\"up\",instance=\"leaf0\"} 3 2\n"
      "SAI_PORT_STAT_PFC_3_RX_PKTS{component=\"h1.nic0~leaf0\",direction=\"up\",instance=\"leaf0\"} 3 2\n";
  EXPECT_TRUE(byte_balance_problems(bytes + pauses).empty());
  // Without the PFC counters the 64 bytes more toward the RNICs are unexplained.
  const std::vector<std::string> unexplained = byte_balance_problems(bytes);
  ASSERT_EQ(unexplained.size(), 1u);
  EXPECT_NE(unexplained[0].find("5128 bytes toward the leaves and 5192 toward the RNICs"), std::string::npos)
      << unexplained[0];
  // A data frame's worth of bytes missing is still missing: PAUSE frames
  // account for their own 64 bytes each, no more.
  const std::string short_of_data =
      "node_infiniband_port_data_transmitted_bytes_total{component=\"h0.nic0\"} 5128 2\n"
      "node_infiniband_port_data_received_bytes_total{component=\"h1.nic0\"} 5128 2\n"
      "ifHCOutOctets{component=\"h0.nic0~leaf0\",direction=\"up\"} 5128 2\n"
      "ifHCOutOctets{component=\"h1.nic0~leaf0\",direction=\"down\"} 5128 2\n";
  const std::vector<std::string> problems = byte_balance_problems(short_of_data + pauses);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("5000 bytes toward the leaves and 4936 toward the RNICs (besides 2 and 3 PAUSE frames"),
            std::string::npos)
      << problems[0];
  // Octets that count data only (the hybrid engine's, from the flow model)
  // balance as they are, whatever the PFC counters show.
  const std::string data_only =
      "node_infiniband_port_data_transmitted_bytes_total{component=\"h0.nic0\"} 5000 2\n"
      "node_infiniband_port_data_received_bytes_total{component=\"h1.nic0\"} 5000 2\n"
      "ifHCOutOctets{component=\"h0.nic0~leaf0\",direction=\"up\"} 5000 2\n"
      "ifHCOutOctets{component=\"h1.nic0~leaf0\",direction=\"down\"} 5000 2\n";
  EXPECT_TRUE(byte_balance_problems(data_only + pauses, {}, /*octets_count_pauses=*/false).empty());
  EXPECT_FALSE(byte_balance_problems(data_only + pauses, {}, /*octets_count_pauses=*/true).empty());
  EXPECT_FALSE(byte_balance_problems(bytes + pauses, {}, /*octets_count_pauses=*/false).empty());
  // The PAUSE frames a spine sends on a fabric link are not the host links'.
  EXPECT_TRUE(byte_balance_problems(bytes + pauses +
                                    "SAI_PORT_STAT_PFC_3_TX_PKTS{component=\"leaf0~spine0\",direction=\"up\"} 1 2\n")
                  .empty());
}

TEST(ByteBalance, AnRnicCountsWhatItsHostLinkCarries) {
  const auto nic = [](const std::string& name, int tx, int rx) {
    return "node_infiniband_port_data_transmitted_bytes_total{component=\"" + name + "\"} " + std::to_string(tx) +
           " 2\nnode_infiniband_port_data_received_bytes_total{component=\"" + name + "\"} " + std::to_string(rx) +
           " 2\n";
  };
  const auto link = [](const std::string& name, const std::string& direction, int bytes) {
    return "ifHCOutOctets{component=\"" + name + "~leaf0\",direction=\"" + direction + "\"} " + std::to_string(bytes) +
           " 2\n";
  };
  const std::string links = link("h0.nic0", "up", 6000) + link("h1.nic0", "down", 6000);
  EXPECT_TRUE(byte_balance_problems(nic("h0.nic0", 6000, 0) + nic("h1.nic0", 0, 6000) + links).empty());
  // The link toward h1 carried a second more than h1 counted: a stall the
  // RNIC's counters did not see, say; the RNICs' totals disagree too.
  const std::string undercounted = nic("h0.nic0", 6000, 0) + nic("h1.nic0", 0, 5000) + links;
  const std::vector<std::string> problems = byte_balance_problems(undercounted);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[1].find("h1.nic0 received 5000 bytes, but its host link carried 6000"), std::string::npos)
      << problems[1];
  // An RNIC whose host link shows nothing is as wrong.
  EXPECT_FALSE(byte_balance_problems(nic("h0.nic0", 6000, 0) + nic("h1.nic0", 0, 6000) + link("h0.nic0", "up", 6000) +
                                     link("h1.nic1", "down", 6000))
                   .empty());
  // A host whose clock is skewed stamps its samples wrongly; it is left out.
  EXPECT_TRUE(byte_balance_problems(undercounted, {"h1"}).empty());
}

}  // namespace
}  // namespace gauntlet::harness::soak
