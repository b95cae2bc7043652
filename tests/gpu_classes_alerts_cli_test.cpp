// examples/prometheus/cluster-alerts.yaml's GPU rules, written for
// dcgm-exporter's fields, fire on the GPU failure classes of Llama 3's
// Table 5 as their signatures say (NVIDIA's XID catalog: 64 a row remap
// failure, 94 a contained ECC error, 119 a GSP RPC timeout):
//  * gpu_hbm_error: the single-bit ECC rule warns while the corrected errors
//    pile up, before the double-bit error; then the ECC and row-remap rules
//    page, and the remap failure holds DCGM_FI_DEV_ROW_REMAP_FAILURE at 1;
//  * gpu_sram_error (contained): XID 94 and one double-bit error, no row;
//  * gpu_gsp_error: XID 119 in the GPU's last sample, then its series go
//    stale (the staleness rule pages);
//  * gpu_sdc: nothing any DCGM rule can see.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "tests/gauntlet_cli_run.hpp"

namespace {

using namespace gauntlet::cli_test;

bool have_promtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

const char* kScenario = R"(name: gpu-classes-alerts
seed: 7
duration: 8m
engine: flow
background: none
cluster:
  spines: 2
  leaves: 4
  hosts: 4
  gpus_per_host: 2
  rnics_per_host: 2
  rail_optimized: true
  host_link_gbps: 400
  fabric_link_gbps: 400
  link_latency: 1us
job:
  name: small
  gpus: 8
  parallelism: {tp: 2, pp: 1, dp: 4, ep: 1}
  compute_per_iteration: 2s
  gradient_bytes: 1GB
  checkpoint_interval: 10m
  restart_cost: 1m
faults:
  - {type: gpu_hbm_error, target: h1.gpu0, at: 1m, duration: 5m, sbe_count: 8, sbe_lead: 3m, remap: fails}
  - {type: gpu_sdc, target: h0.gpu1, at: 2m, duration: 5m, interval: 30s}
  - {type: gpu_gsp_error, target: h2.gpu1, at: 5m, duration: 2m}
  - {type: gpu_sram_error, target: h3.gpu1, at: 6m, duration: 1m}
mitigation: none
)";

// The last value of the series of `metric` whose labels hold component="id".
double last_value(const std::string& openmetrics, const std::string& metric, const std::string& component) {
  const std::regex line("^" + metric + R"(\{([^}]*)\} (\S+) \S+$)");
  double value = -1;
  std::istringstream lines(openmetrics);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line) && m[1].str().find("component=\"" + component + "\"") != std::string::npos)
      value = std::stod(m[2]);
  }
  return value;
}

// Whether the series of `metric` for `component` has a sample at `time` (seconds, as written).
bool has_sample_at(const std::string& openmetrics, const std::string& metric, const std::string& component,
                   const std::string& time) {
  std::istringstream lines(openmetrics);
  for (std::string l; std::getline(lines, l);)
    if (l.starts_with(metric + "{") && l.find("component=\"" + component + "\"") != std::string::npos &&
        l.ends_with(" " + time))
      return true;
  return false;
}

TEST(GpuClassesAlerts, DcgmRulesFireOnEachClassBySignature) {
  if (!have_promtool()) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  const fs::path dir = scratch("gpu-classes-alerts");
  std::ofstream(dir / "scenario.yaml") << kScenario;
  const std::string rules = fs::absolute("examples/prometheus/cluster-alerts.yaml").string();
  const std::string name = "prom:" + rules;
  RunResult r =
      gauntlet_run(dir / "scenario.yaml", dir, "--detectors " + name + " --metrics-out " + (dir / "metrics").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.summary["detectors"][name]["status"], "ok");

  // The first alert of each kind on each component.
  std::map<std::pair<std::string, std::string>, double> first;
  std::istringstream lines(r.alerts);
  for (std::string l; std::getline(lines, l);) {
    const auto alert = nlohmann::json::parse(l);
    for (const auto& s : alert["suspects"]) {
      const auto key = std::make_pair(s["id"].get<std::string>(), alert["kind"].get<std::string>());
      if (!first.count(key)) first[key] = alert["time_s"].get<double>();
    }
  }
  // HBM: single-bit errors every 22.5 s from 60 s; the warning comes at an
  // evaluation (every minute) before the double-bit error at 240 s pages.
  const auto warned = first.find({"h1.gpu0", "fail_slow"});
  ASSERT_NE(warned, first.end()) << r.alerts;
  EXPECT_GE(warned->second, 120);
  EXPECT_LT(warned->second, 240);
  const auto paged = first.find({"h1.gpu0", "fail_stop"});
  ASSERT_NE(paged, first.end()) << r.alerts;
  EXPECT_GE(paged->second, 240);
  EXPECT_LT(paged->second, 300);
  // GSP at 300 s and SRAM at 360 s, each paged at the next evaluation.
  const auto gsp = first.find({"h2.gpu1", "fail_stop"});
  ASSERT_NE(gsp, first.end()) << r.alerts;
  EXPECT_GE(gsp->second, 300);
  EXPECT_LT(gsp->second, 360);
  // ... and its series go stale from its next scrape (360 s) until it answers.
  const auto stale = first.find({"h2.gpu1", "monitor"});
  ASSERT_NE(stale, first.end()) << r.alerts;
  EXPECT_GE(stale->second, 300);
  EXPECT_LT(stale->second, 420);
  const auto sram = first.find({"h3.gpu1", "fail_stop"});
  ASSERT_NE(sram, first.end()) << r.alerts;
  EXPECT_GE(sram->second, 360);
  EXPECT_LT(sram->second, 420);
  // Silent data corruption: no rule on a DCGM field sees it.
  for (const auto& [key, time] : first) EXPECT_NE(key.first, "h0.gpu1") << key.second << " at " << time;

  const std::string metrics = slurp(dir / "metrics" / "metrics.om");
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_XID_ERRORS", "h1.gpu0"), 64);
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "h1.gpu0"), 1);
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "h1.gpu0"), 8);
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "h1.gpu0"), 1);
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "h1.gpu0"), 0);  // the remap failed
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_XID_ERRORS", "h3.gpu1"), 94);
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "h3.gpu1"), 1);
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "h3.gpu1"), 0);  // SRAM: no row
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_XID_ERRORS", "h2.gpu1"), 119);
  EXPECT_FALSE(has_sample_at(metrics, "DCGM_FI_DEV_GPU_TEMP", "h2.gpu1", "360.000"));  // stale while hung
  EXPECT_TRUE(has_sample_at(metrics, "DCGM_FI_DEV_GPU_TEMP", "h2.gpu0", "360.000"));
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_XID_ERRORS", "h0.gpu1"), 0);
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "h0.gpu1"), 0);
}

}  // namespace
