// A scenario whose only fault is latent (a lossy link no ring crosses):
// the probers' detections are scored, the others show null figures rather
// than perfect ones.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/detectors/registry.hpp"
#include "harness/runner/outputs.hpp"
#include "harness/runner/runner.hpp"
#include "harness/scenario/loader.hpp"

namespace gauntlet::harness {
namespace {

TEST(LatentFault, ProbersAreScoredAndTheRestShowNothing) {
  const DetectorRegistry registry = builtin_detectors();
  const Scenario scenario =
      load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/latent-link-loss.yaml", registry);
  const RunReport report = run_scenario(scenario, registry, RunOptions{});
  // The scenario's one fault comes first; the healthy fleet's background follows, benign.
  ASSERT_GE(report.faults.size(), 1u);
  EXPECT_FALSE(report.faults[0].background);
  for (std::size_t i = 1; i < report.faults.size(); ++i) EXPECT_TRUE(report.faults[i].background);
  EXPECT_FALSE(report.faults[0].affected_job) << "no iteration may slow: the link carries no ring";
  const nlohmann::json summary = nlohmann::json::parse(summary_json(report));
  EXPECT_EQ(summary["faults"][0]["class"], "latent");

  // Pingmesh probes each round (every 30 s from 1 s) and judges a round's
  // results at the next one: an alert comes 31 s after the 300 s onset, or a
  // whole number of rounds later when a round's probes through the link
  // all got through. It names the link.
  const nlohmann::json& pingmesh = summary["detectors"]["pingmesh"];
  const nlohmann::json& latent = pingmesh["latent"];
  EXPECT_EQ(latent["scored_faults"], 1);
  ASSERT_EQ(latent["detected"], 1);
  const double latency = latent["detection_latency_s"]["p50"].get<double>();
  EXPECT_GE(latency, 31.0);
  EXPECT_LE(latency, 91.0);
  EXPECT_DOUBLE_EQ(std::fmod(latency - 31.0, 30.0), 0.0) << latency;
  EXPECT_DOUBLE_EQ(latent["localization_top1"].get<double>(), 1.0);
  EXPECT_EQ(pingmesh["false_alerts"], 0);
  EXPECT_DOUBLE_EQ(pingmesh["precision"].get<double>(), 1.0);
  EXPECT_TRUE(pingmesh["impactful"]["recall"].is_null());  // there was no impactful fault
  EXPECT_EQ(summary["detectors"]["skeleton"]["latent"]["detected"], 1);

  // The job never slowed: nothing for the iteration watchers to show, and
  // no perfect figures for them either.
  for (const char* name : {"timeout", "falcon", "c4d", "eroica"}) {
    const nlohmann::json& d = summary["detectors"][name];
    EXPECT_EQ(d["alerts"], 0) << name;
    EXPECT_TRUE(d["precision"].is_null()) << name;
    EXPECT_DOUBLE_EQ(d["latent"]["recall"].get<double>(), 0.0) << name;
    EXPECT_TRUE(d["detection_latency_s"].is_null()) << name;
    EXPECT_TRUE(d["localization_top1"].is_null()) << name;
    EXPECT_TRUE(d["impactful"]["recall"].is_null()) << name;
    EXPECT_DOUBLE_EQ(d["lost_iterations"].get<double>(), 0.0) << name;
  }
}

// A GPU of host 1 fails and the job restarts on the spare h16 of the other
// pod, where its rings cross the spines and every iteration takes 6.7%
// longer; a GPU of h17, a spare the job never used, is throttled later.
// Only the first fault touched the job.
TEST(LatentFault, AFaultOnAHostTheJobNeverUsedIsLatentAfterAReplacement) {
  std::string text;
  {
    std::ifstream in(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/gpu-fail-isolate.yaml");
    for (std::string line; std::getline(in, line);) {
      if (line.find("name: timeout") != std::string::npos) continue;
      if (line.find("h9.gpu4") != std::string::npos)
        line =
            "  - {type: gpu_fail, target: h1.gpu4, at: 20m}\n"
            "  - {type: gpu_throttle, target: h17.gpu0, at: 60m, duration: 10m, slowdown: 0.5}";
      text += line + "\n";
    }
  }
  const std::string path = ::testing::TempDir() + "/replaced-then-spare-throttled.yaml";
  std::ofstream(path) << text;
  const DetectorRegistry registry = builtin_detectors();
  const RunReport report = run_scenario(load_scenario(path, registry), registry, RunOptions{});
  ASSERT_GE(report.faults.size(), 2u);
  ASSERT_EQ(report.faulty.placements.size(), 2u);
  EXPECT_EQ(report.faulty.placements[1].hosts[1], 16) << "the job moved from h1 to h16";
  EXPECT_TRUE(report.faults[0].affected_job);
  EXPECT_FALSE(report.faults[1].affected_job) << "h17 never held the job";
}

}  // namespace
}  // namespace gauntlet::harness
