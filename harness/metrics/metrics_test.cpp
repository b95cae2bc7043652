#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gauntlet::harness
