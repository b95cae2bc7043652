// examples/prometheus/cluster-alerts.yaml, rules written for dcgm-exporter,
// node_exporter's infiniband collector and SONiC's SAI counters, run
// unchanged as a prom: detector through Debian's promtool; and each fault's
// counter signature in --metrics-out:
//  * link_loss at 1%: the receiving switch port counts uncorrectable FEC
//    codewords and CRC errors (RS(544,514), sim/fec.hpp), the senders
//    crossing it NAK sequence errors (packet_seq_err);
//  * gpu_fail with XID 48: one double-bit ECC error and one uncorrectable
//    remapped row on the failed GPU (an H100 remaps the row).
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>

#include "tests/gauntlet_cli_run.hpp"

namespace {

using namespace gauntlet::cli_test;

bool have_promtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

const char* kScenario = R"(name: cluster-alerts
seed: 7
duration: 8m
engine: flow
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
  - {type: link_loss, target: leaf0~spine1, at: 1m, duration: 2m, rate: 0.01}
  - {type: gpu_fail, target: h2.gpu1, at: 5m, xid: 48}
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

// The largest value any series of `metric` reaches.
double max_value(const std::string& openmetrics, const std::string& metric) {
  const std::regex line("^" + metric + R"(\{[^}]*\} (\S+) \S+$)");
  double value = -1;
  std::istringstream lines(openmetrics);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) value = std::max(value, std::stod(m[1]));
  }
  return value;
}

TEST(ClusterAlerts, RulesForRealExportersFireOnTheirFaults) {
  if (!have_promtool()) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  const fs::path dir = scratch("cluster-alerts");
  std::ofstream(dir / "scenario.yaml") << kScenario;
  const std::string rules = fs::absolute("examples/prometheus/cluster-alerts.yaml").string();
  const std::string name = "prom:" + rules;
  RunResult r =
      gauntlet_run(dir / "scenario.yaml", dir, "--detectors " + name + " --metrics-out " + (dir / "metrics").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.summary["detectors"][name]["status"], "ok");

  // Who each alert names, and when.
  std::map<std::string, double> first_alert;
  std::istringstream lines(r.alerts);
  for (std::string l; std::getline(lines, l);) {
    const auto alert = nlohmann::json::parse(l);
    for (const auto& s : alert["suspects"])
      if (!first_alert.count(s["id"])) first_alert[s["id"]] = alert["time_s"].get<double>();
  }
  // The lossy link, named by its receiving port's FEC and CRC counters
  // while the fault lasts (60-180 s).
  ASSERT_TRUE(first_alert.count("leaf0~spine1")) << r.alerts;
  EXPECT_GE(first_alert["leaf0~spine1"], 60);
  EXPECT_LE(first_alert["leaf0~spine1"], 180);
  // The failed GPU, by its double-bit ECC error and remapped row, within an
  // evaluation of the fault at 300 s.
  ASSERT_TRUE(first_alert.count("h2.gpu1")) << r.alerts;
  EXPECT_GE(first_alert["h2.gpu1"], 300);
  EXPECT_LE(first_alert["h2.gpu1"], 315);
  // Nothing else but the RNICs whose paths cross the lossy link.
  for (const auto& [component, time] : first_alert)
    if (component != "leaf0~spine1" && component != "h2.gpu1")
      EXPECT_NE(component.find(".nic"), std::string::npos) << component << " at " << time;

  const std::string metrics = slurp(dir / "metrics" / "metrics.om");
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "h2.gpu1"), 1);
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "h2.gpu1"), 1);
  EXPECT_EQ(last_value(metrics, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "h0.gpu0"), 0);
  EXPECT_GT(last_value(metrics, "SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES", "leaf0~spine1"), 0);
  EXPECT_GT(last_value(metrics, "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES", "leaf0~spine1"), 0);
  EXPECT_GT(last_value(metrics, "SAI_PORT_STAT_IF_IN_ERRORS", "leaf0~spine1"), 0);
  // Healthy links correct nothing here (the clean fleet) and lose nothing.
  for (const char* link : {"leaf1~spine0", "leaf1~spine1", "leaf2~spine1"})
    EXPECT_LE(last_value(metrics, "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES", link), 0) << link;
  // Go-back-N at the senders crossing the link.
  EXPECT_GT(max_value(metrics, "node_infiniband_packet_sequence_errors_total"), 0);
}

// An alert reading a recording rule's series fires: the recording rule's
// inputs reach promtool although no alerting expression names them.
TEST(ClusterAlerts, AnAlertOnARecordingRuleFires) {
  if (!have_promtool()) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  const fs::path dir = scratch("recording-rule");
  std::ofstream(dir / "scenario.yaml") << kScenario;
  std::ofstream(dir / "rules.yaml") << R"(groups:
  - name: recorded
    rules:
      - record: component:dcgm_dbe:max
        expr: max by (component) (DCGM_FI_DEV_ECC_DBE_VOL_TOTAL)
      - alert: RecordedDoubleBitError
        expr: component:dcgm_dbe:max > 0
        labels: {kind: fail_stop}
)";
  const std::string name = "prom:" + (dir / "rules.yaml").string();
  RunResult r = gauntlet_run(dir / "scenario.yaml", dir, "--detectors " + name);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.summary["detectors"][name]["status"], "ok");
  std::set<std::string> named;
  std::istringstream lines(r.alerts);
  for (std::string l; std::getline(lines, l);) {
    const auto alert = nlohmann::json::parse(l);
    for (const auto& s : alert["suspects"]) named.insert(s["id"]);
  }
  EXPECT_EQ(named, std::set<std::string>{"h2.gpu1"}) << r.alerts;
}

// An operator's rules kept as a Kubernetes PrometheusRule, aggregated by
// dcgm-exporter's Hostname: the alert keeps its name, labels and expanded
// annotations in alerts.jsonl, and the host (or, by Hostname and gpu, the
// GPU) is still its suspect.
TEST(ClusterAlerts, APrometheusRuleAggregatedByHostKeepsItsAlertAndSuspect) {
  if (!have_promtool()) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  const fs::path dir = scratch("prometheus-rule");
  std::ofstream(dir / "scenario.yaml") << kScenario;
  std::ofstream(dir / "rules.yaml") << R"(apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: gpu-ecc
  namespace: monitoring
spec:
  groups:
    - name: gpu-ecc
      rules:
        - alert: HostDoubleBitError
          expr: max by (Hostname) (DCGM_FI_DEV_ECC_DBE_VOL_TOTAL) > 0
          labels: {severity: page, kind: fail_stop}
          annotations:
            summary: "double-bit ECC error on {{ $labels.Hostname }}"
        - alert: GpuDoubleBitError
          expr: max by (Hostname, gpu) (DCGM_FI_DEV_ECC_DBE_VOL_TOTAL) > 0
          labels: {severity: page, kind: fail_stop}
)";
  const std::string name = "prom:" + (dir / "rules.yaml").string();
  RunResult r = gauntlet_run(dir / "scenario.yaml", dir, "--detectors " + name);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.summary["detectors"][name]["status"], "ok");
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;  // every metric read is exported
  std::map<std::string, nlohmann::json> by_alert;
  std::istringstream lines(r.alerts);
  for (std::string l; std::getline(lines, l);) {
    const auto alert = nlohmann::json::parse(l);
    ASSERT_TRUE(alert.contains("alert")) << l;
    by_alert[alert["alert"]["name"]] = alert;
  }
  ASSERT_EQ(by_alert.size(), 2u) << r.alerts;
  const auto& host = by_alert["HostDoubleBitError"];
  EXPECT_EQ(host["suspects"][0]["id"], "h2") << host.dump();
  EXPECT_EQ(host["alert"]["labels"]["severity"], "page");
  EXPECT_EQ(host["alert"]["labels"]["Hostname"], "h2");
  EXPECT_EQ(host["alert"]["annotations"]["summary"], "double-bit ECC error on h2");
  EXPECT_EQ(host["kind"], "fail_stop");
  EXPECT_EQ(by_alert["GpuDoubleBitError"]["suspects"][0]["id"], "h2.gpu1");
}

// A rule on a metric gauntlet never exports says so at load time, once per
// name, with the exported names nearest to it; the run still goes on.
TEST(ClusterAlerts, ARuleOnAnUnexportedMetricIsWarnedAtLoad) {
  if (!have_promtool()) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  const fs::path dir = scratch("unexported-metric");
  std::ofstream(dir / "scenario.yaml") << kScenario;
  std::ofstream(dir / "rules.yaml") << R"(groups:
  - name: gpu
    rules:
      - alert: GpuHot
        expr: DCGM_FI_DEV_GPU_TEMPERATURE > 90
      - alert: GpuVeryHot
        expr: DCGM_FI_DEV_GPU_TEMPERATURE > 95
      - alert: NodeDown
        expr: up{job="node"} == 0
      - alert: Xid
        expr: DCGM_FI_DEV_XID_ERRORS > 0
)";
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet validate " +
                              (dir / "scenario.yaml").string() + " --detectors prom:" + (dir / "rules.yaml").string() +
                              " >/dev/null 2>" + (dir / "stderr").string();
  const int status = std::system(command.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string err = slurp(dir / "stderr");
  const auto count = [&](const std::string& text) {
    int n = 0;
    for (std::size_t at = err.find(text); at != std::string::npos; at = err.find(text, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("warning:"), 2) << err;
  EXPECT_EQ(count("rules.yaml:5:15: warning: the rules read 'DCGM_FI_DEV_GPU_TEMPERATURE'"), 1) << err;
  EXPECT_EQ(count("nearest exported: DCGM_FI_DEV_GPU_TEMP,"), 1) << err;
  EXPECT_EQ(count("rules.yaml:9:15: warning: the rules read 'up'"), 1) << err;
  EXPECT_EQ(count("docs/protocol.md#signals-units-engines-and-exporter-names"), 2) << err;
}

}  // namespace
