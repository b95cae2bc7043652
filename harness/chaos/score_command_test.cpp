// gauntlet score on hand-made real-run records: gauntlet alerts.jsonl and an
// Alertmanager webhook payload must score the same.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/chaos/alertmanager.hpp"
#include "sim/rfc3339.hpp"
#include "harness/cli/commands.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

class ScoreCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gauntlet-score-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // Two faults of a chaos run, Unix times as `gauntlet chaos` writes them.
    write("faults.jsonl",
          "{\"id\":\"f1\",\"type\":\"link_loss\",\"target\":\"h12.nic3\",\"start_s\":1700000000.0,\"end_s\":1700000060."
          "0}\n"
          "{\"id\":\"f2\",\"type\":\"gpu_throttle\",\"target\":\"h12.gpu7\",\"start_s\":1700000300.0,\"end_s\":"
          "1700000330.0}\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  nlohmann::json score(const std::string& alerts, std::vector<std::string> extra = {}) {
    cli::Args args = {"--truth", (dir_ / "faults.jsonl").string(), "--alerts", alerts,
                      "--out",   (dir_ / "out").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(cli::score_command(args), cli::kExitOk);
    std::ifstream in(dir_ / "out" / "summary.json");
    return nlohmann::json::parse(in);
  }

  fs::path dir_;
};

TEST_F(ScoreCommand, GauntletAlertsGiveLatencyAndLocalization) {
  std::string alerts = write("alerts.jsonl",
                             "{\"time_s\":1700000012.5,\"detector\":\"netmon\",\"kind\":\"network\",\"suspects\":[{"
                             "\"id\":\"h12.nic3\",\"score\":0.9}]}\n"
                             "{\"time_s\":1700000304.5,\"detector\":\"netmon\",\"kind\":\"fail_slow\",\"suspects\":[{"
                             "\"id\":\"h12.gpu3\",\"score\":0.8}]}\n"
                             "{\"time_s\":1700000500.0,\"detector\":\"netmon\",\"kind\":\"network\",\"suspects\":[{"
                             "\"id\":\"h12.nic0\",\"score\":0.5}]}\n");
  nlohmann::json d = score(alerts)["detectors"]["netmon"];
  EXPECT_DOUBLE_EQ(d["recall"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(d["detection_latency_s"]["mean"].get<double>(), (12.5 + 4.5) / 2);
  EXPECT_DOUBLE_EQ(d["localization_top1"].get<double>(), 0.5);  // the GPU alert named the wrong GPU
  EXPECT_EQ(d["false_alerts"].get<int>(), 1);                   // the alert long after both faults
  EXPECT_NEAR(d["precision"].get<double>(), 2.0 / 3, 1e-9);
}

TEST_F(ScoreCommand, AlertmanagerPayloadScoresTheSame) {
  // 1700000000 is 2023-11-14T22:13:20Z. The first alert is re-sent once, as
  // Alertmanager does while it fires; the second uses a +01:00 offset.
  std::string payload = R"({"version":"4","status":"firing","receiver":"gauntlet","alerts":[
    {"status":"firing","labels":{"alertname":"RdmaLoss","node":"h12.nic3","severity":"page"},
     "startsAt":"2023-11-14T22:13:32.5Z","fingerprint":"a1"},
    {"status":"firing","labels":{"alertname":"RdmaLoss","node":"h12.nic3"},
     "startsAt":"2023-11-14T22:13:32.5Z","fingerprint":"a1"},
    {"status":"firing","labels":{"alertname":"RdmaLoss","node":"h12.gpu3"},
     "startsAt":"2023-11-14T23:18:24.5+01:00","fingerprint":"b2"}]})";
  std::string alerts = write("am.json", payload);
  nlohmann::json d = score(alerts, {"--component-label", "node"})["detectors"]["RdmaLoss"];
  EXPECT_EQ(d["alerts"].get<int>(), 2);
  EXPECT_DOUBLE_EQ(d["detection_latency_s"]["mean"].get<double>(), (12.5 + 4.5) / 2);
  EXPECT_DOUBLE_EQ(d["localization_top1"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(d["recall"].get<double>(), 1.0);
}

TEST(Alertmanager, ParsesRfc3339AndRejectsGarbage) {
  EXPECT_DOUBLE_EQ(*sim::parse_rfc3339("2023-11-14T22:13:20Z"), 1700000000.0);
  EXPECT_DOUBLE_EQ(*sim::parse_rfc3339("2023-11-14T17:13:20.25-05:00"), 1700000000.25);
  EXPECT_FALSE(sim::parse_rfc3339("2023-11-14 22:13"));
  EXPECT_FALSE(sim::parse_rfc3339("yesterday"));
  EXPECT_THROW(parse_alertmanager(R"({"alerts":[{"labels":{},"startsAt":"soon"}]})", "x.json", {}), std::exception);
}

TEST_F(ScoreCommand, BadInputExitsTwo) {
  std::string alerts = write("bad.jsonl", "{\"time_s\": \"later\"}\n");
  EXPECT_EQ(cli::score_command({"--truth", (dir_ / "faults.jsonl").string(), "--alerts", alerts}), cli::kExitBadInput);
  EXPECT_EQ(cli::score_command({"--alerts", alerts}), cli::kExitBadInput);
}

// A chaos run's truth as `gauntlet chaos` now writes it: seconds since the
// run's start, and the start on the wall clock.
constexpr const char* kChaosTruth =
    "{\"id\":\"f1\",\"type\":\"link_loss\",\"target\":\"h12.nic3\",\"start_s\":2.0,\"end_s\":62.0,\"t0_unix_s\":"
    "1700000000.0}\n"
    "{\"id\":\"f2\",\"type\":\"gpu_throttle\",\"target\":\"h12.gpu7\",\"start_s\":300.0,\"end_s\":330.0,\"t0_unix_s\":"
    "1700000000.0}\n";

TEST_F(ScoreCommand, AlertmanagerWallClockAlignsWithAChaosRunsStart) {
  write("faults.jsonl", kChaosTruth);
  // By hand: f1 starts at 22:13:22Z (t0 + 2 s); its alert at 22:13:49.5Z is
  // 27.5 s late. f2 starts at 22:18:20Z; its alert at 22:18:26Z is 6 s late.
  std::string payload = R"({"alerts":[
    {"labels":{"alertname":"NodeNet","component":"h12.nic3"},"startsAt":"2023-11-14T22:13:49.5Z"},
    {"labels":{"alertname":"NodeNet","component":"h12.gpu7"},"startsAt":"2023-11-14T22:18:26Z"}]})";
  nlohmann::json summary = score(write("am.json", payload));
  EXPECT_DOUBLE_EQ(summary["t0_unix_s"].get<double>(), 1700000000.0);
  const nlohmann::json& d = summary["detectors"]["NodeNet"];
  EXPECT_DOUBLE_EQ(d["detection_latency_s"]["mean"].get<double>(), (27.5 + 6.0) / 2);
  EXPECT_DOUBLE_EQ(d["detection_latency_s"]["p95"].get<double>(), 27.5);
  EXPECT_DOUBLE_EQ(d["localization_top1"].get<double>(), 1.0);
  EXPECT_EQ(d["false_alerts"].get<int>(), 0);
  EXPECT_TRUE(d["lost_iterations"].is_null());  // no counterfactual for a real run
}

TEST_F(ScoreCommand, T0GivesTheOriginOfOtherTruthFiles) {
  // A truth file without t0_unix_s (a simulated run's): --t0 says where its 0 was.
  write("faults.jsonl",
        "{\"id\":\"f1\",\"type\":\"link_loss\",\"target\":\"h12.nic3\",\"start_s\":600,\"end_s\":900}\n");
  const std::string am =
      write("am.json",
            R"({"alerts":[{"labels":{"alertname":"x","component":"h12.nic3"},"startsAt":"2023-11-14T22:23:50Z"}]})");
  // Without an origin the two time bases cannot be compared: refused, not scored.
  EXPECT_EQ(cli::score_command({"--truth", (dir_ / "faults.jsonl").string(), "--alerts", am}), cli::kExitBadInput);
  nlohmann::json d = score(am, {"--t0", "2023-11-14T22:13:20Z"})["detectors"]["x"];
  EXPECT_DOUBLE_EQ(d["detection_latency_s"]["p50"].get<double>(), 30.0);  // 22:23:50 - (22:13:20 + 600 s)
  d = score(am, {"--t0", "1700000000"})["detectors"]["x"];
  EXPECT_DOUBLE_EQ(d["detection_latency_s"]["p50"].get<double>(), 30.0);
}

TEST_F(ScoreCommand, ATimeBaseMismatchIsReportedNotScored) {
  write("faults.jsonl", kChaosTruth);
  // Alerts of the day before: hours away from every fault.
  const std::string am =
      write("am.json",
            R"({"alerts":[{"labels":{"alertname":"x","component":"h12.nic3"},"startsAt":"2023-11-13T22:13:30Z"}]})");
  testing::internal::CaptureStderr();
  EXPECT_EQ(cli::score_command(
                {"--truth", (dir_ / "faults.jsonl").string(), "--alerts", am, "--out", (dir_ / "out").string()}),
            cli::kExitBadInput);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("time bases differ"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "summary.json"));
}

TEST_F(ScoreCommand, UnknownAndMissingComponentsAreReportedWithTheirLine) {
  write("faults.jsonl", kChaosTruth);
  const std::string plan = write("plan.yaml", R"(name: canary
host: h12
map:
  interfaces: {eth3: h12.nic3}
  gpus: {"7": h12.gpu7}
safety:
  allow: [h12.nic3, h12.gpu7]
  max_duration: 10m
faults:
  - {type: link_loss, target: h12.nic3, at: 0s, duration: 60s, rate: 0.01}
)");
  const std::string alerts = write(
      "alerts.jsonl",
      "{\"time_s\":10,\"detector\":\"d\",\"kind\":\"network\",\"suspects\":[{\"id\":\"h999.gpu0\",\"score\":1}]}\n"
      "{\"time_s\":20,\"detector\":\"d\",\"kind\":\"network\",\"suspects\":[]}\n"
      "{\"time_s\":305,\"detector\":\"d\",\"kind\":\"fail_slow\",\"suspects\":[{\"id\":\"h12.gpu7\",\"score\":1}]}\n");
  testing::internal::CaptureStderr();
  nlohmann::json summary = score(alerts, {"--cluster", plan});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("alerts.jsonl:1: suspect 'h999.gpu0' is not a component of"), std::string::npos) << err;
  EXPECT_NE(err.find("name no component"), std::string::npos) << err;
  EXPECT_NE(err.find("alerts.jsonl:2"), std::string::npos) << err;
  EXPECT_EQ(summary["notes"].size(), 2u);
  const nlohmann::json& d = summary["detectors"]["d"];
  EXPECT_EQ(d["false_alerts"].get<int>(), 1);  // the alert naming a component the cluster lacks
  EXPECT_DOUBLE_EQ(d["detection_latency_s"]["p50"].get<double>(), 5.0);  // f2 by line 3; f1 by line 2, 18 s
}

TEST_F(ScoreCommand, UnreadableOrInconsistentInputExitsTwo) {
  const std::string alerts = write("alerts.jsonl", "");
  const std::string truth = (dir_ / "faults.jsonl").string();
  auto exit_code = [&](const cli::Args& args) {
    testing::internal::CaptureStderr();
    const int code = cli::score_command(args);
    testing::internal::GetCapturedStderr();
    return code;
  };
  EXPECT_EQ(exit_code({"--truth", dir_.string(), "--alerts", alerts}), cli::kExitBadInput);  // a folder
  EXPECT_EQ(exit_code({"--truth", "/dev/zero", "--alerts", alerts}), cli::kExitBadInput);    // not a file
  EXPECT_EQ(exit_code({"--truth", truth, "--alerts", "/dev/zero"}), cli::kExitBadInput);
  EXPECT_EQ(exit_code({"--truth", truth, "--alerts", alerts, "--grace", "nan"}), cli::kExitBadInput);
  EXPECT_EQ(exit_code({"--truth", truth, "--alerts", alerts, "--grace", "-1"}), cli::kExitBadInput);
  EXPECT_EQ(exit_code({"--truth", write("empty.jsonl", "\n"), "--alerts", alerts}), cli::kExitBadInput);
  write("dup.jsonl", "{\"id\":\"f1\",\"type\":\"t\",\"start_s\":1}\n{\"id\":\"f1\",\"type\":\"t\",\"start_s\":9}\n");
  EXPECT_EQ(exit_code({"--truth", (dir_ / "dup.jsonl").string(), "--alerts", alerts}), cli::kExitBadInput);
  const std::string passwd = write(
      "passwd.jsonl",
      "{\"time_s\":1700000010,\"detector\":\"d\",\"kind\":\"network\",\"suspects\":[{\"id\":\"../../etc/passwd\"}]}\n");
  EXPECT_EQ(exit_code({"--truth", truth, "--alerts", passwd}), cli::kExitBadInput);
  const std::string twice =
      write("twice.json", R"({"alerts":[], "alerts":[{"labels":{},"startsAt":"2023-11-14T22:13:30Z"}]})");
  EXPECT_EQ(exit_code({"--truth", truth, "--alerts", twice}), cli::kExitBadInput);
  // A silent detector is fine: an empty alerts file scores nothing.
  EXPECT_EQ(exit_code({"--truth", truth, "--alerts", alerts}), cli::kExitOk);
}

TEST_F(ScoreCommand, PrintsTheRunTable) {
  const std::string alerts = write("alerts.jsonl",
                                   "{\"time_s\":1700000012.5,\"detector\":\"netmon\",\"kind\":\"network\",\"suspects\":"
                                   "[{\"id\":\"h12.nic3\",\"score\":0.9}]}\n");
  testing::internal::CaptureStdout();
  EXPECT_EQ(cli::score_command(
                {"--truth", (dir_ / "faults.jsonl").string(), "--alerts", alerts, "--out", (dir_ / "out").string()}),
            cli::kExitOk);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("detector       alerts false precision faults recall latency_p50"), std::string::npos) << out;
  // The host level credits the RNIC's host too; without the cluster's layout
  // there are no pods to judge.
  EXPECT_NE(
      out.find(
          "netmon              1     0      1.00    1/2   0.50       12.5s  1.00  1.00  1.00     -       1/2     0/0"),
      std::string::npos)
      << out;
}

}  // namespace
}  // namespace gauntlet::harness
