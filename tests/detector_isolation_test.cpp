// Detectors cannot change each other's results: on every single-fault
// scenario, each reference detector raises bit-identical alerts whether it
// watches the run alone or beside every other detector (its probes, random
// streams and telemetry are its own).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scoring/records.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> fault_scenarios() {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(fs::path(GAUNTLET_SOURCE_DIR) / "scenarios" / "faults"))
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Alerts exactly as alerts.jsonl holds them (every double printed round-trip).
std::string alert_lines(const DetectorOutcome& outcome) {
  std::ostringstream out;
  for (const Alert& a : outcome.alerts) write_alert_line(out, a);
  return out.str();
}

class DetectorIsolation : public ::testing::TestWithParam<std::string> {};

TEST_P(DetectorIsolation, AlertsAloneEqualAlertsBesideEveryOther) {
  const DetectorRegistry registry = builtin_detectors();
  const Scenario scenario = load_scenario(GetParam(), registry);
  ASSERT_GE(scenario.detectors.size(), 6u) << "every reference detector watches the fault scenarios";
  // A detector whose benchmarks pause training watches a run of its own in
  // either case (see the runner), so the shared run leaves it out.
  SimulationRequest together;
  std::vector<std::string> sharing;
  for (const DetectorSpec& d : scenario.detectors) {
    const DetectorInfo* info = registry.find(d.name);
    ASSERT_NE(info, nullptr) << d.name;
    if (info->pauses_training)
      together.skip_detectors.push_back(d.run_name());
    else
      sharing.push_back(d.run_name());
  }
  std::vector<std::function<std::string()>> bodies = {[&] { return simulate(scenario, registry, together).to_json(); }};
  std::vector<SimulationRequest> alone(sharing.size());
  for (std::size_t i = 0; i < sharing.size(); ++i) {
    alone[i].only_detector = sharing[i];
    bodies.push_back([&, i] { return simulate(scenario, registry, alone[i]).to_json(); });
  }
  const std::vector<std::string> results = sim::run_isolated_all(bodies, 2);
  const SimulationOutcome shared = SimulationOutcome::from_json(results[0]);
  for (std::size_t i = 0; i < sharing.size(); ++i) {
    const SimulationOutcome own = SimulationOutcome::from_json(results[1 + i]);
    EXPECT_EQ(alert_lines(own.detectors.at(sharing[i])), alert_lines(shared.detectors.at(sharing[i])))
        << sharing[i] << " on " << GetParam();
    EXPECT_EQ(own.detectors.at(sharing[i]).probes_sent, shared.detectors.at(sharing[i]).probes_sent) << sharing[i];
  }
}

// The same detector twice, with other parameters under another name: each
// instance reads only its own probes, so the default one raises what it
// raises alone.
TEST(DetectorListedTwice, EachInstanceReadsOnlyItsOwnProbes) {
  const DetectorRegistry registry = builtin_detectors();
  Scenario scenario = load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/faults/link-loss.yaml", registry);
  std::erase_if(scenario.detectors, [](const DetectorSpec& d) { return d.name != "pingmesh"; });
  DetectorSpec fast = scenario.detectors.at(0);
  fast.as = "pingmesh-10s";
  fast.params["round"] = "10s";
  scenario.detectors.push_back(fast);
  SimulationRequest alone;
  alone.only_detector = "pingmesh";
  const std::vector<std::string> results =
      sim::run_isolated_all({[&] { return simulate(scenario, registry, SimulationRequest{}).to_json(); },
                             [&] { return simulate(scenario, registry, alone).to_json(); }},
                            2);
  const SimulationOutcome both = SimulationOutcome::from_json(results[0]);
  const SimulationOutcome single = SimulationOutcome::from_json(results[1]);
  EXPECT_EQ(alert_lines(both.detectors.at("pingmesh")), alert_lines(single.detectors.at("pingmesh")));
  const DetectorOutcome& tuned = both.detectors.at("pingmesh-10s");
  ASSERT_FALSE(tuned.alerts.empty());
  EXPECT_EQ(tuned.alerts.front().detector, "pingmesh-10s");
  // Three rounds for every one of the default's, each probing the same pairs.
  const double ratio =
      static_cast<double>(tuned.probes_sent) / static_cast<double>(both.detectors.at("pingmesh").probes_sent);
  EXPECT_NEAR(ratio, 3.0, 0.1);
}

INSTANTIATE_TEST_SUITE_P(FaultScenarios, DetectorIsolation, ::testing::ValuesIn(fault_scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).stem().string();
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace gauntlet::harness
