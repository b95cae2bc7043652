// Seed incidents 5-7 as scenarios (scenarios/incidents/) and the fabric
// counters of simulated runs, each through the real pipeline: the scenario
// file, the simulator in a forked child, and the telemetry a detector
// receives. Figures are checked against the seeds within +-15%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/isolated_run.hpp"

namespace {

using json = nlohmann::json;
namespace harness = gauntlet::harness;
namespace sim = gauntlet::sim;
namespace telemetry = gauntlet::telemetry;

constexpr double kBand = 0.15;  // the seed figures' tolerance

// Keeps, per simulated second, each RNIC's CNP count and the cluster's ECN
// marks, expanding repeat blocks (when asked to); and the job's crash events.
class CounterRecorder : public harness::Detector {
 public:
  CounterRecorder(json* log, bool counters) : log_(log), counters_(counters) {}

  void observe(const telemetry::Batch& batch) override {
    for (const telemetry::Record& r : batch.records()) keep(r, -1, -1, 0);
    for (const telemetry::SteadySamples& block : batch.steady_samples())
      for (const telemetry::Record& r : block.samples()) keep(r, block.from_ns(), block.until_ns(), block.period_ns());
  }

 private:
  void keep(const telemetry::Record& r, sim::Nanos from, sim::Nanos until, sim::Nanos period) {
    json& log = *log_;
    auto each_second = [&](sim::Nanos at, const auto& add) {
      if (from < 0) return add(at / sim::kSecond);
      for (sim::Nanos t = from; t <= until; t += period) add(t / sim::kSecond);
    };
    if (!counters_ && (r.has_nic() || r.has_port())) return;
    if (r.has_port()) {
      const double tx = static_cast<double>(r.port().tx_bytes());
      each_second(r.port().time_ns(), [&](sim::Nanos s) {
        json& total = log["port_tx"][std::to_string(s)];
        total = total.is_null() ? tx : total.get<double>() + tx;
      });
    }
    if (r.has_nic() && r.nic().cnp() > 0) {
      const auto& n = r.nic();
      each_second(n.time_ns(), [&](sim::Nanos s) { log["cnp"][n.nic()][std::to_string(s)] = n.cnp(); });
    } else if (r.has_port() && r.port().ecn_marked() > 0) {
      const auto& p = r.port();
      const std::string name = p.link() + (p.upward() ? ".up" : ".down");
      each_second(p.time_ns(), [&](sim::Nanos s) { log["ecn"][name][std::to_string(s)] = p.ecn_marked(); });
    } else if (r.has_port()) {
      log["ports_seen"] = true;
    } else if (r.has_job() && r.job().kind() == telemetry::JobEvent::CRASH) {
      log["crash"].push_back({r.job().time_ns(), r.job().error()});
    }
  }
  json* log_;
  bool counters_;
};

struct ScenarioRun {
  harness::SimulationOutcome outcome;
  json log;
};

ScenarioRun run_scenario(const std::string& relative_path, bool inject_faults = true, bool counters = true) {
  const std::string path = std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/" + relative_path;
  const std::string text = sim::run_isolated([&] {
    json log = json::object();
    harness::DetectorRegistry registry = harness::builtin_detectors();
    registry.add({"counter-recorder", "keeps fabric counters for the tests", {}, [&](const harness::DetectorContext&) {
                    return std::make_unique<CounterRecorder>(&log, counters);
                  }});
    harness::Scenario scenario = harness::load_scenario(path, registry);
    scenario.detectors = {{"counter-recorder", {}, {}}};
    // The clean fleet: the counts below are the seed incidents' exact traffic.
    scenario.background = false;
    harness::SimulationRequest request;
    request.inject_faults = inject_faults;
    const harness::SimulationOutcome outcome = harness::simulate(scenario, registry, request);
    return json{{"outcome", outcome.to_json()}, {"log", log}}.dump();
  });
  const json j = json::parse(text);
  return {harness::SimulationOutcome::from_json(j["outcome"].get<std::string>()), j["log"]};
}

// Median duration (s) of the iterations that ran entirely inside [from, to).
std::optional<double> median_step_s(const std::vector<gauntlet::models::IterationSpan>& timeline, double from_s,
                                    double to_s) {
  std::vector<double> steps;
  for (const auto& span : timeline) {
    const double d = sim::to_seconds(span.duration);
    for (std::uint64_t i = 0; i < span.count; ++i) {
      const double start = sim::to_seconds(span.start) + static_cast<double>(i) * d;
      if (start >= from_s && start + d <= to_s) steps.push_back(d);
    }
  }
  if (steps.empty()) return std::nullopt;
  std::nth_element(steps.begin(), steps.begin() + static_cast<long>(steps.size() / 2), steps.end());
  return steps[steps.size() / 2];
}

double rate_in(const ScenarioRun& run, double from_min, double to_min) {
  const auto step = median_step_s(run.outcome.timeline, from_min * 60, to_min * 60);
  EXPECT_TRUE(step.has_value()) << "no whole iteration in [" << from_min << ", " << to_min << ") min";
  return step ? 1.0 / *step : NAN;
}

// Sum of a per-second series over [from, to) seconds.
double total_in(const json& series, double from_s, double to_s) {
  double sum = 0;
  for (const auto& [second, value] : series.items()) {
    const double s = std::stod(second);
    if (s >= from_s && s < to_s) sum += value.get<double>();
  }
  return sum;
}

double all_nics_in(const json& log, double from_s, double to_s) {
  double sum = 0;
  if (log.contains("cnp"))
    for (const auto& [nic, series] : log["cnp"].items()) sum += total_in(series, from_s, to_s);
  return sum;
}

void expect_within_band(double simulated, double seed, const std::string& what) {
  EXPECT_NEAR(simulated, seed, kBand * seed) << what << ": simulated " << simulated << ", seed " << seed;
}

// --- Fabric counters in runs ---

TEST(FabricCountersInRuns, CongestionRaisesCnpOnlyWhileItLasts) {
  // congestion.yaml: spine2 loaded by half from 10 to 25 min.
  const ScenarioRun faulty = run_scenario("faults/congestion.yaml");
  ASSERT_TRUE(faulty.log.contains("cnp"));
  ASSERT_TRUE(faulty.log.value("ports_seen", false) || faulty.log.contains("ecn"));
  const double before = all_nics_in(faulty.log, 0, 600), during = all_nics_in(faulty.log, 620, 1500),
               after = all_nics_in(faulty.log, 1520, 2400);
  EXPECT_GT(during, 0);
  EXPECT_EQ(before, 0);
  EXPECT_EQ(after, 0);
  // The RNICs that saw CNPs are those whose traffic crosses spine2, every
  // second of the window (counters are rates, lagging by one step at most).
  for (const auto& [nic, series] : faulty.log["cnp"].items()) {
    EXPECT_GT(total_in(series, 620, 1500), 0) << nic;
    EXPECT_EQ(total_in(series, 0, 600) + total_in(series, 1520, 2400), 0) << nic;
    EXPECT_GE(series.size(), 860u) << nic << " has CNPs in too few seconds of the 15-minute window";
  }
  EXPECT_LT(faulty.log["cnp"].size(), 128u) << "congestion of one spine cannot touch every RNIC";
  // ECN marks on spine2's ports only.
  ASSERT_TRUE(faulty.log.contains("ecn"));
  for (const auto& [port, series] : faulty.log["ecn"].items()) {
    EXPECT_NE(port.find("spine2"), std::string::npos) << port;
    EXPECT_EQ(total_in(series, 0, 600) + total_in(series, 1520, 2400), 0) << port;
  }

  // Iterations after the fault replay outcomes the engine simulated before
  // it: they carry the same bytes over the fabric as before the fault.
  const double tx_before = faulty.log["port_tx"].value("300", 0.0);
  EXPECT_GT(tx_before, 0);
  EXPECT_NEAR(faulty.log["port_tx"].value("2000", 0.0), tx_before, 1e-6 * tx_before);

  const ScenarioRun fault_free = run_scenario("faults/congestion.yaml", false);
  EXPECT_NEAR(fault_free.log["port_tx"].value("2000", 0.0), tx_before, 1e-6 * tx_before);
  EXPECT_FALSE(fault_free.log.contains("cnp")) << "no CNP without congestion";
  EXPECT_FALSE(fault_free.log.contains("ecn"));
  EXPECT_TRUE(fault_free.log.value("ports_seen", false)) << "port counters are published";
}

TEST(FabricCountersInRuns, SameSeedSameCounters) {
  const ScenarioRun a = run_scenario("faults/congestion.yaml");
  const ScenarioRun b = run_scenario("faults/congestion.yaml");
  EXPECT_EQ(a.log.dump(), b.log.dump());
  EXPECT_EQ(a.outcome.telemetry_bytes, b.outcome.telemetry_bytes);
}

// --- Incident 5: a 4-node job slowed by congestion twice (Falcon) ---

TEST(IncidentB, FourNodeCongestionTwoOnsets) {
  const ScenarioRun run = run_scenario("incidents/four-node-congestion.yaml");
  expect_within_band(rate_in(run, 0, 90), 0.57, "iterations/s before 90 min");
  expect_within_band(rate_in(run, 91, 265), 0.41, "iterations/s from 90 min");
  expect_within_band(rate_in(run, 266, 300), 0.31, "iterations/s from 265 min");
  // The CNP surge sits on the senders across the loaded inter-node link,
  // from each onset on (the seed: CNPs surged when training slowed). It
  // need not grow with the second: deeper under non-yielding tenants'
  // load DCQCN cuts the job's own rate further, leaving fewer of its
  // packets to mark (the calibration table's CNPs per second fall from
  // load 1.1 to 1.7).
  ASSERT_TRUE(run.log.contains("cnp"));
  std::vector<std::string> surging;
  for (const auto& [nic, series] : run.log["cnp"].items()) surging.push_back(nic);
  EXPECT_EQ(surging, (std::vector<std::string>{"h1.nic0", "h3.nic0"}));
  for (const std::string& nic : surging) {
    const json& series = run.log["cnp"][nic];
    EXPECT_EQ(total_in(series, 0, 90 * 60), 0) << nic;
    const double first = total_in(series, 100 * 60, 260 * 60) / (160 * 60);
    const double second = total_in(series, 270 * 60, 300 * 60) / (30 * 60);
    EXPECT_GT(first, 0) << nic;
    EXPECT_GT(second, 0) << nic;
  }
}

// --- Incident 6: 1,024 GPUs, congestion then throttling on top (Falcon) ---

TEST(IncidentB, CompoundDegradationAt1024Gpus) {
  const ScenarioRun run = run_scenario("incidents/compound-1024.yaml", true, false);
  const double normal = rate_in(run, 0, 62);
  expect_within_band(1 - rate_in(run, 63, 80) / normal, 0.80, "throughput cut by the first congestion");
  expect_within_band(rate_in(run, 81, 110) / normal, 0.10, "throughput with throttling on top, of normal");
  expect_within_band(1 - rate_in(run, 121, 240) / normal, 0.85, "throughput cut by the second congestion");
  // Back to normal between the two episodes.
  EXPECT_NEAR(rate_in(run, 110.5, 120) / normal, 1.0, 0.01);
}

// --- Incident 7: SkeletonHunter's margins ---

TEST(IncidentB, TenMicrosecondsOfRttCostAFifthOfTheSpeed) {
  const ScenarioRun run = run_scenario("incidents/rtt-margin.yaml", true, false);
  const double loss = 1 - rate_in(run, 5.1, 10) / rate_in(run, 0, 5);
  expect_within_band(loss, 0.20, "training speed lost to +10 us RTT");
}

TEST(IncidentB, OutageLongerThanFourSecondsEndsTheJob) {
  const ScenarioRun run = run_scenario("incidents/connectivity-timeout.yaml", true, false);
  // The 3 s outage at 5 min stalls the step it catches, by at most its
  // length (less when part of it falls in the step's compute), no crash.
  const double normal = 1 / rate_in(run, 0, 5);
  double longest = 0;
  for (const auto& span : run.outcome.timeline)
    if (span.start >= 5 * sim::kMinute - 10 * sim::kSecond && span.start < 6 * sim::kMinute)
      longest = std::max(longest, sim::to_seconds(span.duration));
  EXPECT_GT(longest - normal, 1.0) << "the step caught by the 3 s outage";
  EXPECT_LE(longest - normal, 3.0 + 1e-3) << "the step caught by the 3 s outage";
  // The 5 s outage at 15 min: the transport gives up after 4 s and the job
  // dies with NCCL's error.
  ASSERT_TRUE(run.log.contains("crash"));
  ASSERT_EQ(run.log["crash"].size(), 1u);
  const json& crash = run.log["crash"][0];
  EXPECT_EQ(crash[0].get<sim::Nanos>(), 15 * sim::kMinute + 4 * sim::kSecond);
  EXPECT_NE(crash[1].get<std::string>().find("NCCL Error"), std::string::npos);
}

}  // namespace
