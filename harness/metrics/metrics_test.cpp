#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/metrics/exporter_names.hpp"
#include "harness/metrics/exporter_series.hpp"
#include "harness/metrics/openmetrics.hpp"
#include "harness/metrics/prom_rules_detector.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

using sim::kSecond;

void gpu(telemetry::Batch& b, sim::Nanos t, double clock) {
  auto* g = b.add_records()->mutable_gpu();
  g->set_gpu("h5.gpu2");
  g->set_time_ns(t);
  g->set_clock_mhz(clock);
  g->set_temperature_c(50);
}

void nic(telemetry::Batch& b, sim::Nanos t, std::uint64_t tx_bytes) {
  auto* n = b.add_records()->mutable_nic();
  n->set_nic("h1.nic3");
  n->set_time_ns(t);
  n->set_tx_bytes(tx_bytes);
  n->set_link_up(true);
}

const Series& find(const std::vector<Series>& all, const std::string& metric) {
  for (const Series& s : all)
    if (s.metric == metric) return s;
  throw std::logic_error("no " + metric);
}

TEST(ExporterSeries, GaugeHoldsUntilItChangesAndIsRunLengthEncoded) {
  ExporterSeries series(15 * kSecond);
  telemetry::Batch b;
  gpu(b, 0, 1410);             // 0 .. 299 s at full clock
  gpu(b, 300 * kSecond, 705);  // then half
  series.observe(b);
  const std::vector<Series> all = series.series(600 * kSecond);
  const Series& clock = find(all, "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_EQ(clock.labels, R"(Hostname="h5",component="h5.gpu2",device="nvidia2",gpu="2")");
  ASSERT_EQ(clock.segments.size(), 2u);
  EXPECT_EQ(clock.segments[0].start, 1410);
  EXPECT_EQ(clock.segments[0].count, 20u);  // scrapes at 0, 15, ..., 285 s
  EXPECT_EQ(clock.segments[1].start, 705);
  EXPECT_EQ(clock.segments[1].count, 21u);  // 300 .. 600 s
  EXPECT_EQ(expanding_notation(clock), "1410+0x19 705+0x20");
}

TEST(ExporterSeries, PerSecondAmountsBecomeARunningTotal) {
  // 1 GB in each second from 1 s to 30 s, then 3 GB a second: the total at a
  // scrape is the sum of every second's amount up to it.
  ExporterSeries series(15 * kSecond);
  telemetry::Batch b;
  nic(b, 1 * kSecond, 1'000'000'000);
  nic(b, 31 * kSecond, 3'000'000'000);
  series.observe(b);
  const std::vector<Series> all = series.series(60 * kSecond);
  const Series& tx = find(all, "node_infiniband_port_data_transmitted_bytes_total");
  EXPECT_EQ(tx.type, "counter");
  EXPECT_EQ(tx.first_scrape, 1u);  // 15 s: the first scrape after the first sample
  std::vector<double> values;
  for (const SeriesSegment& s : tx.segments)
    for (std::uint64_t i = 0; i < s.count; ++i) values.push_back(s.start + s.step * static_cast<double>(i));
  EXPECT_EQ(values, (std::vector<double>{15e9, 30e9, 30e9 + 15 * 3e9, 30e9 + 30 * 3e9}));
}

TEST(OpenMetrics, FamiliesTypedAndTimestampedAndClosed) {
  ExporterSeries series(15 * kSecond);
  telemetry::Batch b;
  gpu(b, 0, 1410);
  nic(b, 1 * kSecond, 1000);
  series.observe(b);
  const std::string text = openmetrics_text(series.series(30 * kSecond), 15 * kSecond);
  EXPECT_NE(text.find("# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find(R"(DCGM_FI_DEV_SM_CLOCK{Hostname="h5",component="h5.gpu2",device="nvidia2",gpu="2"} 1410 15.000)"),
      std::string::npos);
  EXPECT_NE(text.find("# TYPE node_infiniband_port_data_transmitted_bytes counter\n"), std::string::npos);
  EXPECT_NE(
      text.find(
          R"(node_infiniband_port_data_transmitted_bytes_total{component="h1.nic3",device="mlx5_3",instance="h1",port="1"} 30000 30.000)"),
      std::string::npos);
  EXPECT_TRUE(text.ends_with("# EOF\n"));
}

TEST(PromtoolOutput, EveryGotAlertWithItsTimeAndLabels) {
  const std::string output = R"(Unit Testing:  test.yaml
  FAILED:
    alertname: GpuClockLow, time: 4m15s,
        exp:[],
        got:[
            0:
              Labels:{alertname="GpuClockLow", component="h0.gpu1", gpu="1", severity="page"}
              Annotations:{}
            1:
              Labels:{alertname="GpuClockLow", component="h0.gpu3", note="a \"quoted\" word"}
              Annotations:{}
            ]
    alertname: GpuClockLow, time: 1h2m,
        exp:[],
        got:[
            0:
              Labels:{alertname="GpuClockLow", component="h0.gpu1"}
              Annotations:{}
            ]
)";
  const std::vector<FiringAlert> alerts = parse_promtool_output(output);
  ASSERT_EQ(alerts.size(), 3u);
  EXPECT_EQ(alerts[0].alertname, "GpuClockLow");
  EXPECT_EQ(alerts[0].time_s, 255);
  EXPECT_EQ(alerts[0].labels.at("component"), "h0.gpu1");
  EXPECT_EQ(alerts[1].labels.at("note"), R"(a \"quoted\" word)");
  EXPECT_EQ(alerts[2].time_s, 3720);
}

TEST(PromRules, ConfigAndRuleFileAreChecked) {
  std::string error, bad_key;
  EXPECT_TRUE(parse_prom_config("r.yaml", {{"component_label", "gpu_id"}, {"kind", "network"}}, &error, &bad_key));
  EXPECT_FALSE(parse_prom_config("r.yaml", {{"kind", "slow"}}, &error, &bad_key));
  EXPECT_EQ(bad_key, "kind");
  EXPECT_FALSE(parse_prom_config("r.yaml", {{"lookback", "1m"}}, &error, &bad_key));
  EXPECT_NE(error.find("unknown parameter 'lookback'"), std::string::npos);
  EXPECT_THROW(read_prom_rules("/nonexistent/rules.yaml"), InputError);
}

std::string write_rules(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("gauntlet-metrics-test-" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(PromRules, APrometheusRuleDocumentLoadsAsItsGroups) {
  const std::string path = write_rules("k8s.yaml", R"(apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: gpu-rules
  namespace: monitoring
  labels: {release: kube-prometheus-stack}
spec:
  groups:
    - name: gpu
      rules:
        - record: host:dbe:max
          expr: max by (Hostname) (DCGM_FI_DEV_ECC_DBE_VOL_TOTAL)
        - alert: HostDoubleBitError
          expr: host:dbe:max > 0
          annotations: {summary: "double-bit error on {{ $labels.Hostname }}"}
)");
  const PromRuleFile rules = read_prom_rules(path);
  EXPECT_EQ(rules.alerts, std::vector<std::string>{"HostDoubleBitError"});
  EXPECT_EQ(rules.recorded, std::vector<std::string>{"host:dbe:max"});
  EXPECT_EQ(rules.expressions.size(), 2u);
  // promtool is handed the groups alone, as a plain rule file.
  EXPECT_TRUE(rules.rules_text.starts_with("groups:")) << rules.rules_text;
  EXPECT_EQ(rules.rules_text.find("apiVersion"), std::string::npos) << rules.rules_text;
  // A plain file goes to promtool as it is.
  const std::string plain_text = "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n";
  EXPECT_EQ(read_prom_rules(write_rules("plain.yaml", plain_text)).rules_text, plain_text);
}

TEST(PromRules, OtherKubernetesKindsAreRefusedWithAHint) {
  const std::string path = write_rules("deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nspec: {}\n");
  try {
    read_prom_rules(path);
    FAIL() << "a Deployment was read as rules";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 7);
    EXPECT_NE(e.message().find("kind: PrometheusRule"), std::string::npos) << e.message();
  }
}

TEST(PromRules, MetricNamesAreWhatAnExpressionSelects) {
  EXPECT_EQ(metric_names_in(R"(sum by (Hostname, gpu) (rate(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu!="0"}[5m] offset 1m))
             > on (Hostname) group_left(instance) 0.5 * avg without (gpu) (node_load1 @ start()))"),
            (std::set<std::string>{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "node_load1"}));
  EXPECT_EQ(metric_names_in(R"e(label_replace(up, "x", "$1", "instance", "(.*)") and bool job:errors:rate5m
             unless absent(nope[1h:1m]) or 1e3 < inf)e"),
            (std::set<std::string>{"up", "job:errors:rate5m", "nope"}));
}

TEST(PromRules, AMetricNeverExportedIsWarnedOnceWithTheNearestExportedNames) {
  const std::string path = write_rules("typo.yaml", R"(groups:
  - name: g
    rules:
      - record: host:temp:max
        expr: max by (Hostname) (DCGM_FI_DEV_GPU_TEMPERATURE)
      - alert: Hot
        expr: host:temp:max > 90 or DCGM_FI_DEV_GPU_TEMPERATURE > 95
      - alert: Clock
        expr: DCGM_FI_DEV_SM_CLOCK < 1000
)");
  const std::vector<std::string> warnings = unexported_metric_warnings(path);
  ASSERT_EQ(warnings.size(), 1u);  // host:temp:max is the file's own; the typo is named once
  EXPECT_NE(warnings[0].find(path + ":5:15: warning:"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("'DCGM_FI_DEV_GPU_TEMPERATURE'"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("DCGM_FI_DEV_GPU_TEMP,"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("docs/protocol.md"), std::string::npos) << warnings[0];
}

TEST(ExporterNames, TheExportedCatalogHoldsEveryFamily) {
  const std::set<std::string> names = exported_metric_names();
  for (const char* name : {"DCGM_FI_DEV_XID_ERRORS", "node_infiniband_port_data_transmitted_bytes_total",
                           "node_infiniband_symbol_error_total", "node_infiniband_packet_sequence_errors_total",
                           "ifHCOutOctets", "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES"})
    EXPECT_EQ(names.count(name), 1u) << name;
}

TEST(ExporterNames, AnAggregationsKeptLabelsStillNameTheComponent) {
  using Labels = std::map<std::string, std::string>;
  EXPECT_EQ(component_of_exporter_labels(Labels{{"Hostname", "h5"}}), "h5");
  EXPECT_EQ(component_of_exporter_labels(Labels{{"Hostname", "h5"}, {"gpu", "2"}}), "h5.gpu2");
  EXPECT_EQ(component_of_exporter_labels(Labels{{"Hostname", "h5"}, {"device", "nvidia3"}}), "h5.gpu3");
  EXPECT_EQ(component_of_exporter_labels(Labels{{"instance", "h1"}, {"device", "mlx5_1"}}), "h1.nic1");
  EXPECT_EQ(component_of_exporter_labels(Labels{{"instance", "leaf3"}}), "leaf3");
  EXPECT_EQ(component_of_exporter_labels(Labels{{"instance", "spine1"}, {"ifName", "leaf3~spine1"}}), "leaf3~spine1");
  EXPECT_EQ(component_of_exporter_labels(Labels{{"severity", "page"}}), std::nullopt);
  EXPECT_EQ(component_of_exporter_labels(Labels{{"instance", "10.0.0.1:9100"}}), std::nullopt);
}

TEST(PromRules, PromtoolsAnnotationsAreKeptWithTheirAlert) {
  const std::vector<FiringAlert> alerts = parse_promtool_output(R"(  FAILED:
    alertname: Hot, time: 2m,
        exp:[],
        got:[
            0:
              Labels:{Hostname="h5", alertname="Hot", severity="page"}
              Annotations:{description="x, y", summary="host h5 hot"}
            ]
)");
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].labels.at("Hostname"), "h5");
  EXPECT_EQ(alerts[0].annotations.at("summary"), "host h5 hot");
  EXPECT_EQ(alerts[0].annotations.at("description"), "x, y");
}

}  // namespace
}  // namespace gauntlet::harness
