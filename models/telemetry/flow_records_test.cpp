#include "models/telemetry/flow_records.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "models/telemetry/traffic_ledger.hpp"
#include "sim/ecmp.hpp"

namespace gauntlet::models {
namespace {

using sim::kSecond;

sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 2;
  s.leaves = 2;
  s.hosts = 2;
  s.gpus_per_host = 1;
  s.rnics_per_host = 1;
  s.rail_optimized = false;
  return s;
}

// h0.nic0 -> h1.nic0 across the fabric at `bytes_per_second`.
FlowRate cross_leaf_flow(const sim::Topology& t, double bytes_per_second, double resent_per_second = 0) {
  FlowRate f;
  f.src = 0;
  f.dst = 1;
  for (sim::LinkId link : {t.host_link(0), t.fabric_link(0, 1), t.fabric_link(1, 1), t.host_link(1)})
    f.directions.push_back(directed_link(link, link == t.host_link(0) || link == t.fabric_link(0, 1)));
  f.bytes_per_second = bytes_per_second;
  f.retransmitted_per_second = resent_per_second;
  return f;
}

std::vector<telemetry::FlowRecord> records_of(const telemetry::Batch& batch) {
  std::vector<telemetry::FlowRecord> out;
  for (const telemetry::Record& r : batch.records())
    if (r.has_flow()) out.push_back(r.flow());
  return out;
}

// Meters `flow` for seconds 1..active_seconds, then nothing until `until`.
telemetry::Batch meter_run(FlowRecordExporter& exporter, const FlowRate& flow, int active_seconds, int until) {
  telemetry::Batch out;
  for (int s = 1; s <= until; ++s)
    exporter.meter(s * kSecond, s <= active_seconds ? std::vector<FlowRate>{flow} : std::vector<FlowRate>{}, nullptr,
                   &out);
  return out;
}

TEST(FlowRecords, ActiveTimeoutCutsALongFlowIntoRecordsOfThatLength) {
  const sim::Topology t(cluster());
  FlowRecordExporter exporter(t, FlowRecordParams{});  // 60 s active, 15 s idle, every packet
  const FlowRate flow = cross_leaf_flow(t, 1e9, 10);
  telemetry::Batch out = meter_run(exporter, flow, 150, 150);
  exporter.flush(150 * kSecond, &out);
  const auto records = records_of(out);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].start_ns(), 0);
  EXPECT_EQ(records[0].end_ns(), 60 * kSecond);
  EXPECT_EQ(records[0].end_reason(), 2u);  // IPFIX flowEndReason: active timeout
  EXPECT_EQ(records[1].start_ns(), 60 * kSecond);
  EXPECT_EQ(records[2].end_ns(), 150 * kSecond);
  EXPECT_EQ(records[2].end_reason(), 4u);  // forced end
  std::uint64_t bytes = 0, packets = 0, resent = 0;
  for (const auto& r : records) bytes += r.bytes(), packets += r.packets(), resent += r.retransmitted_packets();
  EXPECT_EQ(bytes, 150'000'000'000u);
  EXPECT_EQ(packets, 150u * static_cast<std::uint64_t>(std::ceil(1e9 / 4096)));
  EXPECT_EQ(resent, 1500u);
  const telemetry::FlowRecord& r = records[0];
  EXPECT_EQ(r.exporter(), "h0.nic0");
  EXPECT_EQ(r.src(), "h0.nic0");
  EXPECT_EQ(r.dst(), "h1.nic0");
  EXPECT_EQ(r.src_address(), "10.0.0.1");
  EXPECT_EQ(r.dst_address(), "10.0.1.1");
  EXPECT_EQ(r.protocol(), 17u);
  EXPECT_EQ(r.dst_port(), 4791u);
  EXPECT_EQ(r.src_port(), sim::connection_source_port(0, 1));
  EXPECT_EQ(r.sampling_interval(), 1u);
  EXPECT_EQ(std::vector<std::string>(r.path().begin(), r.path().end()),
            (std::vector<std::string>{"h0.nic0~leaf0", "leaf0~spine1", "leaf1~spine1", "h1.nic0~leaf1"}));
}

TEST(FlowRecords, IdleTimeoutExportsAFlowThatStoppedAndEndsItAtItsLastPacket) {
  const sim::Topology t(cluster());
  FlowRecordExporter exporter(t, FlowRecordParams{});
  const telemetry::Batch out = meter_run(exporter, cross_leaf_flow(t, 5e8), 10, 40);
  const auto records = records_of(out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].end_ns(), 10 * kSecond);
  EXPECT_EQ(records[0].end_reason(), 1u);  // idle timeout
  EXPECT_EQ(records[0].bytes(), 5'000'000'000u);
  EXPECT_EQ(exporter.open_flows(), 0u);
  // Exported in the second the idle timeout (15 s) ran out, not before.
  FlowRecordExporter early(t, FlowRecordParams{});
  EXPECT_TRUE(records_of(meter_run(early, cross_leaf_flow(t, 5e8), 10, 24)).empty());
}

// 1:N sampling keeps each packet with probability 1/N: per second the kept
// count is Binomial(packets, 1/N), reported times N. Checked in both of the
// draw's regimes (a mean over and under 30 kept packets a second).
void expect_binomial_band(double bytes_per_second, std::uint64_t n) {
  const sim::Topology t(cluster());
  FlowRecordParams params;
  params.sampling_interval = n;
  params.active_timeout = kSecond;  // one record per second
  params.seed = 7;
  FlowRecordExporter exporter(t, params);
  constexpr int kSeconds = 600;
  const telemetry::Batch out = meter_run(exporter, cross_leaf_flow(t, bytes_per_second), kSeconds, kSeconds);
  const double packets = std::ceil(bytes_per_second / 4096);
  const double p = 1.0 / static_cast<double>(n);
  std::vector<double> kept(kSeconds, 0.0);  // per second; a second with none has no record
  for (const auto& r : records_of(out)) {
    ASSERT_EQ(r.packets() % n, 0u);
    EXPECT_EQ(r.sampling_interval(), n);
    kept[static_cast<std::size_t>(r.end_ns() / kSecond - 1)] = static_cast<double>(r.packets() / n);
  }
  kept.back() = 0;  // the last second is still open (not flushed)
  kept.pop_back();
  const double m = static_cast<double>(kept.size());
  const double mean = std::accumulate(kept.begin(), kept.end(), 0.0) / m;
  double var = 0;
  for (double k : kept) var += (k - mean) * (k - mean);
  var /= m - 1;
  const double expected_mean = packets * p, expected_var = packets * p * (1 - p);
  // The mean of m seconds within 4 standard errors; the variance within
  // 4 standard errors of a sample variance (sqrt(2 / (m - 1)) relative, plus
  // the excess kurtosis of a small-mean binomial, 1 / var).
  EXPECT_NEAR(mean, expected_mean, 4 * std::sqrt(expected_var / m));
  EXPECT_NEAR(var / expected_var, 1.0, 4 * std::sqrt(2 / (m - 1) + 1 / (expected_var * m)));
}

TEST(FlowRecords, SampledCountsFollowTheBinomialOfTheSamplingRate) {
  expect_binomial_band(1e9, 1000);    // 244 kept a second: the normal regime
  expect_binomial_band(1e9, 100000);  // 2.4 kept a second: counted one by one
}

TEST(FlowRecords, SameSeedSameRecordsAnotherSeedOthers) {
  const sim::Topology t(cluster());
  auto run = [&](std::uint64_t seed) {
    FlowRecordParams params;
    params.sampling_interval = 4096;
    params.seed = seed;
    FlowRecordExporter exporter(t, params);
    telemetry::Batch out = meter_run(exporter, cross_leaf_flow(t, 2e9, 40), 200, 230);
    exporter.flush(230 * kSecond, &out);
    return out.SerializeAsString();
  };
  EXPECT_EQ(run(1), run(1));
  EXPECT_NE(run(1), run(2));
}

}  // namespace
}  // namespace gauntlet::models
