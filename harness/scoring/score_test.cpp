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

// Suspects with distinct scores, best first.
Alert alert(double t, std::vector<std::string> suspects = {}) {
  Alert a;
  a.time_s = t;
  a.detector = "x";
  a.kind = "fail_slow";
  double score = 1.0;
  for (auto& s : suspects) a.suspects.push_back({s, score /= 2});
  return a;
}

Alert ranked(double t, std::vector<Suspect> suspects) {
  Alert a = alert(t);
  a.suspects = std::move(suspects);
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
      fault("f1", "h3.gpu2", 100, 200),         // detected at 110, top-1 right
      fault("f2", "h5.gpu0", 1000, 1100),       // detected at 1030, host named: not top-1, not localized
      fault("f3", "leaf1~spine0", 2000, 2100),  // detected late, in the grace period; ranked second
      fault("f4", "h7", 5000, std::nullopt),    // missed
  };
  std::vector<Alert> alerts = {
      alert(110, {"h3.gpu2"}),
      alert(1030, {"h5"}),
      ranked(2150, {{"h1.nic0~leaf1", 0.9}, {"leaf1~spine0", 0.5}}),
      alert(500),           // false: no episode open
      alert(2161, {"h0"}),  // false: f3 closed at 2160
  };
  DetectorScore s = score_detector(faults, alerts, opts());
  EXPECT_EQ(s.alerts, 5);
  EXPECT_EQ(s.false_alerts, 2);
  EXPECT_DOUBLE_EQ(*s.precision, 3.0 / 5.0);
  EXPECT_EQ(s.overall.scored_faults, 4);
  EXPECT_EQ(s.overall.detected, 3);
  EXPECT_DOUBLE_EQ(*s.overall.recall, 0.75);
  // Latencies 10, 30, 150: mean 63.33, nearest-rank p50 = 30, p95 = 150.
  EXPECT_NEAR(s.overall.detection_latency_s->mean, 190.0 / 3.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.overall.detection_latency_s->p50, 30);
  EXPECT_DOUBLE_EQ(s.overall.detection_latency_s->p95, 150);
  EXPECT_DOUBLE_EQ(*s.overall.localization_top1, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(*s.overall.localization_top3, 2.0 / 3.0);
  EXPECT_EQ(s.overall.localized, 1);
  EXPECT_DOUBLE_EQ(s.overall.time_to_localize_s->p50, 10);
  ASSERT_EQ(s.faults.size(), 4u);
  EXPECT_FALSE(s.faults[1].time_to_localize_s);
  EXPECT_FALSE(s.faults[3].detected);
  // Every fault here slowed the job: the latent class is empty, not perfect.
  EXPECT_EQ(s.impactful.scored_faults, 4);
  EXPECT_EQ(s.latent.scored_faults, 0);
  EXPECT_FALSE(s.latent.recall);
  EXPECT_FALSE(s.latent.detection_latency_s);
}

TEST(Score, AReportsCopyKeepsEveryFigureAndOnlyTheScoredFaultsOutcomes) {
  FaultEpisode background = fault("bg1", "h3.gpu2", 50, 500);
  background.benign = background.background = true;
  const std::vector<FaultEpisode> faults = {fault("f1", "h3.gpu2", 100, 200), background,
                                            fault("f2", "h5.gpu0", 1000, 1100)};
  DetectorScore s = score_detector(faults, {alert(110, {"h3.gpu2"}), alert(700, {"h9"})}, opts());
  s.costs = RunCosts{};
  s.costs->lost_iterations = 12;
  const DetectorScore copy = with_scored_outcomes_only(s);
  ASSERT_EQ(copy.faults.size(), 2u);
  EXPECT_EQ(copy.faults[0].id, "f1");
  EXPECT_EQ(copy.faults[1].id, "f2");
  EXPECT_TRUE(copy.faults[0].detected);
  EXPECT_EQ(copy.alerts, 2);
  EXPECT_EQ(copy.false_alerts, s.false_alerts);
  EXPECT_EQ(copy.benign_alerts, s.benign_alerts);
  EXPECT_EQ(copy.precision, s.precision);
  EXPECT_EQ(copy.overall.scored_faults, 2);
  EXPECT_EQ(copy.overall.detected, 1);
  EXPECT_EQ(copy.overall.detection_latency_s->mean, s.overall.detection_latency_s->mean);
  EXPECT_EQ(copy.impactful.scored_faults, s.impactful.scored_faults);
  EXPECT_EQ(copy.latent.scored_faults, s.latent.scored_faults);
  ASSERT_TRUE(copy.costs);
  EXPECT_EQ(copy.costs->lost_iterations, 12);
}

TEST(Score, NamedTargetBeatsEarlierOpenEpisode) {
  std::vector<FaultEpisode> faults = {fault("a", "h1.gpu0", 0, 500), fault("b", "h2.gpu1", 100, 500)};
  std::vector<Alert> alerts = {alert(150, {"h2.gpu1"}), alert(160)};
  DetectorScore s = score_detector(faults, alerts, opts());
  EXPECT_EQ(s.faults[1].alerts, 1);  // named
  EXPECT_EQ(s.faults[0].alerts, 1);  // the anonymous one goes to the earliest open episode
  EXPECT_DOUBLE_EQ(s.faults[1].detection_latency_s, 50);
  EXPECT_DOUBLE_EQ(s.faults[1].top1, 1);
  EXPECT_DOUBLE_EQ(s.faults[0].top1, 0);
  EXPECT_DOUBLE_EQ(*s.precision, 1.0);
  EXPECT_DOUBLE_EQ(*s.overall.localization_top1, 0.5);
}

TEST(Score, FirstNamingAlertDecidesLocalizationButTimeToLocalizeWaits) {
  // The timeout detector's pattern: a page without suspects, then a diagnosis.
  std::vector<FaultEpisode> faults = {fault("f", "h4.gpu6", 100, std::nullopt)};
  std::vector<Alert> alerts = {alert(1900), alert(2500, {"h4"}), ranked(12700, {{"h4.gpu6", 1}, {"h4", 0.5}})};
  DetectorScore s = score_detector(faults, alerts, opts(20000));
  EXPECT_DOUBLE_EQ(s.overall.detection_latency_s->mean, 1800);
  EXPECT_DOUBLE_EQ(*s.overall.localization_top1, 0.0);  // the first naming alert said h4
  EXPECT_DOUBLE_EQ(*s.overall.localization_top3, 0.0);
  ASSERT_TRUE(s.faults[0].time_to_localize_s);
  EXPECT_DOUBLE_EQ(*s.faults[0].time_to_localize_s, 12600);
  EXPECT_DOUBLE_EQ(s.overall.time_to_localize_s->mean, 12600);
}

TEST(Score, AnAlertBlamingBackgroundNoiseIsFalseWhileAFaultIsOpen) {
  FaultEpisode noise = fault("n", "leaf1~spine0", 100, 400);
  noise.type = "congestion";
  noise.benign = true;
  FaultEpisode real = fault("f", "h1.gpu1", 150, 400);
  std::vector<Alert> alerts = {
      alert(200, {"leaf1~spine0"}),             // blames the noise only: false
      alert(210, {"leaf1~spine0", "h1.gpu1"}),  // names the fault too: matches it
      alert(220, {"h3.gpu0"}),                  // names neither: a detection without localization
  };
  DetectorScore s = score_detector({noise, real}, alerts, opts());
  EXPECT_EQ(s.false_alerts, 1);
  EXPECT_EQ(s.benign_alerts, 1);
  EXPECT_EQ(s.faults[1].alerts, 2);
  EXPECT_EQ(s.overall.scored_faults, 1);
  EXPECT_DOUBLE_EQ(s.faults[1].detection_latency_s, 60);
}

TEST(Score, TrailingBackgroundEpisodesAreMatchedButGetNoOutcome) {
  FaultEpisode early_bg = fault("bg1", "h2.gpu0", 50, 500);
  early_bg.benign = early_bg.background = true;
  FaultEpisode real = fault("f", "h1.gpu1", 150, 400);
  std::vector<FaultEpisode> faults = {early_bg, real};
  for (int i = 2; i <= 4; ++i) {
    FaultEpisode bg = fault("bg" + std::to_string(i), "h3.gpu" + std::to_string(i), 100, 600);
    bg.benign = bg.background = true;
    faults.push_back(bg);
  }
  const std::vector<Alert> alerts = {
      alert(200, {"h3.gpu2"}),  // names a trailing background episode only: false, during it
      alert(210, {"h1.gpu1"}),  // the fault
  };
  const DetectorScore s = score_detector(faults, alerts, opts());
  ASSERT_EQ(s.faults.size(), 2u);  // bg1 (before the fault) and f; none for bg2-bg4
  EXPECT_FALSE(s.faults[0].scored);
  EXPECT_EQ(s.faults[1].id, "f");
  EXPECT_EQ(s.faults[1].alerts, 1);
  EXPECT_EQ(s.false_alerts, 1);
  EXPECT_EQ(s.benign_alerts, 1);
  EXPECT_EQ(s.overall.scored_faults, 1);
}

TEST(Score, LatentFaultsAreScoredInTheirOwnClass) {
  FaultEpisode reconf = fault("r", "", 100, 200);
  reconf.type = "reconfigure";
  reconf.benign = true;
  FaultEpisode latent = fault("g", "h2.nic1.ft", 1000, 1100);
  latent.affected_job = false;
  FaultEpisode impactful = fault("f", "h1.gpu1", 150, 400);
  std::vector<Alert> alerts = {
      alert(120, {"h0.gpu0"}),      // only the reconfigure is open: false
      alert(160),                   // f is open too: matches f
      alert(1040, {"h2.nic1.ft"}),  // names the latent fault within its window: a true positive
  };
  DetectorScore s = score_detector({reconf, latent, impactful}, alerts, opts());
  EXPECT_EQ(s.false_alerts, 1);
  EXPECT_EQ(s.benign_alerts, 1);
  EXPECT_DOUBLE_EQ(*s.precision, 2.0 / 3.0);
  EXPECT_EQ(s.overall.scored_faults, 2);  // the benign episode is never scored
  EXPECT_EQ(s.overall.detected, 2);
  EXPECT_EQ(s.impactful.scored_faults, 1);
  EXPECT_DOUBLE_EQ(s.impactful.detection_latency_s->mean, 10);
  EXPECT_DOUBLE_EQ(*s.impactful.localization_top1, 0.0);
  EXPECT_EQ(s.latent.scored_faults, 1);
  EXPECT_DOUBLE_EQ(*s.latent.recall, 1.0);
  EXPECT_DOUBLE_EQ(s.latent.detection_latency_s->p50, 40);
  EXPECT_DOUBLE_EQ(*s.latent.localization_top1, 1.0);
  EXPECT_TRUE(s.faults[1].latent);
  EXPECT_FALSE(s.faults[0].scored);
}

TEST(Score, OpenEndedFaultsCloseAtRunEnd) {
  std::vector<FaultEpisode> faults = {fault("f", "h1", 100, std::nullopt)};
  DetectorScore inside = score_detector(faults, {alert(1050)}, opts(1000));
  EXPECT_EQ(inside.overall.detected, 1);
  DetectorScore after = score_detector(faults, {alert(1061)}, opts(1000));
  EXPECT_EQ(after.overall.detected, 0);
  EXPECT_EQ(after.false_alerts, 1);
  EXPECT_DOUBLE_EQ(*after.precision, 0.0);
  EXPECT_DOUBLE_EQ(*after.overall.recall, 0.0);
}

TEST(Score, NoEvidenceMeansNoFigure) {
  DetectorScore none = score_detector({}, {}, opts());
  EXPECT_FALSE(none.precision);       // no alert: not 1.0
  EXPECT_FALSE(none.overall.recall);  // no fault: not 1.0
  EXPECT_EQ(none.alerts, 0);
  EXPECT_EQ(none.overall.scored_faults, 0);
  DetectorScore silent = score_detector({fault("f", "h1", 0, 10)}, {}, opts());
  EXPECT_FALSE(silent.precision);
  EXPECT_DOUBLE_EQ(*silent.overall.recall, 0.0);
  EXPECT_FALSE(silent.overall.localization_top1);
  EXPECT_FALSE(silent.overall.detection_latency_s);
  EXPECT_FALSE(silent.overall.time_to_localize_s);
}

TEST(Score, TiesShareTheCredit) {
  const std::vector<Suspect> two_on_top = {{"leaf1~spine0", 0.5}, {"leaf2~spine0", 0.5}, {"h1.nic0~leaf1", 0.1}};
  EXPECT_DOUBLE_EQ(localization_credit(two_on_top, "leaf1~spine0", 1), 0.5);
  EXPECT_DOUBLE_EQ(localization_credit(two_on_top, "leaf2~spine0", 1), 0.5);  // list order does not matter
  EXPECT_DOUBLE_EQ(localization_credit(two_on_top, "leaf1~spine0", 3), 1.0);
  EXPECT_DOUBLE_EQ(localization_credit(two_on_top, "h1.nic0~leaf1", 1), 0.0);
  EXPECT_DOUBLE_EQ(localization_credit(two_on_top, "h1.nic0~leaf1", 3), 1.0);
  EXPECT_DOUBLE_EQ(localization_credit(two_on_top, "h9", 3), 0.0);
  // Ranked by score, not by place in the list; four tied at places 2-5.
  const std::vector<Suspect> spread = {{"a", 0.1}, {"b", 0.1}, {"top", 0.9}, {"c", 0.1}, {"d", 0.1}};
  EXPECT_DOUBLE_EQ(localization_credit(spread, "top", 1), 1.0);
  EXPECT_DOUBLE_EQ(localization_credit(spread, "a", 1), 0.0);
  EXPECT_DOUBLE_EQ(localization_credit(spread, "a", 3), 2.0 / 4.0);

  // In a score: a tied first naming alert gives half a top-1, and the target
  // counts as localized only once an alert ranks it alone on top.
  std::vector<FaultEpisode> faults = {fault("f", "leaf1~spine0", 100, 400)};
  std::vector<Alert> alerts = {ranked(130, {{"leaf2~spine0", 0.5}, {"leaf1~spine0", 0.5}}),
                               ranked(160, {{"leaf1~spine0", 0.8}, {"leaf2~spine0", 0.2}})};
  DetectorScore s = score_detector(faults, alerts, opts());
  EXPECT_DOUBLE_EQ(*s.overall.localization_top1, 0.5);
  EXPECT_DOUBLE_EQ(*s.overall.localization_top3, 1.0);
  EXPECT_DOUBLE_EQ(*s.faults[0].time_to_localize_s, 60);
  // Swapping the tied pair's order changes nothing.
  std::swap(alerts[0].suspects[0], alerts[0].suspects[1]);
  EXPECT_DOUBLE_EQ(*score_detector(faults, alerts, opts()).overall.localization_top1, 0.5);
}

TEST(Score, AlertsNamingOnlyUnknownComponentsAreFalse) {
  std::vector<FaultEpisode> faults = {fault("f", "h1.gpu0", 100, 400)};
  ScoringOptions o = opts();
  o.known_component = [](const std::string& id) { return id.starts_with("h1"); };
  DetectorScore s = score_detector(faults, {alert(150, {"h999.gpu0"}), alert(200, {"h999.gpu1", "h1.gpu0"})}, o);
  EXPECT_EQ(s.false_alerts, 1);
  EXPECT_EQ(s.faults[0].alerts, 1);
  EXPECT_DOUBLE_EQ(s.faults[0].detection_latency_s, 100);  // the one naming h1.gpu0
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
  EXPECT_DOUBLE_EQ(s.overall.detection_latency_s->p50, 10);  // ceil(0.5 * 20) = 10th
  EXPECT_DOUBLE_EQ(s.overall.detection_latency_s->p95, 19);  // ceil(0.95 * 20) = 19th
  EXPECT_DOUBLE_EQ(s.overall.detection_latency_s->mean, 10.5);
  EXPECT_DOUBLE_EQ(*s.overall.localization_top1, 1.0);
}

// Two tenants share a spine link; its fault touched only tenant B's job.
// Tenant A's detector naming the link is right about the cluster: a true
// alert on a fault that did not affect A, and not a fault A must find.
TEST(Score, AnAlertNamingAFaultOfAnotherTenantIsTrueButNotScored) {
  FaultEpisode shared_link = fault("f1", "leaf0~spine1", 100, 300);
  shared_link.jobs = {"b"};
  FaultEpisode own_gpu = fault("f2", "h1.gpu0", 150, 300);
  own_gpu.jobs = {"a"};
  const std::vector<FaultEpisode> scored = faults_for_tenant({shared_link, own_gpu}, "a");
  ASSERT_EQ(scored.size(), 2u);
  EXPECT_EQ(scored[0].id, "f2");  // the tenant's own faults first, as its view lists them
  EXPECT_TRUE(scored[1].other_tenants);
  const DetectorScore s =
      score_detector(scored, {alert(160, {"leaf0~spine1"}), alert(170, {"h1.gpu0"}), alert(180, {"h7.gpu3"})}, opts());
  EXPECT_EQ(s.alerts, 3);
  EXPECT_EQ(s.false_alerts, 0);  // h7.gpu3 names nothing faulty but falls in A's own fault: a detection
  EXPECT_EQ(s.other_tenant_alerts, 1);
  EXPECT_EQ(s.overall.scored_faults, 1);
  EXPECT_EQ(s.overall.detected, 1);
  EXPECT_EQ(s.overall.localization_top1, 1.0);
  // Without the other tenant's fault, the link alert would have been taken
  // for a poor localization of A's GPU fault.
  const DetectorScore alone =
      score_detector({own_gpu}, {alert(160, {"leaf0~spine1"}), alert(170, {"h1.gpu0"})}, opts());
  EXPECT_EQ(alone.overall.localization_top1, 0.0);
  // Before any fault of A, the named link is still true; an unnamed alert then is false.
  const DetectorScore early = score_detector(scored, {alert(110, {"leaf0~spine1"}), alert(120)}, opts());
  EXPECT_EQ(early.false_alerts, 1);
  EXPECT_EQ(early.other_tenant_alerts, 1);
  EXPECT_EQ(early.overall.detected, 0);
}

// Many real detectors stop at the host, the unit an operator drains:
// naming h5 for a fault on h5.gpu2 is wrong at the component level and
// right at the host's and the pod's.
TEST(Score, NamingTheHostOfAFaultyGpuEarnsHostLevelCredit) {
  sim::ClusterShape shape;  // two pods of four hosts, two rails
  shape.hosts = 8;
  shape.gpus_per_host = 4;
  shape.rnics_per_host = 2;
  shape.leaves = 4;
  shape.spines = 2;
  ScoringOptions o = opts();
  o.pods_of = pods_in(shape);
  const std::vector<FaultEpisode> gpu = {fault("f1", "h5.gpu2", 100, 200)};
  DetectorScore s = score_detector(gpu, {alert(110, {"h5"})}, o);
  EXPECT_EQ(s.overall.localization_top1, 0.0);
  EXPECT_EQ(s.overall.localization_host_top1, 1.0);
  EXPECT_EQ(s.overall.localization_pod_top1, 1.0);
  s = score_detector(gpu, {alert(110, {"h4.gpu2"})}, o);  // the same pod, another host
  EXPECT_EQ(s.overall.localization_host_top1, 0.0);
  EXPECT_EQ(s.overall.localization_pod_top1, 1.0);
  s = score_detector(gpu, {alert(110, {"h1.gpu2"})}, o);  // the other pod
  EXPECT_EQ(s.overall.localization_pod_top1, 0.0);
  // Tied on top with a suspect on another host: half the host credit; two
  // of three tied on the right host: the chance one of them comes first.
  s = score_detector(gpu, {ranked(110, {{"h5.gpu1", 1}, {"h3.gpu0", 1}})}, o);
  EXPECT_EQ(s.overall.localization_host_top1, 0.5);
  EXPECT_DOUBLE_EQ(level_credit({{"h5.gpu1", 1}, {"h5.nic0", 1}, {"h3.gpu0", 1}}, {"h5"}, host_level_units, 1),
                   2.0 / 3.0);
  // A switch is a link's host-level unit; a spine is a pod of its own.
  const std::vector<FaultEpisode> link = {fault("f2", "leaf1~spine0", 100, 200)};
  s = score_detector(link, {alert(110, {"leaf1"})}, o);
  EXPECT_EQ(s.overall.localization_top1, 0.0);
  EXPECT_EQ(s.overall.localization_host_top1, 1.0);
  EXPECT_EQ(host_level_units("h5.nic1~leaf1"), (std::vector<std::string>{"h5", "leaf1"}));
  EXPECT_EQ(o.pods_of("spine1"), std::vector<std::string>{"spine1"});
  EXPECT_EQ(o.pods_of("leaf3"), std::vector<std::string>{"pod1"});
  // Without the cluster's layout (a real run's alerts alone) pods are not scored.
  s = score_detector(gpu, {alert(110, {"h5"})}, opts());
  EXPECT_EQ(s.overall.localization_host_top1, 1.0);
  EXPECT_FALSE(s.overall.localization_pod_top1.has_value());
}

}  // namespace
}  // namespace gauntlet::harness
