// trace.json of a run under isolate-restart: one Perfetto process per
// simulated run, each detector's run with the alerts and isolations that
// summary.json and alerts.jsonl report, the status quo run with none.
#include <algorithm>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "harness/detectors/registry.hpp"
#include "harness/report/run_report.hpp"
#include "harness/report/run_view.hpp"
#include "harness/report/trace.hpp"
#include "harness/scenario/loader.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json read_json(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

struct TraceProcess {
  std::string name;
  std::set<std::string> tracks;
  std::uint64_t iterations = 0;
  int faults = 0;
  std::vector<double> alert_times_s;
  std::vector<json> actions;  // {time_s, action, components}
  int collective_slices = 0;
};

std::map<int, TraceProcess> processes_of(const json& trace) {
  std::map<int, TraceProcess> out;
  for (const json& e : trace["traceEvents"]) {
    TraceProcess& p = out[e["pid"].get<int>()];
    if (e["ph"] == "M") {
      if (e["name"] == "process_name") p.name = e["args"]["name"];
      if (e["name"] == "thread_name") p.tracks.insert(e["args"]["name"].get<std::string>());
      continue;
    }
    const std::string category = e["cat"];
    if (category == "iteration") p.iterations += 1;
    if (category == "steady") p.iterations += e["args"]["count"].get<std::uint64_t>();
    if (category == "fault") ++p.faults;
    if (category == "alert") p.alert_times_s.push_back(e["ts"].get<double>() / 1e6);
    if (category == "mitigation")
      p.actions.push_back({{"time_s", e["ts"].get<double>() / 1e6},
                           {"action", e["args"]["action"]},
                           {"components", e["args"]["components"]}});
    if (category == "collective") ++p.collective_slices;
  }
  return out;
}

TEST(TraceRuns, OneProcessPerRunWithEachDetectorsAlertsAndActions) {
  const Scenario scenario =
      load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/gpu-fail-isolate.yaml", builtin_detectors());
  ASSERT_EQ(scenario.mitigation, "isolate-restart");
  const RunReport report = run_scenario(scenario, builtin_detectors(), RunOptions{});
  const fs::path dir = fs::temp_directory_path() / ("gauntlet-trace-test-" + std::to_string(::getpid()));
  write_run_results(report, ClaimedFolder::claim(dir));
  const json summary = read_json(dir / "summary.json");
  const json trace = read_json(dir / "trace.json");
  std::map<std::string, std::vector<double>> reported_alerts;
  {
    std::ifstream in(dir / "alerts.jsonl");
    for (std::string line; std::getline(in, line);) {
      const json a = json::parse(line);
      reported_alerts[a["detector"]].push_back(a["time_s"]);
    }
  }
  fs::remove_all(dir);

  std::map<std::string, TraceProcess> by_name;
  for (const auto& [pid, p] : processes_of(trace)) by_name[p.name] = p;
  const std::string status_quo = "faulty run, status quo (no detector)";
  const std::string fault_free = "fault-free run";
  auto own = [](const std::string& d) { return "faulty run watched by " + d + " alone (mitigation: isolate-restart)"; };
  ASSERT_EQ(by_name.size(), 4u);  // status quo, timeout's, c4d's, fault-free
  ASSERT_TRUE(by_name.count(status_quo) && by_name.count(fault_free) && by_name.count(own("timeout")) &&
              by_name.count(own("c4d")));

  // Each run's iterations add up to what summary.json counts for it.
  const double fault_free_iterations = summary["iterations"]["fault_free"];
  EXPECT_EQ(by_name[fault_free].iterations, fault_free_iterations);
  EXPECT_EQ(by_name[fault_free].faults, 0);
  EXPECT_EQ(by_name[status_quo].iterations, summary["iterations"]["no_detector"].get<std::uint64_t>());
  EXPECT_EQ(by_name[status_quo].faults, 1);
  // The status quo run has no detector and no policy acting.
  EXPECT_TRUE(by_name[status_quo].alert_times_s.empty());
  EXPECT_TRUE(by_name[status_quo].actions.empty());
  EXPECT_GT(by_name[status_quo].collective_slices, 0);

  for (const std::string d : {"timeout", "c4d"}) {
    SCOPED_TRACE(d);
    const TraceProcess& run = by_name[own(d)];
    const json& reported = summary["detectors"][d];
    EXPECT_EQ(static_cast<double>(run.iterations), fault_free_iterations - reported["lost_iterations"].get<double>());
    EXPECT_EQ(run.faults, 1);
    EXPECT_TRUE(run.tracks.count("alerts: " + d));
    EXPECT_EQ(run.alert_times_s, reported_alerts[d]);
    EXPECT_EQ(json(run.actions), reported["mitigation_actions"]);
    EXPECT_GT(run.collective_slices, 0);                    // own runs are sampled too
    EXPECT_TRUE(run.tracks.count("collectives: h9.gpu4"));  // the failed GPU's rank is among them
  }
  // C4D names the failed GPU 20 s after it fails and the policy isolates it
  // then; the run then loses fewer iterations than the one timeout watched.
  const std::vector<json>& c4d_actions = by_name[own("c4d")].actions;
  ASSERT_EQ(c4d_actions.size(), 1u);
  EXPECT_EQ(c4d_actions[0]["action"], "isolate");
  EXPECT_EQ(c4d_actions[0]["components"], json::array({"h9.gpu4"}));
  EXPECT_DOUBLE_EQ(c4d_actions[0]["time_s"].get<double>(), 1220.0);
  EXPECT_GT(by_name[own("c4d")].iterations, by_name[own("timeout")].iterations);
  EXPECT_GT(by_name[own("c4d")].iterations, by_name[status_quo].iterations);
}

// Short spans are drawn iteration by iteration only while a run has few of
// them: a month checkpointing every 5 minutes is ~8,000 spans of ~38.
TEST(TraceRuns, ManyShortSpansAreOneSliceEach) {
  auto spans = [](std::uint64_t n) {
    TraceRun run;
    run.name = "faulty run";
    for (std::uint64_t s = 0; s < n; ++s)
      run.timeline.push_back({s * 38, 38, static_cast<sim::Nanos>(s) * 320 * sim::kSecond, 8 * sim::kSecond});
    return json::parse(trace_json({run}, {}, 3600.0 * 24 * 30));
  };
  auto slices = [](const json& trace) {
    std::size_t n = 0;
    for (const json& e : trace["traceEvents"]) n += e["ph"] == "X" && (e["cat"] == "iteration" || e["cat"] == "steady");
    return n;
  };
  EXPECT_EQ(slices(spans(10)), 380u);  // drawn one by one
  const json month = spans(8000);
  EXPECT_EQ(slices(month), 8000u);                              // one per span
  EXPECT_EQ(processes_of(month).at(1).iterations, 8000u * 38);  // every iteration still counted
}

// With tenants sharing the cluster, each tenant's runs are in the trace:
// its job's iterations, its detectors' alerts, every fault of the cluster.
TEST(TraceRuns, EveryTenantsRunsWithTheirOwnIterations) {
  Scenario scenario = load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/multi-tenant/noisy-neighbour.yaml",
                                    builtin_detectors());
  scenario.detectors = {DetectorSpec{"c4d", {}, {}}};
  const RunReport report = run_scenario(scenario, builtin_detectors(), RunOptions{});
  const fs::path dir = fs::temp_directory_path() / ("gauntlet-trace-tenants-" + std::to_string(::getpid()));
  write_run_results(report, ClaimedFolder::claim(dir));
  const json summary = read_json(dir / "summary.json");
  const json trace = read_json(dir / "trace.json");
  // timeline.csv holds every job's iterations; read back, the first job's.
  std::map<std::string, std::uint64_t> rows;
  {
    std::ifstream in(dir / "timeline.csv");
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "job,iteration,start_s,end_s,duration_s");
    while (std::getline(in, line)) ++rows[line.substr(0, line.find(','))];
  }
  std::uint64_t read_back = 0;
  const RunView view = read_run_folder(dir);
  for (const models::IterationSpan& span : view.timeline) read_back += span.count;
  // The view is the victim's: its detectors' alerts, the faults that touched it.
  // (the healthy fleet's background conditions aside)
  EXPECT_EQ(std::count_if(view.faults.begin(), view.faults.end(), [](const FaultEpisode& f) { return !f.background; }),
            2);
  EXPECT_EQ(view.alerts.at("c4d").size(), static_cast<std::size_t>(summary["detectors"]["c4d"]["alerts"].get<int>()));
  fs::remove_all(dir);
  EXPECT_EQ(read_back, rows["victim"]);
  std::map<std::string, TraceProcess> by_name;
  for (const auto& [pid, p] : processes_of(trace)) by_name[p.name] = p;
  ASSERT_EQ(by_name.size(), 4u);  // per tenant: the run c4d watched, the fault-free run
  for (const std::string job : {"victim", "neighbour"}) {
    SCOPED_TRACE(job);
    const TraceProcess& faulty = by_name["job " + job + ": faulty run watched by c4d"];
    const TraceProcess& fault_free = by_name["job " + job + ": fault-free run"];
    const json& iterations = summary["tenants"][job]["iterations"];
    EXPECT_EQ(fault_free.iterations, iterations["fault_free"].get<std::uint64_t>());
    EXPECT_EQ(faulty.iterations, iterations["no_detector"].get<std::uint64_t>());
    EXPECT_EQ(rows[job], faulty.iterations);
    EXPECT_EQ(faulty.faults, 3);
    EXPECT_TRUE(faulty.tracks.count("alerts: c4d"));
  }
  EXPECT_NE(by_name["job victim: fault-free run"].iterations, by_name["job neighbour: fault-free run"].iterations);
}

}  // namespace
}  // namespace gauntlet::harness
