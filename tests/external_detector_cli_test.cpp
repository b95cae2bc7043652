// `gauntlet run` with exec: detectors: the example detectors (C++ and the
// Python SDK's) are scored like built-in ones; detectors that crash, hang or
// write garbage are reported as failed while the run and the other
// detectors go on.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include "tests/gauntlet_cli_run.hpp"

namespace {

using namespace gauntlet::cli_test;

const std::string kExample = std::string(GAUNTLET_BINARY_DIR) + "/examples/external_detector/iteration-watch";

// The demo scenario with another detector list.
fs::path demo_with(const fs::path& dir, const std::string& detectors_yaml) {
  std::string text = slurp("scenarios/demo.yaml");
  const auto at = text.find("detectors:");
  const auto end = text.find('\n', at);
  text.replace(at, end - at, "detectors:\n" + detectors_yaml);
  const fs::path path = dir / "scenario.yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(ExecDetector, ExampleIsScoredAndLocalizesTheThrottledGpu) {
  const fs::path dir = scratch("example");
  RunResult r = gauntlet_run("scenarios/demo.yaml", dir, "--detectors falcon,exec:" + kExample);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto& d = r.summary["detectors"]["exec:" + kExample];
  EXPECT_EQ(d["status"], "ok");
  // The throttle, and h5.gpu2 rightly blamed for it. The lossy link's
  // go-back-N goodput (as the packet engine measured it, ACKs and NAKs lost
  // by their length) slows iterations 8.5%, under the example's 10% ratio.
  EXPECT_EQ(d["detected"], 1);
  EXPECT_EQ(d["localization_top1"], 1.0);
  EXPECT_EQ(d["false_alerts"], 0);
  // alerts.jsonl is one stream in time order, falcon's and the example's interleaved.
  std::istringstream lines(r.alerts);
  std::vector<double> times;
  for (std::string line; std::getline(lines, line);)
    times.push_back(nlohmann::json::parse(line)["time_s"].get<double>());
  EXPECT_GE(times.size(), 2u);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  // Both watch runs of their own; only falcon paused training for benchmarks.
  const auto trace = nlohmann::json::parse(slurp(dir / "result" / "trace.json"));
  std::vector<std::string> names;
  for (const auto& run : trace["otherData"]["runs"]) names.push_back(run["name"]);
  auto named = [&](const std::string& name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  EXPECT_TRUE(named("faulty run watched by falcon alone (it pauses training)"));
  EXPECT_TRUE(named("faulty run watched by exec:" + kExample + " alone (it may pause training; it ran no benchmark)"));
}

// From the command line alone: a detector whose command holds a comma
// (`--detectors` would split it), and runs under names of their own (`as:`).
TEST(ExecDetector, DetectorFlagKeepsCommasAndTakesAsNames) {
  const fs::path dir = scratch("detector-flag");
  const std::string with_comma = "exec:env GAUNTLET_TEST_LIST=a,b " + kExample;
  RunResult r =
      gauntlet_run("scenarios/demo.yaml", dir,
                   "--detectors timeout --detector '" + with_comma + "' --detector '{name: \"exec:" + kExample +
                       "\", as: watch}' --detector '{name: timeout, as: timeout-again}'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto& detectors = r.summary["detectors"];
  EXPECT_EQ(detectors.size(), 4u) << detectors.dump();
  EXPECT_EQ(detectors[with_comma]["status"], "ok");
  EXPECT_EQ(detectors[with_comma]["detected"], 1);
  EXPECT_EQ(detectors["watch"]["detected"], 1);
  EXPECT_EQ(detectors["timeout-again"]["alerts"], detectors["timeout"]["alerts"]);
  // The score table keeps its columns under the long name: every row's
  // alerts figure ends where the header's "alerts" does.
  std::istringstream lines(r.out);
  std::size_t alerts_end = std::string::npos;
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("detector ")) alerts_end = line.find("alerts") + 6;
    if (alerts_end == std::string::npos || line.starts_with("detector ")) continue;
    for (const char* name : {"timeout ", "watch ", "timeout-again ", "exec:env"}) {
      if (!line.starts_with(name)) continue;
      ++rows;
      EXPECT_NE(line[alerts_end - 1], ' ') << line;
      EXPECT_EQ(line[alerts_end], ' ') << line;
    }
  }
  EXPECT_EQ(rows, 4) << r.out;

  // One name twice is refused, at the flag's map.
  r = gauntlet_run("scenarios/demo.yaml", scratch("detector-flag-twice"),
                   "--detectors timeout --detector '{name: timeout}'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--detector:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("detector 'timeout' is listed twice"), std::string::npos) << r.err;
  r = gauntlet_run("scenarios/demo.yaml", scratch("detector-flag-bad"), "--detector '{name: timeout, as: \"a b\"}'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--detector:1:"), std::string::npos) << r.err;
}

TEST(ExecDetector, SameSeedGivesTheSameAlerts) {
  const fs::path a = scratch("det-a"), b = scratch("det-b");
  RunResult ra = gauntlet_run("scenarios/demo.yaml", a, "--seed 5 --detectors exec:" + kExample);
  RunResult rb = gauntlet_run("scenarios/demo.yaml", b, "--seed 5 --detectors exec:" + kExample);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  EXPECT_FALSE(ra.alerts.empty());
  EXPECT_EQ(ra.alerts, rb.alerts);
}

TEST(ExecDetector, CrashHangAndGarbageFailWhileTheOthersGoOn) {
  const fs::path dir = scratch("broken");
  const fs::path scenario = demo_with(dir,
                                      "  - falcon\n"
                                      "  - \"exec:sh -c 'read -r x; exit 3'\"\n"
                                      "  - {name: \"exec:sleep 60\", reply_timeout: 300ms}\n"
                                      "  - \"exec:yes garbage\"\n"
                                      "  - exec:" +
                                          kExample + "\n");
  RunResult r = gauntlet_run(scenario, dir, "--allow-detector-failure");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto& d = r.summary["detectors"];
  // It may be gone before or after its first batch is written: either way, reply 1.
  const std::string crashed = d["exec:sh -c 'read -r x; exit 3'"]["status"];
  EXPECT_EQ(crashed.rfind("failed: reply 1 (batch until 1s): ", 0), 0u) << crashed;
  EXPECT_TRUE(crashed.ends_with("exited with status 3")) << crashed;
  EXPECT_EQ(d["exec:sleep 60"]["status"], "failed: reply 1 (batch until 1s): no reply within 300ms");
  EXPECT_NE(d["exec:yes garbage"]["status"].get<std::string>().find("wrote text to stdout (\"garbage\\ngarbage"),
            std::string::npos);
  EXPECT_NE(r.err.find("detector exec:yes garbage failed"), std::string::npos) << r.err;
  // The built-in detector still found what it finds alone, and the healthy
  // external detector still ran.
  const fs::path alone_dir = scratch("falcon-alone");
  RunResult alone = gauntlet_run(demo_with(alone_dir, "  - falcon\n"), alone_dir);
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_GE(d["falcon"]["detected"].get<int>(), 1);
  EXPECT_EQ(d["falcon"]["detected"], alone.summary["detectors"]["falcon"]["detected"]);
  EXPECT_EQ(d["exec:" + kExample]["status"], "ok");
  EXPECT_EQ(d["exec:" + kExample]["detected"], 1);
  EXPECT_EQ(d["exec:sleep 60"]["alerts"], 0);
}

TEST(ExecDetector, CrashingDetectorFailsTheRunWithAFailedRow) {
  const fs::path dir = scratch("crash");
  const std::string crash = "exec:sh -c 'read -r x; exit 3'";
  RunResult r = gauntlet_run("scenarios/demo.yaml", dir, "--detectors \"falcon," + crash + "\"");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // The results are written all the same, the reason kept.
  const std::string status = r.summary["detectors"][crash]["status"];
  EXPECT_EQ(status.rfind("failed: reply 1 (batch until 1s): ", 0), 0u) << status;
  EXPECT_TRUE(status.ends_with("exited with status 3")) << status;
  EXPECT_NE(r.out.find(crash + "  FAILED: " + status.substr(8) + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nfalcon "), std::string::npos) << r.out;  // the others keep their rows
  EXPECT_NE(r.err.find("--allow-detector-failure"), std::string::npos) << r.err;
}

TEST(ExecDetector, ChildThatOutlivesTheDetectorDoesNotHangTheRun) {
  // The detector leaves a sleeper behind holding whatever it inherited; the
  // run must end when the detector does, and take the sleeper with it.
  const fs::path dir = scratch("orphan");
  const auto start = std::chrono::steady_clock::now();
  RunResult r =
      gauntlet_run("scenarios/demo.yaml", dir, "--detectors \"exec:sh -c 'sleep 127 & exec " + kExample + "'\"");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(wall, 60.0);
  EXPECT_EQ(r.summary["detectors"]["exec:sh -c 'sleep 127 & exec " + kExample + "'"]["status"], "ok");
  EXPECT_NE(std::system("pgrep -f '^sleep 127$' >/dev/null"), 0) << "the sleeper outlived the run";
}

#ifdef GAUNTLET_PYTHON
// exec: name of one of the Python SDK's example modules.
std::string python_example(const std::string& module, const std::string& args = "") {
  return std::string("exec:env PYTHONPATH=") + GAUNTLET_BINARY_DIR + "/python " + GAUNTLET_PYTHON +
         " -m gauntlet_detector.examples." + module + (args.empty() ? "" : " " + args);
}

std::string edited(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("no '" + from + "' in the scenario");
  return text.replace(at, from.size(), to);
}

TEST(PythonDetectors, ThresholdFindsTheThrottledGpu) {
  const fs::path dir = scratch("python-threshold");
  const std::string name = python_example("threshold", "1.1");
  RunResult r = gauntlet_run("scenarios/demo.yaml", dir, "--detectors '" + name + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto& d = r.summary["detectors"][name];
  EXPECT_EQ(d["status"], "ok") << r.err;
  EXPECT_EQ(d["detected"], 1);             // the throttle; the lossy link's 8.5% slowdown is under 10%
  EXPECT_EQ(d["localization_top1"], 1.0);  // h5.gpu2
  EXPECT_EQ(d["false_alerts"], 0);
  EXPECT_LE(d["detection_latency_s"]["p50"].get<double>(), 10.0);
}

// A detector author whose first python3 is a pyenv or conda interpreter
// without protobuf: a venv without the system's packages stands in for it.
// The README's command scores on the first try (the SDK finds Debian's
// python3-protobuf).
TEST(PythonDetectors, AnInterpreterWithoutProtobufStillScores) {
  const fs::path dir = scratch("python-no-protobuf");
  const fs::path venv = dir / "venv";
  const std::string make_venv =
      std::string(GAUNTLET_PYTHON) + " -m venv --without-pip " + venv.string() + " 2>/dev/null";
  if (std::system(make_venv.c_str()) != 0) GTEST_SKIP() << "no venv module (Debian: python3-venv)";
  const std::string python = (venv / "bin" / "python3").string();
  ASSERT_NE(std::system((python + " -c 'import google.protobuf' 2>/dev/null").c_str()), 0)
      << "the stand-in interpreter has protobuf of its own";
  const std::string name = std::string("exec:env PYTHONPATH=") + GAUNTLET_BINARY_DIR + "/python " + python +
                           " -m gauntlet_detector.examples.threshold 1.1";
  RunResult r = gauntlet_run("scenarios/demo.yaml", dir, "--detectors '" + name + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto& d = r.summary["detectors"][name];
  EXPECT_EQ(d["status"], "ok") << r.err;
  EXPECT_EQ(d["detected"], 1);  // as with Debian's interpreter (ThresholdFindsTheThrottledGpu)
}

TEST(PythonDetectors, LinkProbeNamesTheLossyLink) {
  // scenarios/faults/link-loss.yaml, shortened: 2% loss on leaf3~spine2 from 2 to 6 minutes.
  const fs::path dir = scratch("python-link-probe");
  std::string text = slurp("scenarios/faults/link-loss.yaml");
  text = edited(text, "duration: 40m", "duration: 8m");
  text = edited(text, "at: 10m, duration: 15m", "at: 2m, duration: 4m");
  const fs::path scenario = dir / "link-loss-short.yaml";
  std::ofstream(scenario) << text;
  const std::string name = python_example("link_probe");
  RunResult r = gauntlet_run(scenario, dir, "--detectors '" + name + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto& d = r.summary["detectors"][name];
  EXPECT_EQ(d["status"], "ok") << r.err;
  EXPECT_EQ(d["detected"], 1);
  EXPECT_EQ(d["localization_top1"], 1.0);  // leaf3~spine2
  EXPECT_EQ(d["false_alerts"], 0);
  // A probe round every 2 s, each probe a 2 s train: a lossy train is seen within seconds.
  EXPECT_LE(d["detection_latency_s"]["p50"].get<double>(), 10.0);
  EXPECT_GT(d["probes_sent"].get<long long>(), 0);
}
#endif

}  // namespace
