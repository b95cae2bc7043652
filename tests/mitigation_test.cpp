// isolate-restart: a detector's alerts drive isolation in a run of its own,
// and the iterations it saves follow from detection latency, restart cost
// and the work lost since the last checkpoint.
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

nlohmann::json run(const std::string& scenario, const fs::path& out) {
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet run " + scenario + " --out " +
                              out.string() + " >/dev/null 2>&1 </dev/null";
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

}  // namespace
