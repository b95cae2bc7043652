// gauntlet plan probes' predicted detection latency against simulation: the
// skeleton and pingmesh detectors, at the settings plan probes gives for two
// budgets, simulated on a small cluster whose 32 leaf-spine links each lose
// 1% of packets for 10 minutes in turn.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "gauntlet_cli.hpp"

namespace {

using cli_test::gauntlet;
using cli_test::scratch;
using cli_test::slurp;

constexpr int kSpines = 4, kLeaves = 8;

// Two pods of 4 hosts, 4 rail leaves each; a 32-GPU job whose 4 data-parallel
// rings span both pods, so every leaf-spine link carries some of its pairs.
std::string write_scenario() {
  const auto path = scratch("probe-model.yaml");
  std::ofstream out(path);
  out << "name: probe-model\nseed: 1\nengine: flow\nmitigation: none\ndetectors: [skeleton, pingmesh]\n"
      << "cluster: {spines: " << kSpines << ", leaves: " << kLeaves
      << ", hosts: 8, gpus_per_host: 4, rnics_per_host: 4, rail_optimized: true, host_link_gbps: 400, "
         "fabric_link_gbps: 400, link_latency: 1us}\n"
      << "job: {name: small, gpus: 32, parallelism: {tp: 4, pp: 1, dp: 8, ep: 1}, compute_per_iteration: 2s, "
         "gradient_bytes: 1GB, checkpoint_interval: 1h, restart_cost: 1m}\nfaults:\n";
  // 10 minutes each, 2 apart: long enough that every fault is seen, and the
  // detectors' incidents close between them.
  int at = 120;
  for (int leaf = 0; leaf < kLeaves; ++leaf)
    for (int spine = 0; spine < kSpines; ++spine, at += 720)
      out << "  - {type: link_loss, target: leaf" << leaf << "~spine" << spine << ", at: " << at
          << "s, duration: 600s, rate: 0.01}\n";
  out << "duration: " << at + 60 << "s\n";
  return path.string();
}

TEST(PlanProbesSimulated, PredictionsHoldWithinAQuarterOfSimulatedDetection) {
  const std::string scenario = write_scenario();
  const auto plan = gauntlet("plan probes " + scenario + " --json --budget 1,10 --loss 0.01");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto predicted = nlohmann::json::parse(plan.out)["predicted"]["strategies"];
  for (std::size_t b = 0; b < 2; ++b) {
    const auto& skeleton = predicted["skeleton"][b];
    const auto& pingmesh = predicted["pingmesh"][b];
    const auto out = scratch("run-" + std::to_string(b));
    const auto run = gauntlet("run " + scenario + " --no-progress --out " + out.string() + " --detector '" +
                              skeleton["detector"].get<std::string>() + "' --detector '" +
                              pingmesh["detector"].get<std::string>() + "'");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto summary = nlohmann::json::parse(slurp(out / "summary.json"))["detectors"];
    for (const auto* row : {&skeleton, &pingmesh}) {
      const std::string name =
          (*row)["detector"].get<std::string>().find("skeleton") != std::string::npos ? "skeleton" : "pingmesh";
      const auto& fabric = (*row)["classes"][0];
      ASSERT_EQ(fabric["fault"], "fabric link 1% loss");
      // Every link is probed, as predicted, and every fault is seen.
      EXPECT_EQ(fabric["never_probed"].get<int>(), 0) << name;
      EXPECT_EQ(summary[name]["detected"].get<int>(), kSpines * kLeaves) << name;
      const double model = fabric["mean_latency_s"].get<double>();
      const double simulated = summary[name]["detection_latency_s"]["mean"].get<double>();
      EXPECT_NEAR(simulated / model, 1.0, 0.25) << name << " at " << (*row)["budget"] << " probes/s: predicted "
                                                << model << " s, simulated " << simulated << " s";
    }
  }
}

}  // namespace
