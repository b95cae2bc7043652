// An operator's Prometheus alerting rule as a detector, and the run's
// telemetry as OpenMetrics that promtool imports: Debian's promtool on the
// half-speed GPU of scenarios/falcon-ladder-throttle.yaml.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/gauntlet_cli_run.hpp"

namespace {

using namespace gauntlet::cli_test;

bool have_promtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

// "A busy GPU's SM clock below 80% of its peers' median for a minute", as
// an operator writes it: idle GPUs clock down (a spare host's GPUs sit near
// 345 MHz), so a rule without the utilization clause pages on each idle one.
const char* kRules = R"(groups:
  - name: gpu
    rules:
      - alert: GpuClockBelowPeers
        expr: >-
          DCGM_FI_DEV_SM_CLOCK < 0.8 * scalar(quantile(0.5, DCGM_FI_DEV_SM_CLOCK))
            and DCGM_FI_DEV_GPU_UTIL > 50
        for: 1m
        labels: {severity: page}
)";

TEST(PromRules, ClockRuleNamesTheThrottledGpuAMinuteAfterOnset) {
  if (!have_promtool()) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  const fs::path dir = scratch("prom-throttle");
  std::ofstream(dir / "rules.yaml") << kRules;
  const std::string name = "prom:" + (dir / "rules.yaml").string();
  RunResult r = gauntlet_run("scenarios/falcon-ladder-throttle.yaml", dir,
                             "--mitigation none --detectors " + name + " --metrics-out " + (dir / "metrics").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto& d = r.summary["detectors"][name];
  EXPECT_EQ(d["status"], "ok");
  EXPECT_EQ(d["detected"], 1);
  EXPECT_EQ(d["localization_top1"], 1.0);  // h3.gpu2
  EXPECT_EQ(d["false_alerts"], 0);
  // The clock drops with the fault at 600 s, a scrape and an evaluation
  // every 15 s, and `for: 1m`: pending at the first evaluation that sees it,
  // firing a minute later.
  const double latency = d["detection_latency_s"]["p50"].get<double>();
  EXPECT_GE(latency, 60.0);
  EXPECT_LE(latency, 75.0);

  // The same telemetry imports into a Prometheus TSDB.
  const std::string import = "promtool tsdb create-blocks-from openmetrics " +
                             (dir / "metrics" / "metrics.om").string() + " " + (dir / "tsdb").string() + " >" +
                             (dir / "import.log").string() + " 2>&1";
  EXPECT_EQ(std::system(import.c_str()), 0) << slurp(dir / "import.log");
  int blocks = 0;
  for (const auto& entry : fs::directory_iterator(dir / "tsdb")) blocks += fs::exists(entry.path() / "meta.json");
  EXPECT_GE(blocks, 1);
}

TEST(PromRules, BadRuleFileIsBadInputAtItsLine) {
  const fs::path dir = scratch("prom-bad");
  std::ofstream(dir / "rules.yaml") << "groups:\n  - name: g\n    rules:\n      - alert: NoExpr\n";
  std::ofstream(dir / "scenario.yaml") << slurp("scenarios/demo.yaml");
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet validate " +
                              (dir / "scenario.yaml").string() + " --detectors prom:" + (dir / "rules.yaml").string() +
                              " >/dev/null 2>" + (dir / "stderr").string();
  const int status = std::system(command.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(slurp(dir / "stderr").find("rules.yaml:4:9: alerting rule 'NoExpr' has no 'expr'"), std::string::npos)
      << slurp(dir / "stderr");
}

TEST(PromRules, CannotDriveAMitigationPolicy) {
  const fs::path dir = scratch("prom-mitigation");
  std::ofstream(dir / "rules.yaml") << kRules;
  RunResult r =
      gauntlet_run("scenarios/falcon-ladder-throttle.yaml", dir, "--detectors prom:" + (dir / "rules.yaml").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot drive mitigation 'falcon-ladder'"), std::string::npos) << r.err;
}

}  // namespace
