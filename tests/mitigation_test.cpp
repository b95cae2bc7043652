// isolate-restart: a detector's alerts drive isolation in a run of its own,
// and the iterations it saves follow from detection latency, restart cost
// and the work lost since the last checkpoint. Under `none`, a detector that
// pauses training watches a run of its own and leaves the others' alone.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

namespace fs = std::filesystem;

nlohmann::json run(const std::string& scenario, const fs::path& out, const std::string& options = "") {
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet run " + scenario + " --out " +
                              out.string() + " " + options + " >/dev/null 2>&1 </dev/null";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  std::ifstream in(out / "summary.json");
  return nlohmann::json::parse(in);
}

TEST(IsolateRestart, FastLocalizationSavesWhatTheWatchdogLoses) {
  const fs::path out = fs::temp_directory_path() / ("gauntlet-mitigation-" + std::to_string(::getpid()));
  const nlohmann::json s = run("scenarios/gpu-fail-isolate.yaml", out);
  fs::remove_all(out);
  const double fault_free = s["iterations"]["fault_free"].get<double>();
  const double no_detector = s["iterations"]["no_detector"].get<double>();
  const auto& c4d = s["detectors"]["c4d"];
  const auto& timeout = s["detectors"]["timeout"];
  const double iteration_s = 7200.0 / fault_free;  // fault-free iterations are all alike

  // The status quo: the watchdog's 30 minutes, the 5-minute restart and up
  // to one checkpoint interval (10 minutes) of rolled-back work.
  const double status_quo_s = (fault_free - no_detector) * iteration_s;
  EXPECT_GE(status_quo_s, 1800 + 300 - 2 * iteration_s);
  EXPECT_LE(status_quo_s, 1800 + 300 + 600 + 2 * iteration_s);
  // The timeout detector's isolation comes after the watchdog already
  // restarted the job elsewhere: it saves nothing and costs nothing.
  EXPECT_EQ(timeout["lost_iterations"].get<double>(), fault_free - no_detector);

  // c4d names the GPU within seconds; the job restarts on a spare.
  const double latency = c4d["detection_latency_s"]["p50"].get<double>();
  EXPECT_LT(latency, 60);
  EXPECT_EQ(c4d["localization_top1"].get<double>(), 1.0);
  EXPECT_EQ(c4d["false_isolations"].get<int>(), 0);
  const double c4d_lost_s = c4d["lost_iterations"].get<double>() * iteration_s;
  EXPECT_GE(c4d_lost_s, latency + 300 - 2 * iteration_s);
  EXPECT_LE(c4d_lost_s, latency + 300 + 600 + 2 * iteration_s);
  EXPECT_LT(c4d["lost_iterations"].get<double>(), 0.5 * timeout["lost_iterations"].get<double>());
}

std::string alerts_of(const fs::path& out, const std::string& detector) {
  std::ifstream in(out / "alerts.jsonl");
  std::string line, text;
  while (std::getline(in, line))
    if (nlohmann::json::parse(line)["detector"] == detector) text += line + "\n";
  return text;
}

TEST(NoMitigation, BenchmarkPausesDoNotShiftTheOtherDetectorsRun) {
  const fs::path base = fs::temp_directory_path() / ("gauntlet-shared-" + std::to_string(::getpid()));
  // On the clean fleet: falcon's benchmark pauses cost whole iterations
  // there; the realistic fleet's slower pace can hide them in the rounding.
  const std::string scenario = (base / "gpu-throttle.yaml").string();
  fs::create_directories(base);
  std::ofstream(scenario) << std::ifstream("scenarios/faults/gpu-throttle.yaml").rdbuf() << "\nbackground: none\n";
  const nlohmann::json both = run(scenario, base / "both", "--detectors falcon,c4d");
  const nlohmann::json c4d = run(scenario, base / "c4d", "--detectors c4d");
  const nlohmann::json falcon = run(scenario, base / "falcon", "--detectors falcon");
  const std::string c4d_alone = alerts_of(base / "c4d", "c4d");
  const std::string c4d_beside_falcon = alerts_of(base / "both", "c4d");
  const std::string falcon_alone = alerts_of(base / "falcon", "falcon");
  const std::string falcon_beside_c4d = alerts_of(base / "both", "falcon");
  fs::remove_all(base);

  // falcon's GEMM and allreduce benchmarks paused training in its run...
  ASSERT_GT(falcon["detectors"]["falcon"]["benchmark_pause_s"].get<double>(), 0);
  // ...yet c4d, beside it, sees exactly the run it sees alone, and each
  // detector's losses are those of its own run.
  ASSERT_FALSE(c4d_alone.empty());
  EXPECT_EQ(c4d_beside_falcon, c4d_alone);
  EXPECT_EQ(falcon_beside_c4d, falcon_alone);
  EXPECT_EQ(both["detectors"]["c4d"]["lost_iterations"], c4d["detectors"]["c4d"]["lost_iterations"]);
  EXPECT_EQ(both["detectors"]["falcon"]["lost_iterations"], falcon["detectors"]["falcon"]["lost_iterations"]);
  EXPECT_GT(both["detectors"]["falcon"]["lost_iterations"].get<double>(),
            both["detectors"]["c4d"]["lost_iterations"].get<double>());
}

}  // namespace
