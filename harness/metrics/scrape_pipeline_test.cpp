// The monitoring pipeline between samples and Prometheus: dcgm-exporter's
// cached collection (a scrape between two collections returns the older
// read), failed scrapes as gaps shared by every series of one exporter, and
// restarts that start counters again from 0.
#include <gtest/gtest.h>

#include <optional>

#include "harness/metrics/exporter_series.hpp"
#include "harness/metrics/openmetrics.hpp"

namespace gauntlet::harness {
namespace {

using sim::kSecond;

// Values per scrape (nullopt: no sample) of the series of `metric`.
std::vector<std::optional<double>> scrapes(const std::vector<Series>& all, const std::string& metric,
                                           const std::string& host = "") {
  for (const Series& s : all) {
    if (s.metric != metric || (!host.empty() && s.labels.find(host) == std::string::npos)) continue;
    std::vector<std::optional<double>> out(s.first_scrape);
    for (const SeriesSegment& seg : s.segments)
      for (std::uint64_t i = 0; i < seg.count; ++i)
        out.push_back(seg.missing ? std::nullopt : std::optional(seg.start + seg.step * static_cast<double>(i)));
    return out;
  }
  throw std::logic_error("no " + metric);
}

void gpu(telemetry::Batch& b, const std::string& id, sim::Nanos t, double clock) {
  auto* g = b.add_records()->mutable_gpu();
  g->set_gpu(id);
  g->set_time_ns(t);
  g->set_clock_mhz(clock);
  g->set_power_w(100);
}

TEST(ScrapePipeline, DcgmAnswersWithItsLastCollection) {
  ExporterSeries series(ScrapeSettings{.scrape_interval = 15 * kSecond, .dcgm_collection_interval = 30 * kSecond});
  telemetry::Batch b;
  gpu(b, "h0.gpu0", 1 * kSecond, 1980);
  gpu(b, "h0.gpu0", 31 * kSecond, 990);  // read by the collection at 60 s
  series.observe(b);
  const auto clock = scrapes(series.series(75 * kSecond), "DCGM_FI_DEV_SM_CLOCK");
  // Scrapes at 15 s (nothing collected yet), 30, 45 (the 30 s read), 60, 75.
  ASSERT_EQ(clock.size(), 6u);
  EXPECT_FALSE(clock[1].has_value());
  EXPECT_EQ(clock[2], 1980);
  EXPECT_EQ(clock[3], 1980);
  EXPECT_EQ(clock[4], 990);
  EXPECT_EQ(clock[5], 990);
}

// A GPU whose GSP hangs answers no DCGM read: its series vanish from the
// scrapes that read in the window, the first with a staleness marker (as
// Prometheus writes one for a series gone from an answered scrape), and
// come back with the GPU; its peers on the same exporter are untouched.
TEST(ScrapePipeline, AnUnansweredGpusSeriesGoStaleAtOnce) {
  ScrapeSettings settings{.scrape_interval = 15 * kSecond};
  settings.unanswered_gpus["h0.gpu1"] = {{31 * kSecond, 75 * kSecond}};
  ExporterSeries series(settings);
  telemetry::Batch b;
  gpu(b, "h0.gpu0", 1 * kSecond, 1980);
  gpu(b, "h0.gpu1", 1 * kSecond, 1980);
  series.observe(b);
  const std::vector<Series> all = series.series(90 * kSecond);
  const auto hung = scrapes(all, "DCGM_FI_DEV_SM_CLOCK", "h0.gpu1");
  // Scrapes at 15, 30 (values), 45, 60 (none), 75, 90 (values again).
  ASSERT_EQ(hung.size(), 7u);
  EXPECT_EQ(hung[2], 1980);
  EXPECT_FALSE(hung[3].has_value());
  EXPECT_FALSE(hung[4].has_value());
  EXPECT_EQ(hung[5], 1980);
  EXPECT_EQ(scrapes(all, "DCGM_FI_DEV_SM_CLOCK", "h0.gpu0"),
            (std::vector<std::optional<double>>{std::nullopt, 1980, 1980, 1980, 1980, 1980, 1980}));
  for (const Series& s : all)
    if (s.metric == "DCGM_FI_DEV_SM_CLOCK" && s.labels.find("h0.gpu1") != std::string::npos)
      EXPECT_EQ(expanding_notation(s), "_x1 1980+0x1 stale _x1 1980+0x1");
}

TEST(ScrapePipeline, AFailedScrapeIsAGapInEverySeriesOfItsExporter) {
  ExporterSeries series(ScrapeSettings{.scrape_interval = 15 * kSecond, .missed_scrape_rate = 0.3, .seed = 11});
  telemetry::Batch b;
  gpu(b, "h0.gpu0", 1 * kSecond, 1980);
  gpu(b, "h0.gpu1", 1 * kSecond, 1980);
  gpu(b, "h1.gpu0", 1 * kSecond, 1980);
  series.observe(b);
  const auto all = series.series(3000 * kSecond);
  const auto a = scrapes(all, "DCGM_FI_DEV_SM_CLOCK", "h0.gpu0");
  const auto same_host = scrapes(all, "DCGM_FI_DEV_POWER_USAGE", "h0.gpu1");
  const auto other_host = scrapes(all, "DCGM_FI_DEV_SM_CLOCK", "h1.gpu0");
  int missed = 0, differ = 0;
  for (std::size_t i = 1; i < a.size(); ++i) {
    missed += !a[i];
    EXPECT_EQ(a[i].has_value(), same_host[i].has_value()) << i;
    differ += a[i].has_value() != other_host[i].has_value();
  }
  EXPECT_NEAR(missed / 200.0, 0.3, 0.1);  // 200 scrapes
  EXPECT_GT(differ, 0);                   // another host's exporter fails on its own
  // The text exposition leaves the failed scrapes out; promtool's notation marks them.
  Series one;
  for (const Series& s : all)
    if (s.metric == "DCGM_FI_DEV_SM_CLOCK" && s.labels.find("h0.gpu0") != std::string::npos) one = s;
  EXPECT_NE(expanding_notation(one).find("_x"), std::string::npos);
}

TEST(ScrapePipeline, ARestartStartsCountersAgainFromZero) {
  // About one restart a minute: a counter of 1 GB a second drops at each.
  ExporterSeries series(ScrapeSettings{.scrape_interval = 15 * kSecond, .restarts_per_day = 1440, .seed = 3});
  telemetry::Batch b;
  auto* n = b.add_records()->mutable_nic();
  n->set_nic("h1.nic0");
  n->set_time_ns(1 * kSecond);
  n->set_tx_bytes(1'000'000'000);
  series.observe(b);
  const auto tx = scrapes(series.series(3600 * kSecond), "node_infiniband_port_data_transmitted_bytes_total");
  int resets = 0;
  std::optional<double> previous;
  for (const auto& v : tx) {
    if (!v) continue;
    if (previous && *v < *previous) ++resets;
    previous = v;
  }
  EXPECT_GE(resets, 20);  // of about 60 restarts, some fall on scrapes after another restart's gap
  EXPECT_LE(resets, 100);
}

}  // namespace
}  // namespace gauntlet::harness
