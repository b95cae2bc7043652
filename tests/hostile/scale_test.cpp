// Inputs large enough that a quadratic path shows: each case took tens of
// CPU seconds or more on the build before, and must now either finish well
// inside a CPU-time bound or be refused at a stated limit (README's Limits
// table). The bounds are CPU time, so a loaded machine does not trip them,
// and several times what the case takes now: guards, not speed targets
// (those live in bench/).
#include <cstdio>
#include <string>

#include "tests/hostile/hostile.hpp"

namespace gauntlet::hostile {
namespace {

// Item 10: every alert was matched against every fault.
TEST(HostileScale, ScoreOf100000FaultsAnd100000AlertsIsNearLinear) {
  const fs::path dir = scratch("score-100k");
  std::string truth, alerts;
  for (int i = 0; i < 100000; ++i) {
    const std::string id = std::to_string(i);
    const std::string start = std::to_string(10 * i), end = std::to_string(10 * i + 5);
    truth += R"({"id":"f)" + id + R"(","type":"gpu_throttle","target":"h)" + std::to_string(i % 64) +
             R"(.gpu0","start_s":)" + start + R"(,"end_s":)" + end + "}\n";
    alerts += R"({"time_s":)" + std::to_string(10 * i + 1) +
              R"(,"detector":"d","kind":"fail_slow","suspects":[{"id":"h)" + std::to_string(i % 64) +
              R"(.gpu0","score":1}]})" + "\n";
  }
  write(dir / "faults.jsonl", truth);
  write(dir / "alerts.jsonl", alerts);
  const Result r = gauntlet("score --truth " + (dir / "faults.jsonl").string() + " --alerts " +
                                (dir / "alerts.jsonl").string() + " --grace 0",
                            600, 10);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"detected\": 100000"), std::string::npos) << r.out.substr(0, 2000);
}

// Item 10: a summary with 60,000 detectors parsed in time quadratic in them
// (each key of an object is checked against those before it).
TEST(HostileScale, CompareOfSummariesWith60000DetectorsIsRefusedAtTheKeyLimit) {
  const fs::path dir = scratch("compare-60k");
  std::string detectors;
  for (int d = 0; d < 60000; ++d)
    detectors += std::string(d ? "," : "") + "\"d" + std::to_string(d) +
                 R"(": {"status": "ok", "alerts": 1, "false_alerts": 0, "detected": true, "latency_s": 1,)"
                 R"( "top1": 1, "top3": 1})";
  const std::string summary =
      R"({"suite": "s", "version": 1, "seed": 1, "file": "s.yaml", "records": [)"
      R"({"episode": 0, "seed": 1, "shape": "a", "type": "gpu_throttle", "target": "h0.gpu0",)"
      R"( "onset_s": 1, "duration_s": 1, "params": {}, "magnitude": null, "class": "impactful",)"
      R"( "background": [], "sim_seconds": 60, "reproduce": "x", "detectors": {)" +
      detectors + R"(}, "sweep": {}}]})";
  write(dir / "a.json", summary);
  const Result r = gauntlet("suite --compare " + (dir / "a.json").string() + " " + (dir / "a.json").string(), 600, 10);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a.json:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than 10000 keys"), std::string::npos) << r.err;
}

// Item 10: each sensitivity value is one more detector in every episode,
// and each episode's detectors were checked pairwise.
TEST(HostileScale, SuiteWith60000SensitivityValuesIsRefusedAtTheLimit) {
  const fs::path dir = scratch("suite-60k");
  std::string suite = slurp("suites/smoke.yaml");
  std::string values;
  for (int v = 0; v < 60000; ++v) values += std::string(v ? ", " : "") + "0." + std::to_string(100000 + v);
  const std::size_t at = suite.find("  - {detector: c4d, param: compute_slow, values: [0.02, 0.2]}");
  ASSERT_NE(at, std::string::npos);
  suite.replace(at, suite.find('\n', at) - at, "  - {detector: c4d, param: compute_slow, values: [" + values + "]}");
  const fs::path file = write(dir / "suite.yaml", suite);
  const Result r = gauntlet("suite " + file.string() + " --list", 600, 10);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("more than 256 sensitivity values"), std::string::npos) << r.err;
}

const std::string kTruth = R"({"id":"f1","type":"link_loss","target":"leaf0~spine0","start_s":30,"end_s":60})"
                           "\n";

// Item 10: the JSON reader's filtering callback rescanned the alerts array at
// the end of every alert object (17 CPU seconds for 200,000 alerts).
TEST(HostileScale, AlertmanagerPayloadOf200000AlertsIsNearLinear) {
  const fs::path dir = scratch("alertmanager-200k");
  std::string payload = "{\"alerts\": [";
  for (int i = 0; i < 200000; ++i) {
    char alert[200];
    std::snprintf(alert, sizeof alert,
                  R"(%s{"labels": {"alertname": "A", "component": "h%d.gpu0"}, "startsAt": "2023-11-14T22:%02d:%02dZ",)"
                  R"( "fingerprint": "fp%d"})",
                  i ? ", " : "", i % 64, 14 + (i / 60) % 40, i % 60, i);
    payload += alert;
  }
  write(dir / "A.json", payload + "]}\n");
  write(dir / "T.jsonl", kTruth);
  const Result r = gauntlet("score --truth " + (dir / "T.jsonl").string() + " --alerts " + (dir / "A.json").string() +
                                " --t0 2023-11-14T22:14:00Z",
                            600, 8);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Item 10: the same rescan over one alert's 200,000 suspects.
TEST(HostileScale, AlertWith200000SuspectsIsNearLinear) {
  const fs::path dir = scratch("suspects-200k");
  std::string line = R"({"time_s": 40, "detector": "d", "kind": "fail_slow", "suspects": [)";
  for (int i = 0; i < 200000; ++i)
    line += std::string(i ? ", " : "") + R"({"id": "h)" + std::to_string(i % 1000) + ".gpu" + std::to_string(i % 8) +
            R"(", "score": )" + std::to_string(1.0 / (i + 1)) + "}";
  write(dir / "alerts.jsonl", line + "]}\n");
  write(dir / "T.jsonl", kTruth);
  const Result r =
      gauntlet("score --truth " + (dir / "T.jsonl").string() + " --alerts " + (dir / "alerts.jsonl").string(), 600, 5);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace gauntlet::hostile
