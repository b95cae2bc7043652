#include "harness/scoring/score.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness {
namespace {

FaultEpisode fault(std::string id, std::string target, double start, std::optional<double> end) {
  FaultEpisode f;
  f.id = std::move(id);
  f.type = "gpu_throttle";
  f.target = std::move(target);
  f.start_s = start;
  f.end_s = end;
  return f;
}

Alert alert(double t, std::vector<std::string> suspects = {}) {
  Alert a;
  a.time_s = t;
  a.detector = "x";
  a.kind = "fail_slow";
  for (auto& s : suspects) a.suspects.push_back({s, 1.0});
  return a;
}

ScoringOptions opts(double run_end = 10000) {
  ScoringOptions o;
  o.grace_s = 60;
  o.run_end_s = run_end;
  return o;
}

TEST(Score, PrecisionRecallLatencyAndLocalization) {
  std::vector<FaultEpisode> faults = {
      fault("f1", "h3.gpu2", 100, 200),   // detected at 110, top-1 right
      fault("f2", "h5.gpu0", 1000, 1100), // detected at 1030, host named: not top-1, not localized
      fault("f3", "leaf1~spine0", 2000, 2100),  // detected late, in the grace period; second in list
      fault("f4", "h7", 5000, std::nullopt),    // missed
  };
  std::vector<Alert> alerts = {
      alert(110, {"h3.gpu2"}),
      alert(1030, {"h5"}),
      alert(2150, {"h1.nic0~leaf1", "leaf1~spine0"}),
      alert(500),             // false: no episode open
      alert(2161, {"h0"}),    // false: f3 closed at 2160
  };
  DetectorScore s = score_detector(faults, alerts, opts());
  EXPECT_EQ(s.alerts, 5);
  EXPECT_EQ(s.false_alerts, 2);
  EXPECT_DOUBLE_EQ(s.precision, 3.0 / 5.0);
  EXPECT_EQ(s.scored_faults, 4);
  EXPECT_EQ(s.detected, 3);
  EXPECT_DOUBLE_EQ(s.recall, 0.75);
  // Latencies 10, 30, 150: mean 63.33, nearest-rank p50 = 30, p95 = 150.
  EXPECT_NEAR(s.detection_latency_s.mean, 190.0 / 3.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.detection_latency_s.p50, 30);
  EXPECT_DOUBLE_EQ(s.detection_latency_s.p95, 150);
  EXPECT_DOUBLE_EQ(s.localization_top1, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.localization_top3, 2.0 / 3.0);
  EXPECT_EQ(s.localized, 1);
  EXPECT_DOUBLE_EQ(s.time_to_localize_s.p50, 10);
  ASSERT_EQ(s.faults.size(), 4u);
  EXPECT_FALSE(s.faults[1].time_to_localize_s);
  EXPECT_FALSE(s.faults[3].detected);
}

TEST(Score, NamedTargetBeatsEarlierOpenEpisode) {
  std::vector<FaultEpisode> faults = {fault("a", "h1.gpu0", 0, 500), fault("b", "h2.gpu1", 100, 500)};
  std::vector<Alert> alerts = {alert(150, {"h2.gpu1"}), alert(160)};
  DetectorScore s = score_detector(faults, alerts, opts());
  EXPECT_EQ(s.faults[1].alerts, 1);  // named
  EXPECT_EQ(s.faults[0].alerts, 1);  // the anonymous one goes to the earliest open episode
  EXPECT_DOUBLE_EQ(s.faults[1].detection_latency_s, 50);
  EXPECT_TRUE(s.faults[1].top1);
  EXPECT_FALSE(s.faults[0].top1);
  EXPECT_DOUBLE_EQ(s.precision, 1.0);
  EXPECT_DOUBLE_EQ(s.localization_top1, 0.5);
}

TEST(Score, FirstNamingAlertDecidesLocalizationButTimeToLocalizeWaits) {
  // The timeout detector's pattern: a page without suspects, then a diagnosis.
  std::vector<FaultEpisode> faults = {fault("f", "h4.gpu6", 100, std::nullopt)};
  std::vector<Alert> alerts = {alert(1900), alert(2500, {"h4"}), alert(12700, {"h4.gpu6", "h4"})};
  DetectorScore s = score_detector(faults, alerts, opts(20000));
  EXPECT_DOUBLE_EQ(s.detection_latency_s.mean, 1800);
  EXPECT_DOUBLE_EQ(s.localization_top1, 0.0);  // the first naming alert said h4
  EXPECT_DOUBLE_EQ(s.localization_top3, 0.0);
  ASSERT_TRUE(s.faults[0].time_to_localize_s);
  EXPECT_DOUBLE_EQ(*s.faults[0].time_to_localize_s, 12600);
  EXPECT_DOUBLE_EQ(s.time_to_localize_s.mean, 12600);
}

TEST(Score, BenignEpisodesAndUnaffectedFaults) {
  FaultEpisode reconf = fault("r", "", 100, 200);
  reconf.type = "reconfigure";
  reconf.benign = true;
  FaultEpisode agent = fault("g", "h2.agent", 1000, 1100);
  agent.affected_job = false;
  FaultEpisode real = fault("f", "h1.gpu1", 150, 400);
  std::vector<Alert> alerts = {
      alert(120, {"h0.gpu0"}),  // only the reconfigure is open: false
      alert(160),               // f is open too: matches f
      alert(1010, {"h2.agent"}),  // matches the unaffected fault: not false, not scored
  };
  DetectorScore s = score_detector({reconf, agent, real}, alerts, opts());
  EXPECT_EQ(s.false_alerts, 1);
  EXPECT_EQ(s.benign_alerts, 1);
  EXPECT_DOUBLE_EQ(s.precision, 2.0 / 3.0);
  EXPECT_EQ(s.scored_faults, 1);
  EXPECT_EQ(s.detected, 1);
  EXPECT_DOUBLE_EQ(s.recall, 1.0);
  EXPECT_TRUE(s.faults[1].detected);
  EXPECT_FALSE(s.faults[1].scored);
  EXPECT_DOUBLE_EQ(s.detection_latency_s.mean, 10);
}

TEST(Score, OpenEndedFaultsCloseAtRunEnd) {
  std::vector<FaultEpisode> faults = {fault("f", "h1", 100, std::nullopt)};
  DetectorScore inside = score_detector(faults, {alert(1050)}, opts(1000));
  EXPECT_EQ(inside.detected, 1);
  DetectorScore after = score_detector(faults, {alert(1061)}, opts(1000));
  EXPECT_EQ(after.detected, 0);
  EXPECT_EQ(after.false_alerts, 1);
  EXPECT_DOUBLE_EQ(after.precision, 0.0);
  EXPECT_DOUBLE_EQ(after.recall, 0.0);
}

TEST(Score, EmptyConventions) {
  DetectorScore none = score_detector({}, {}, opts());
  EXPECT_DOUBLE_EQ(none.precision, 1.0);
  EXPECT_DOUBLE_EQ(none.recall, 1.0);
  EXPECT_EQ(none.alerts, 0);
  EXPECT_EQ(none.scored_faults, 0);
  DetectorScore silent = score_detector({fault("f", "h1", 0, 10)}, {}, opts());
  EXPECT_DOUBLE_EQ(silent.precision, 1.0);
  EXPECT_DOUBLE_EQ(silent.recall, 0.0);
  EXPECT_DOUBLE_EQ(silent.localization_top1, 0.0);
}

TEST(Score, PercentilesUseNearestRank) {
  std::vector<FaultEpisode> faults;
  std::vector<Alert> alerts;
  for (int i = 0; i < 20; ++i) {
    const double start = 1000.0 * i;
    faults.push_back(fault("f" + std::to_string(i), "h" + std::to_string(i), start, start + 500));
    alerts.push_back(alert(start + i + 1, {"h" + std::to_string(i)}));  // latencies 1..20
  }
  DetectorScore s = score_detector(faults, alerts, opts(100000));
  EXPECT_DOUBLE_EQ(s.detection_latency_s.p50, 10);  // ceil(0.5 * 20) = 10th
  EXPECT_DOUBLE_EQ(s.detection_latency_s.p95, 19);  // ceil(0.95 * 20) = 19th
  EXPECT_DOUBLE_EQ(s.detection_latency_s.mean, 10.5);
  EXPECT_DOUBLE_EQ(s.localization_top1, 1.0);
}

}  // namespace
}  // namespace gauntlet::harness
