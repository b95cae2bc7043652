// Calibration attributes set in a scenario's `calibration:` block change
// exactly the figure they stand for: each test runs a seed incident's
// scenario through the simulator twice, once with the defaults and once
// with one attribute moved, and checks the moved figure against the model's
// physics.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/isolated_run.hpp"
#include "tests/incidents_a_recorder.hpp"

namespace {

using json = nlohmann::json;
namespace harness = gauntlet::harness;
namespace sim = gauntlet::sim;

std::string incident_text(const std::string& file) {
  std::ifstream in(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/incidents/" + file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The incident's telemetry as the recorder keeps it, with `calibration`
// (YAML lines, may be empty) appended to the scenario. On the clean fleet:
// the figures below are the calibration's exact values, which the healthy
// fleet's spread would move.
json recorded_run(const std::string& file, const std::string& calibration) {
  const std::string text =
      incident_text(file) + "\nbackground: none\n" + (calibration.empty() ? "" : "calibration:\n" + calibration);
  return json::parse(sim::run_isolated([&] {
    json log = json::object();
    harness::DetectorRegistry registry = harness::builtin_detectors();
    registry.add({"incident-recorder", "keeps what the tests read", {}, [&](const harness::DetectorContext&) {
                    return std::make_unique<gauntlet::incidents::Recorder>(&log, gauntlet::incidents::RecorderPlan{});
                  }});
    harness::Scenario scenario = harness::parse_scenario(text, file, registry);
    scenario.detectors = {{"incident-recorder", {}, {}}};
    harness::simulate(scenario, registry, {});
    return log.dump();
  }));
}

// A GPU sample's temperature at or before t_s (the series is in arrival order).
double temperature_at(const json& series, double t_s) {
  double value = -1, latest = -1;
  for (const json& point : series) {
    const double t = point[0].get<double>() / 1e9;
    if (t <= t_s && t >= latest) {
      latest = t;
      value = point[3].get<double>();
    }
  }
  return value;
}

// hot-slow-gpu throttles h0.gpu0 by 20% (= gpu.hot_slowdown) for 10 min, so
// it settles at gpu.hot_temperature; its peers stay at gpu.busy_temperature.
TEST(CalibrationEffects, HotTemperatureMovesTheThrottledGpuOnly) {
  const json base = recorded_run("hot-slow-gpu.yaml", "");
  const json hotter = recorded_run("hot-slow-gpu.yaml", "  gpu.hot_temperature: 80\n");
  EXPECT_NEAR(temperature_at(base["gpu"]["h0.gpu0"], 540), 70, 0.5);
  EXPECT_NEAR(temperature_at(hotter["gpu"]["h0.gpu0"], 540), 80, 0.5);
  EXPECT_NEAR(temperature_at(hotter["gpu"]["h0.gpu1"], 540), temperature_at(base["gpu"]["h0.gpu1"], 540), 1e-9);
  // With gpu.hot_slowdown at 0.4 a 20% throttle is halfway there:
  // 50 + (70 - 50) / 2 C.
  const json half = recorded_run("hot-slow-gpu.yaml", "  gpu.hot_slowdown: 0.4\n");
  EXPECT_NEAR(temperature_at(half["gpu"]["h0.gpu0"], 540), 60, 0.5);
}

// The job's failures in the run: (time, error) of every job event with one.
std::vector<std::pair<sim::Nanos, std::string>> job_errors(const json& log) {
  std::vector<std::pair<sim::Nanos, std::string>> errors;
  for (const json& e : log["job"])
    if (!e[2].get<std::string>().empty()) errors.emplace_back(e[0].get<sim::Nanos>(), e[2].get<std::string>());
  return errors;
}

// connectivity-timeout downs a link of the job's ring for 3 s at 5 min and
// for 5 s at 15 min. The collective fails once an outage outlasts
// transport.timeout, that long after the link went down.
TEST(CalibrationEffects, TransportTimeoutDecidesWhichOutageEndsTheJob) {
  const auto base = job_errors(recorded_run("connectivity-timeout.yaml", ""));
  ASSERT_EQ(base.size(), 1u);
  EXPECT_EQ(base[0].first, 15 * sim::kMinute + 4 * sim::kSecond);
  EXPECT_NE(base[0].second.find("NCCL Error"), std::string::npos);

  EXPECT_TRUE(job_errors(recorded_run("connectivity-timeout.yaml", "  transport.timeout: 6s\n")).empty());

  const auto shorter = job_errors(recorded_run("connectivity-timeout.yaml", "  transport.timeout: 2s\n"));
  ASSERT_FALSE(shorter.empty());
  EXPECT_EQ(shorter[0].first, 5 * sim::kMinute + 2 * sim::kSecond);
  EXPECT_NE(shorter[0].second.find("NCCL Error"), std::string::npos);
}

}  // namespace
