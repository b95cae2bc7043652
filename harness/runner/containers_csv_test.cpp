// containers.csv and the ContainerEvents detectors receive, from a run in
// which a GPU fails and the job restarts with a spare in its host's place.
#include "harness/runner/containers_csv.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <unistd.h>

#include "harness/detectors/registry.hpp"
#include "harness/runner/outputs.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::json;

// The job fills pod 0 (h0-h7); h8 and h9 are its spares. h3.gpu2 fails at
// 12m13s and is never repaired: the watchdog crashes the job 3 minutes
// later and it restarts 2 minutes after that.
constexpr const char* kScenario = R"(name: container-swap
seed: 3
duration: 25m
engine: flow
cluster: {spines: 2, leaves: 16, hosts: 16, gpus_per_host: 8, rnics_per_host: 8}
job:
  name: llm
  gpus: 64
  parallelism: {tp: 8, pp: 2, dp: 4, ep: 1}
  compute_per_iteration: 2s
  gradient_bytes: 1GB
  activation_bytes: 100MB
  microbatches: 4
  checkpoint_interval: 5m
  restart_cost: 2m
  collective_timeout: 3m
  spare_hosts: 2
faults:
  - {type: gpu_fail, target: h3.gpu2, at: 733s}
detectors: [container-watch]
)";

constexpr double kCrash_s = 12 * 60 + 13 + 3 * 60;
constexpr double kRestart_s = kCrash_s + 2 * 60;

// Writes down every ContainerEvent it receives, and whether batches hand
// them over in time order with the job's events.
class ContainerWatch : public Detector {
 public:
  explicit ContainerWatch(json* log) : log_(log) {}
  void observe(const telemetry::Batch& batch) override {
    for (const telemetry::Record& r : batch.records()) {
      if (!r.has_container()) continue;
      const telemetry::ContainerEvent& e = r.container();
      (*log_)["events"].push_back(
          {e.kind(), e.time_ns(), e.container(), e.host(), e.reason(), e.vfs_size(), e.DebugString()});
    }
  }

 private:
  json* log_;
};

struct SwapRun {
  SimulationOutcome outcome;
  json log;
};

SwapRun run() {
  const std::string text = sim::run_isolated([] {
    json log = json::object();
    DetectorRegistry registry = builtin_detectors();
    registry.add({"container-watch", "records container events", {}, [&log](const DetectorContext&) {
                    return std::make_unique<ContainerWatch>(&log);
                  }});
    const Scenario scenario = parse_scenario(kScenario, "container-swap.yaml", registry);
    const SimulationOutcome outcome = simulate(scenario, registry, SimulationRequest{});
    return json{{"outcome", outcome.to_json()}, {"log", log}}.dump();
  });
  const json j = json::parse(text);
  return {SimulationOutcome::from_json(j["outcome"].get<std::string>()), j["log"]};
}

const SwapRun& shared_run() {
  static const SwapRun r = run();
  return r;
}

std::vector<std::vector<std::string>> rows(const std::string& csv) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::size_t from = 0;
    for (std::size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
      cells.push_back(line.substr(from, comma - from));
    cells.push_back(line.substr(from));
    out.push_back(cells);
  }
  return out;
}

TEST(ContainersCsv, TheFailedHostsContainerStopsAtTheCrashAndItsNextIncarnationStartsOnASpare) {
  const SwapRun& r = shared_run();
  const auto table = rows(r.outcome.containers_csv);
  ASSERT_EQ(table.size(), 17u);  // header, 8 slots x 2 incarnations
  EXPECT_EQ(table[0], (std::vector<std::string>{"id", "host", "rnics", "start_s", "stop_s", "reason"}));
  std::map<std::string, std::vector<std::string>> by_id;
  for (std::size_t i = 1; i < table.size(); ++i) {
    ASSERT_EQ(table[i].size(), 6u);
    by_id[table[i][0]] = table[i];
  }
  const auto& failed = by_id.at("llm/c3.0");
  EXPECT_EQ(failed[1], "h3");
  EXPECT_EQ(failed[2], "h3.nic0 h3.nic1 h3.nic2 h3.nic3 h3.nic4 h3.nic5 h3.nic6 h3.nic7");
  EXPECT_DOUBLE_EQ(std::stod(failed[4]), kCrash_s);
  EXPECT_EQ(failed[5], "gpu_failed");
  const auto& spare = by_id.at("llm/c3.1");
  EXPECT_EQ(spare[1], "h8");
  EXPECT_DOUBLE_EQ(std::stod(spare[3]), kRestart_s);
  EXPECT_EQ(spare[4], "");  // still running when the run ends
  EXPECT_EQ(spare[5], "");
  for (int slot : {0, 1, 2, 4, 5, 6, 7}) {
    const auto& before = by_id.at("llm/c" + std::to_string(slot) + ".0");
    const auto& after = by_id.at("llm/c" + std::to_string(slot) + ".1");
    EXPECT_EQ(before[5], "restart");
    EXPECT_EQ(after[1], before[1]);
    EXPECT_DOUBLE_EQ(std::stod(after[3]), kRestart_s);
  }
}

TEST(ContainersCsv, DetectorsSeeEveryLifecycleEdgeAndNothingOfTheParallelLayout) {
  const SwapRun& r = shared_run();
  const json& events = r.log["events"];
  ASSERT_EQ(events.size(), 24u);  // 8 starts, 8 stops, 8 starts
  int starts_at_zero = 0, stops = 0, restarts = 0;
  for (const json& e : events) {
    const int kind = e[0].get<int>();
    const double t = static_cast<double>(e[1].get<long long>()) / 1e9;
    EXPECT_EQ(e[5].get<int>(), 8);  // one VF per RNIC
    if (kind == telemetry::ContainerEvent::START) (t == 0 ? starts_at_zero : restarts) += 1;
    if (kind == telemetry::ContainerEvent::STOP) {
      ++stops;
      EXPECT_DOUBLE_EQ(t, kCrash_s);
      EXPECT_EQ(e[4].get<std::string>(), e[3] == "h3" ? "gpu_failed" : "restart");
    }
    if (kind == telemetry::ContainerEvent::START && t > 0) {
      EXPECT_DOUBLE_EQ(t, kRestart_s);
    }
    const std::string text = e[6].get<std::string>();
    for (const char* leak : {"dp.", "pp.", "tp.", "rank", "communicator"})
      EXPECT_EQ(text.find(leak), std::string::npos) << text;
  }
  EXPECT_EQ(starts_at_zero, 8);
  EXPECT_EQ(stops, 8);
  EXPECT_EQ(restarts, 8);
}

TEST(ContainersCsv, IsWrittenWithTheRunsOtherFiles) {
  RunReport report;
  report.faulty.containers_csv = "id,host,rnics,start_s,stop_s,reason\nllm/c0.0,h0,h0.nic0,0.000000000,,\n";
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("containers-csv-" + std::to_string(::getpid()));
  write_run_outputs(report, ClaimedFolder::claim(out));
  std::ifstream in(out / "containers.csv");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), report.faulty.containers_csv);
  EXPECT_TRUE(std::filesystem::exists(out / "timeline.csv"));
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace gauntlet::harness
