// gauntlet score on hand-made real-run records: gauntlet alerts.jsonl and an
// Alertmanager webhook payload must score the same.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/chaos/alertmanager.hpp"
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
          "{\"id\":\"f1\",\"type\":\"link_loss\",\"target\":\"h12.nic3\",\"start_s\":1700000000.0,\"end_s\":1700000060.0}\n"
          "{\"id\":\"f2\",\"type\":\"gpu_throttle\",\"target\":\"h12.gpu7\",\"start_s\":1700000300.0,\"end_s\":1700000330.0}\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  nlohmann::json score(const std::string& alerts, std::vector<std::string> extra = {}) {
    cli::Args args = {"--truth", (dir_ / "faults.jsonl").string(), "--alerts", alerts, "--out", (dir_ / "out").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(cli::score_command(args), cli::kExitOk);
    std::ifstream in(dir_ / "out" / "summary.json");
    return nlohmann::json::parse(in);
  }

  fs::path dir_;
};

TEST_F(ScoreCommand, GauntletAlertsGiveLatencyAndLocalization) {
  std::string alerts = write(
      "alerts.jsonl",
      "{\"time_s\":1700000012.5,\"detector\":\"netmon\",\"kind\":\"network\",\"suspects\":[{\"id\":\"h12.nic3\",\"score\":0.9}]}\n"
      "{\"time_s\":1700000304.5,\"detector\":\"netmon\",\"kind\":\"fail_slow\",\"suspects\":[{\"id\":\"h12.gpu3\",\"score\":0.8}]}\n"
      "{\"time_s\":1700000500.0,\"detector\":\"netmon\",\"kind\":\"network\",\"suspects\":[{\"id\":\"h12.nic0\",\"score\":0.5}]}\n");
  nlohmann::json d = score(alerts)["detectors"]["netmon"];
  EXPECT_DOUBLE_EQ(d["recall"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(d["detection_latency_s"]["mean"].get<double>(), (12.5 + 4.5) / 2);
  EXPECT_DOUBLE_EQ(d["localization_top1"].get<double>(), 0.5);  // the GPU alert named the wrong GPU
  EXPECT_EQ(d["false_alerts"].get<int>(), 1);                    // the alert long after both faults
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
  EXPECT_DOUBLE_EQ(*parse_rfc3339("2023-11-14T22:13:20Z"), 1700000000.0);
  EXPECT_DOUBLE_EQ(*parse_rfc3339("2023-11-14T17:13:20.25-05:00"), 1700000000.25);
  EXPECT_FALSE(parse_rfc3339("2023-11-14 22:13"));
  EXPECT_FALSE(parse_rfc3339("yesterday"));
  EXPECT_THROW(parse_alertmanager(R"({"alerts":[{"labels":{},"startsAt":"soon"}]})", "x.json", {}), std::exception);
}

TEST_F(ScoreCommand, BadInputExitsTwo) {
  std::string alerts = write("bad.jsonl", "{\"time_s\": \"later\"}\n");
  EXPECT_EQ(cli::score_command({"--truth", (dir_ / "faults.jsonl").string(), "--alerts", alerts}), cli::kExitBadInput);
  EXPECT_EQ(cli::score_command({"--alerts", alerts}), cli::kExitBadInput);
}

}  // namespace
}  // namespace gauntlet::harness
