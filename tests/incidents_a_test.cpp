// Seed incidents 1-4 as scenarios (scenarios/incidents/), each run through
// the real pipeline: the scenario file, the simulator in a forked child, and
// the telemetry a detector receives. Each checks the seed's figures within
// +-15% and what must stay silent (no alarm, flat switch queues, a normal GPU
// benchmark, clean underlay probes).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/report/fault_windows.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/isolated_run.hpp"
#include "tests/incidents_a_recorder.hpp"

namespace {

using gauntlet::incidents::ProbePair;
using gauntlet::incidents::Recorder;
using gauntlet::incidents::RecorderPlan;
using json = nlohmann::json;
namespace harness = gauntlet::harness;
namespace sim = gauntlet::sim;

constexpr double kBand = 0.15;  // the seed figures' tolerance

struct IncidentRun {
  harness::SimulationOutcome outcome;
  json log;
};

// Runs the scenario with the recorder and the status-quo `timeout`
// detector watching (the other detectors do not change the run).
IncidentRun run_incident(const std::string& file, const RecorderPlan& plan) {
  const std::string path = std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/incidents/" + file;
  const std::string text = sim::run_isolated([&] {
    json log = json::object();
    harness::DetectorRegistry registry = harness::builtin_detectors();
    registry.add({"incident-recorder", "keeps what the incident tests read", {}, [&](const harness::DetectorContext&) {
                    return std::make_unique<Recorder>(&log, plan);
                  }});
    harness::Scenario scenario = harness::load_scenario(path, registry);
    // The seed cases' published figures come from fleets of identical GPUs
    // as the cases describe them: the clean fleet.
    scenario.background = false;
    scenario.detectors = {{"incident-recorder", {}, {}}, {"timeout", {}, {}}};
    const harness::SimulationOutcome outcome = harness::simulate(scenario, registry, {});
    return json{{"outcome", outcome.to_json()}, {"log", log}}.dump();
  });
  const json j = json::parse(text);
  IncidentRun run{harness::SimulationOutcome::from_json(j["outcome"].get<std::string>()), j["log"]};
  // Repeat blocks arrive when they close: put every series in time order.
  for (const char* kind : {"gpu", "nic", "cpu", "port", "compute"})
    if (run.log.contains(kind))
      for (auto& [name, series] : run.log[kind].items())
        std::stable_sort(series.begin(), series.end(),
                         [](const json& a, const json& b) { return a[0].get<double>() < b[0].get<double>(); });
  return run;
}

double ns(double seconds) { return seconds * 1e9; }

double number(const json& value) { return value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>(); }

// The value in `column` of the last point at or before t_s.
double value_at(const json& series, double t_s, int column) {
  const json* last = nullptr;
  for (const json& point : series) {
    if (point[0].get<double>() > ns(t_s)) break;
    last = &point;
  }
  if (!last) ADD_FAILURE() << "no sample at or before " << t_s << " s";
  return last ? number((*last)[static_cast<std::size_t>(column)]) : NAN;
}

// The first time (seconds) after from_s at which `column` is below `level`.
double first_below(const json& series, double from_s, int column, double level) {
  for (const json& point : series)
    if (point[0].get<double>() > ns(from_s) && number(point[static_cast<std::size_t>(column)]) < level)
      return point[0].get<double>() / 1e9;
  return INFINITY;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

double step_s(const IncidentRun& run, double from_s, double to_s) {
  const auto value = harness::median_iteration_s(run.outcome.timeline, from_s, to_s);
  EXPECT_TRUE(value.has_value()) << "no whole iteration in " << from_s << "-" << to_s << " s";
  return value.value_or(NAN);
}

// No crash, no error message, no restart: nothing an alarm could hang on.
void expect_no_alarm(const IncidentRun& run) {
  for (const json& e : run.log["job"]) {
    EXPECT_EQ(e[1].get<int>(), 1 /* START */) << e.dump();  // only the job's start
    EXPECT_EQ(e[2].get<std::string>(), "");
  }
  EXPECT_TRUE(run.outcome.detectors.at("timeout").alerts.empty());
}

// Every switch port's queue stays where it was before the fault.
void expect_switch_queues_flat(const IncidentRun& run, double from_s, double to_s) {
  ASSERT_TRUE(run.log.contains("port")) << "no switch port counters in the run's telemetry";
  double deepest_before = 0, deepest_during = 0;
  std::size_t samples = 0;
  for (const auto& [port, series] : run.log["port"].items()) {
    double before = 0, during = 0;
    samples += series.size();
    for (const json& p : series) {
      const double t = p[0].get<double>() / 1e9;
      if (t < from_s)
        before = std::max(before, p[1].get<double>());
      else if (t < to_s)
        during = std::max(during, p[1].get<double>());
    }
    EXPECT_LE(during, before + 1.0) << port;
    deepest_before = std::max(deepest_before, before);
    deepest_during = std::max(deepest_during, during);
  }
  std::printf("%zu switch ports (%zu samples): deepest queue %.0f B before the fault, %.0f B during it\n",
              run.log["port"].size(), samples, deepest_before, deepest_during);
}

// --- Incident 1: NIC down with NCCL fallback in a MoE job -----------------

TEST(IncidentNicDownMoe, StepGoesFrom8_4To8_7WithNoAlarmAndTheFallbackRnicSendsTwice) {
  const IncidentRun run = run_incident("nic-down-moe.yaml", {});
  const double onset = 240, end = 600;
  const double before = step_s(run, 0, onset), during = step_s(run, onset, end);
  EXPECT_NEAR(before, 8.4, kBand * 8.4);
  EXPECT_NEAR(during, 8.7, kBand * 8.7);
  // The seed's 0.3 s is what the scenario's traffic derivation must explain.
  EXPECT_NEAR(during - before, 0.3, kBand * 0.3);

  expect_no_alarm(run);
  const json& nic = run.log["nic"];
  // h3.nic0 carries GPU0's and GPU7's traffic: twice its peers' packets.
  auto peers_mean = [&](double t) {
    double sum = 0;
    for (int k = 1; k <= 6; ++k) sum += value_at(nic["h3.nic" + std::to_string(k)], t, 1);
    return sum / 6;
  };
  const double t_during = 500, t_before = 200;
  const double tx_ratio = value_at(nic["h3.nic0"], t_during, 1) / peers_mean(t_during);
  std::printf("nic-down-moe: step %.3f s -> %.3f s (seed 8.4 -> 8.7 s); h3.nic0 sends %.2fx its peers' packets\n",
              before, during, tx_ratio);
  EXPECT_NEAR(tx_ratio, 2.0, kBand * 2.0);
  EXPECT_NEAR(value_at(nic["h3.nic0"], t_before, 1) / peers_mean(t_before), 1.0, 0.02);
  // The dead RNIC sends nothing; nothing else on the cluster changes.
  EXPECT_EQ(value_at(nic["h3.nic7"], t_during, 1), 0);
  EXPECT_EQ(value_at(nic["h3.nic7"], t_during, 2), 0);  // link down, yet no alarm above
  EXPECT_NEAR(value_at(nic["h2.nic0"], t_during, 1) / value_at(nic["h2.nic1"], t_during, 1), 1.0, 0.02);
}

// --- Incident 2: stale flow table (SkeletonHunter) -------------------------

TEST(IncidentStaleFlowTable, OverlayRttGoesFrom16To120usAbout90sAfterOnsetUnderlayStaysClean) {
  // h2.nic3 -> h1.nic3 (the seed's two endpoints, across the spine) overlay
  // and underlay every 4 s (one probe takes its source RNIC 2 s); every
  // other RNIC probes the stale one's overlay too, enough pings to measure a
  // loss rate near 0.05%.
  RecorderPlan plan;
  plan.probe_every = 4 * sim::kSecond;
  plan.probes = {{"h2.nic3", "h1.nic3", true}, {"h2.nic3", "h1.nic3", false}};
  for (int h = 0; h < 4; ++h)
    for (int k = 0; k < 8; ++k)
      if (!(h == 1 && k == 3) && !(h == 2 && k == 3))
        plan.probes.push_back({"h" + std::to_string(h) + ".nic" + std::to_string(k), "h1.nic3", true});
  const IncidentRun run = run_incident("stale-flow-table.yaml", plan);
  const double onset = 120, end = 420;

  std::vector<double> overlay_before, overlay_during, overlay_after, underlay_before, underlay_during;
  double first_slow = INFINITY, last_fast_in_window = 0;
  long lost_trains = 0, trains = 0, early_trains = 0, early_lost = 0;
  for (const json& p : run.log["probe"]) {
    const double sent = p[0].get<double>() / 1e9;
    const bool pair = p[1] == "h2.nic3" && p[2] == "h1.nic3";
    const bool overlay = p[3].get<bool>(), lost = p[5].get<bool>();
    const double rtt_us = p[4].get<double>() / 1e3;
    if (overlay && sent >= onset + 100 && sent + 2 < end) {  // the slow path's loss, once it is active
      ++trains;
      lost_trains += lost ? 1 : 0;
    }
    if (overlay && sent >= onset && sent < onset + 90 * (1 - kBand)) {  // still on the fast path
      ++early_trains;
      early_lost += lost ? 1 : 0;
    }
    if (!pair) continue;
    if (!overlay) {
      EXPECT_FALSE(lost) << "underlay probe lost at " << sent << " s";
      (sent < onset ? underlay_before : underlay_during).push_back(rtt_us);
      continue;
    }
    if (lost) continue;
    if (sent < onset)
      overlay_before.push_back(rtt_us);
    else if (sent >= onset + 100 && sent + 2 < end)
      overlay_during.push_back(rtt_us);
    else if (sent >= end)
      overlay_after.push_back(rtt_us);
    if (sent >= onset && sent < end) {
      if (rtt_us > 60)
        first_slow = std::min(first_slow, sent);
      else
        last_fast_in_window = std::max(last_fast_in_window, sent);
    }
  }
  const double per_ping = 1 - std::pow(1 - static_cast<double>(lost_trains) / std::max(1L, trains), 1.0 / 20);
  std::printf(
      "stale-flow-table: overlay RTT %.0f us -> %.0f us (seed 16 -> 120 us), %.0f s after onset (seed ~90 s); "
      "underlay %.0f us -> %.0f us; loss %.3f%% (seed < 0.1%%)\n",
      median(overlay_before), median(overlay_during), first_slow - onset, median(underlay_before),
      median(underlay_during), 100 * per_ping);
  EXPECT_NEAR(median(overlay_before), 16, kBand * 16);
  EXPECT_NEAR(median(overlay_during), 120, kBand * 120);
  EXPECT_NEAR(median(overlay_after), 16, kBand * 16);
  // The rise comes ~90 s after the onset, not at it.
  EXPECT_NEAR(first_slow - onset, 90, kBand * 90);
  EXPECT_GT(last_fast_in_window - onset, 90 * (1 - kBand));
  // Underlay probes between the same RNICs see nothing.
  EXPECT_FALSE(underlay_during.empty());
  EXPECT_EQ(median(underlay_during), median(underlay_before));
  EXPECT_EQ(*std::max_element(underlay_during.begin(), underlay_during.end()), median(underlay_before));
  // Loss is there but under 0.1% per packet (a train is lost if any ping is).
  ASSERT_GT(trains, 1000);
  EXPECT_GT(per_ping, 0.0);
  EXPECT_LT(per_ping, 0.001);
  // Before the entries are invalidated nothing is lost: at the slow path's
  // rate ~1% of these trains would be.
  ASSERT_GT(early_trains, 400);
  EXPECT_EQ(early_lost, 0);
  expect_no_alarm(run);
}

// The stale flow table slows the job's traffic without queueing it anywhere:
// the slow path is in the RNIC, not the switches.
TEST(IncidentStaleFlowTable, SwitchQueuesStayFlat) {
  const IncidentRun run = run_incident("stale-flow-table.yaml", {});
  expect_switch_queues_flat(run, 120, 420);
}

// --- Incident 3: CPU contention on a single node (Falcon) ------------------

TEST(IncidentCpuContention, UpTo21_6PercentSlowerAndAllFourGpusDropTogether) {
  const IncidentRun run = run_incident("cpu-contention-single-node.yaml", {});
  for (const double onset : {22.0 * 60, 55.0 * 60}) {
    const double end = onset + 600;
    const double before = step_s(run, onset - 300, onset), during = step_s(run, onset, end);
    std::printf("cpu-contention: episode at %.0f min: step %.3f s -> %.3f s, throughput -%.1f%% (seed up to -21.6%%)\n",
                onset / 60, before, during, 100 * (1 - before / during));
    EXPECT_NEAR(1 - before / during, 0.216, kBand * 0.216) << "episode at " << onset << " s";
    EXPECT_NEAR(step_s(run, end, end + 300), before, 1e-9);  // back to normal

    // All four GPUs' SM utilization drops at one and the same moment; their
    // clocks stay where they were (the GPUs are not slower).
    std::vector<double> drops;
    for (int g = 0; g < 4; ++g) {
      const json& gpu = run.log["gpu"]["h0.gpu" + std::to_string(g)];
      const double sm_before = value_at(gpu, onset - 5, 1);
      EXPECT_LT(value_at(gpu, onset + 5, 1), sm_before * (1 - 0.216 * (1 - kBand)));
      EXPECT_EQ(value_at(gpu, onset + 5, 2), value_at(gpu, onset - 5, 2));
      drops.push_back(first_below(gpu, onset - 5, 1, sm_before));
    }
    EXPECT_EQ(drops[0], drops[1]);
    EXPECT_EQ(drops[0], drops[2]);
    EXPECT_EQ(drops[0], drops[3]);
    EXPECT_NEAR(drops[0], onset, 1.0);
    EXPECT_EQ(value_at(run.log["cpu"]["h0.cpu"], onset + 5, 1), 1.0);  // the saturated CPU is the tell
  }
  expect_no_alarm(run);
}

// A GEMM benchmark on the paused job runs as fast under CPU contention as
// before it: the GPUs are not slower, which is how the seed ruled them out.
TEST(IncidentCpuContention, GemmBenchmarkIsNormal) {
  RecorderPlan plan;
  plan.gemm_at = {15 * 60 * sim::kSecond, 27 * 60 * sim::kSecond};  // before and inside the first episode
  const IncidentRun run = run_incident("cpu-contention-single-node.yaml", plan);
  // The GEMM benchmark on the paused job is as fast during contention as before.
  ASSERT_TRUE(run.log.contains("benchmark")) << "no benchmark results";
  std::vector<double> before, during;
  for (const json& b : run.log["benchmark"])
    (b[0].get<double>() < ns(22 * 60) ? before : during).push_back(b[3].get<double>());
  ASSERT_EQ(before.size(), 4u);
  ASSERT_EQ(during.size(), 4u);
  std::printf("cpu-contention: GEMM benchmark %.1f ms before, %.1f ms during contention\n", median(before) / 1e6,
              median(during) / 1e6);
  EXPECT_NEAR(median(during) / median(before), 1.0, 0.02);
}

// --- Incident 4: one GPU 20% slower and hot (Falcon) -----------------------

TEST(IncidentHotSlowGpu, Gpu0TwentyPercentSlowerAndNear70C) {
  RecorderPlan plan;
  plan.gemm_at = {5 * 60 * sim::kSecond};
  const IncidentRun run = run_incident("hot-slow-gpu.yaml", plan);
  const double end = 600;
  // Profiling's view: GPU0's compute per step against its peers'.
  const json& compute = run.log["compute"];
  const double gpu0 = value_at(compute["h0.gpu0"], 300, 1), gpu1 = value_at(compute["h0.gpu1"], 300, 1);
  EXPECT_NEAR(1 - gpu1 / gpu0, 0.20, kBand * 0.20);
  EXPECT_NEAR(value_at(compute["h0.gpu0"], 900, 1), gpu1, 1.0);  // alike once the fault is over

  const json& gpus = run.log["gpu"];
  std::printf("hot-slow-gpu: GPU0 %.1f%% slower than its peers (seed 20%%), %.0f C (seed ~70 C), peers %.0f C\n",
              100 * (1 - gpu1 / gpu0), value_at(gpus["h0.gpu0"], 540, 3), value_at(gpus["h0.gpu1"], 540, 3));
  EXPECT_NEAR(value_at(gpus["h0.gpu0"], 540, 3), 70, kBand * 70);
  for (int g = 1; g < 4; ++g) EXPECT_LT(value_at(gpus["h0.gpu" + std::to_string(g)], 540, 3), 60);
  EXPECT_LT(value_at(gpus["h0.gpu0"], 1140, 3), 60);  // it cools once the throttle ends
  EXPECT_NEAR(value_at(gpus["h0.gpu0"], 300, 2), 0.8 * value_at(gpus["h0.gpu1"], 300, 2), 1.0);
  // Its peers wait for it at every step: their SM utilization is down by the
  // same 20% while the throttle lasts and back once it ends.
  for (int g = 1; g < 4; ++g) {
    const json& gpu = gpus["h0.gpu" + std::to_string(g)];
    EXPECT_NEAR(value_at(gpu, 300, 1) / value_at(gpu, 900, 1), 0.8, kBand * 0.2);
  }
  EXPECT_GT(value_at(gpus["h0.gpu0"], 300, 1), value_at(gpus["h0.gpu1"], 300, 1));

  // Unlike CPU contention, the GEMM benchmark finds this GPU slow.
  ASSERT_TRUE(run.log.contains("benchmark")) << "no benchmark results";
  double gemm0 = 0, gemm1 = 0;
  for (const json& b : run.log["benchmark"]) {
    if (b[2] == "h0.gpu0") gemm0 = b[3].get<double>();
    if (b[2] == "h0.gpu1") gemm1 = b[3].get<double>();
  }
  std::printf("hot-slow-gpu: GEMM %.1f ms on GPU0, %.1f ms on GPU1\n", gemm0 / 1e6, gemm1 / 1e6);
  EXPECT_NEAR(1 - gemm1 / gemm0, 0.20, kBand * 0.20);

  // The synchronous job runs at GPU0's pace for the first 10 minutes.
  const double during = step_s(run, 0, end), after = step_s(run, end, 1200);
  EXPECT_NEAR(during / after, 1 / 0.8, kBand * 0.25);
  expect_no_alarm(run);
}

// --- What `gauntlet run` prints --------------------------------------------

// The run's stdout carries the incident's figure: the step before and
// during the fault window.
TEST(IncidentRunOutput, NicDownPrintsTheStepBeforeAndDuringTheFault) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gauntlet-incidents-a-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The seed case's 8.4 s step is its clean fleet's (on the realistic one
  // the job waits for its slowest GPU).
  {
    std::ifstream shipped(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/incidents/nic-down-moe.yaml");
    std::ofstream(dir / "nic-down-moe.yaml") << shipped.rdbuf() << "\nbackground: none\n";
  }
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet run " +
                              (dir / "nic-down-moe.yaml").string() + " --no-progress --out " + (dir / "out").string() +
                              " >" + (dir / "stdout").string() + " 2>/dev/null </dev/null";
  const int status = std::system(command.c_str());
  std::ifstream in(dir / "stdout");
  std::stringstream out;
  out << in.rdbuf();
  fs::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  EXPECT_NE(out.str().find("f1 nic_down h3.nic7 240.0-600.0 s: before 8.400 s, during 8.691 s (+3.5%)"),
            std::string::npos)
      << out.str();
}

}  // namespace
