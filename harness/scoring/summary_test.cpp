#include "harness/scoring/summary.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;

FaultEpisode fault(std::string id, std::string target, double start, double end, bool affected) {
  FaultEpisode f;
  f.id = std::move(id);
  f.type = "link_loss";
  f.target = std::move(target);
  f.start_s = start;
  f.end_s = end;
  f.affected_job = affected;
  return f;
}

// A month of a realistic fleet holds hundreds of thousands of background
// conditions: summary.json counts them by kind; faults.jsonl lists them.
TEST(Summary, BackgroundConditionsAreCountedByKindNotListed) {
  Summary summary;
  summary.scenario = "fleet";
  summary.real = RealRunInfo{"faults.jsonl", "alerts.jsonl", std::nullopt};
  summary.faults = {fault("f1", "leaf1~spine0", 100, 200, true)};
  for (const char* kind : {"ecn_burst", "ecn_burst", "app_xid"}) {
    FaultEpisode bg = fault("bg" + std::to_string(summary.faults.size()), "h1.gpu0", 10, 12, false);
    bg.type = kind;
    bg.benign = bg.background = true;
    summary.faults.push_back(bg);
  }
  const std::string listed = summary_json(summary);
  const json j = json::parse(listed);
  ASSERT_EQ(j["faults"].size(), 1u);
  EXPECT_EQ(j["faults"][0]["id"], "f1");
  EXPECT_EQ(j["background"]["conditions"], 3);
  EXPECT_EQ(j["background"]["by_kind"]["ecn_burst"], 2);
  EXPECT_EQ(j["background"]["by_kind"]["app_xid"], 1);
  summary.faults.resize(1);
  EXPECT_FALSE(json::parse(summary_json(summary)).contains("background"));
  // Counted by the caller instead of listed: the same bytes.
  summary.background_by_kind = {{"ecn_burst", 2}, {"app_xid", 1}};
  EXPECT_EQ(summary_json(summary), listed);
}

TEST(Summary, FiguresWithoutEvidenceAreNullAndReadBackEmpty) {
  const std::vector<FaultEpisode> faults = {fault("f1", "leaf1~spine0", 100, 200, false)};
  Summary summary;
  summary.scenario = "latent";
  summary.real = RealRunInfo{"faults.jsonl", "alerts.jsonl", 1700000000.0};
  summary.faults = faults;
  summary.detectors.push_back({"silent", "ok", score_detector(faults, {}, {}), std::nullopt});
  summary.detectors.push_back(
      {"prober", "ok", score_detector(faults, {{130, "prober", "network", {{"leaf1~spine0", 1}}}}, {}), std::nullopt});
  const json j = json::parse(summary_json(summary));
  EXPECT_EQ(j["source"], "real");
  EXPECT_TRUE(j["seed"].is_null());
  EXPECT_EQ(j["faults"][0]["class"], "latent");
  const json& silent = j["detectors"]["silent"];
  EXPECT_TRUE(silent["precision"].is_null());  // no alert: nothing to be precise about
  EXPECT_EQ(silent["alerts"], 0);
  EXPECT_DOUBLE_EQ(silent["recall"].get<double>(), 0.0);  // one fault to find, not found
  EXPECT_TRUE(silent["detection_latency_s"].is_null());
  EXPECT_TRUE(silent["localization_top1"].is_null());
  EXPECT_TRUE(silent["impactful"]["recall"].is_null());  // no impactful fault at all
  EXPECT_EQ(silent["latent"]["scored_faults"], 1);
  EXPECT_TRUE(silent["lost_iterations"].is_null());  // a real run has no counterfactual
  const json& prober = j["detectors"]["prober"];
  EXPECT_DOUBLE_EQ(prober["latent"]["detection_latency_s"]["p50"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(prober["latent"]["localization_top1"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(prober["precision"].get<double>(), 1);

  const DetectorScore back = detector_score_from_json(silent);
  EXPECT_FALSE(back.precision);
  EXPECT_FALSE(back.overall.detection_latency_s);
  EXPECT_FALSE(back.costs);
  ASSERT_TRUE(back.latent.recall);
  EXPECT_DOUBLE_EQ(*back.latent.recall, 0.0);
  const DetectorScore found = detector_score_from_json(prober);
  ASSERT_TRUE(found.latent.detection_latency_s);
  EXPECT_DOUBLE_EQ(found.latent.detection_latency_s->mean, 30);
  EXPECT_EQ(found.latent.detected, 1);
}

TEST(Summary, SimulatedRunsCarryCostsAndRunFacts) {
  Summary summary;
  summary.scenario = "demo";
  summary.simulated = SimulatedRunInfo{7, "flow", 1200, 0.5, 500, 480, {}};
  DetectorScore score;
  score.costs = RunCosts{1, 20, 1.5, 300, 4096};
  summary.detectors.push_back({"falcon", "ok", score, DetectorRunFacts{3, 0.2, 2, 0.5, nullptr}});
  const json j = json::parse(summary_json(summary));
  EXPECT_EQ(j["seed"], 7);
  EXPECT_TRUE(j["truth"].is_null());
  const json& d = j["detectors"]["falcon"];
  EXPECT_DOUBLE_EQ(d["lost_iterations"].get<double>(), 20);
  EXPECT_EQ(d["benchmarks"], 2);
  EXPECT_TRUE(d["mitigation_actions"].is_null());
  const DetectorScore back = detector_score_from_json(d);
  ASSERT_TRUE(back.costs);
  EXPECT_EQ(back.costs->probes_sent, 300);
  EXPECT_DOUBLE_EQ(back.costs->lost_gpu_hours, 1.5);
}

}  // namespace
}  // namespace gauntlet::harness
