// Exporter names and semantics: dcgm-exporter's (its etc/default-counters.csv
// and the fields it leaves commented out), node_exporter's infiniband
// collector's and the switches'.
#include "harness/metrics/exporter_names.hpp"

#include <gtest/gtest.h>

#include <set>

#include "harness/metrics/exporter_series.hpp"

namespace gauntlet::harness {
namespace {

using sim::kSecond;

const Series& find(const std::vector<Series>& all, const std::string& metric) {
  for (const Series& s : all)
    if (s.metric == metric) return s;
  throw std::logic_error("no " + metric);
}

std::vector<double> values(const Series& series) {
  std::vector<double> out;
  for (const SeriesSegment& s : series.segments)
    for (std::uint64_t i = 0; i < s.count; ++i) out.push_back(s.start + s.step * static_cast<double>(i));
  return out;
}

telemetry::GpuSample* gpu(telemetry::Batch& b, sim::Nanos t) {
  auto* g = b.add_records()->mutable_gpu();
  g->set_gpu("h2.gpu7");
  g->set_time_ns(t);
  g->set_clock_mhz(1980);
  g->set_power_w(500);
  return g;
}

TEST(DcgmSeries, EveryDefaultFieldIsExported) {
  std::set<std::string> names;
  telemetry::GpuSample g;
  g.set_gpu("h0.gpu0");
  dcgm_series(g, [&](const std::string& metric, const std::string&, const std::string&, double, double) {
    names.insert(metric);
  });
  // dcgm-exporter's default counters file, less the encoder/decoder, PCIe
  // throughput, NVLink bandwidth and vGPU license fields nothing here moves.
  for (const char* field :
       {"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"})
    EXPECT_EQ(names.count(field), 1u) << field;
}

TEST(DcgmSeries, EccCountsAccumulateIntoRunningTotals) {
  ExporterSeries series(15 * kSecond);
  telemetry::Batch b;
  gpu(b, 1 * kSecond);
  auto* failing = gpu(b, 20 * kSecond);  // a double-bit error in the second ending at 20 s
  failing->set_ecc_dbe(1);
  failing->set_remapped_rows_uncorrectable(1);
  gpu(b, 21 * kSecond);
  series.observe(b);
  const std::vector<Series> all = series.series(60 * kSecond);
  const Series& dbe = find(all, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL");
  EXPECT_EQ(dbe.type, "counter");
  EXPECT_EQ(values(dbe), (std::vector<double>{0, 1, 1, 1}));  // scrapes at 15, 30, 45, 60 s
  EXPECT_EQ(values(find(all, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS")), (std::vector<double>{0, 1, 1, 1}));
  // Energy in mJ: 500 W for every second sampled.
  EXPECT_EQ(values(find(all, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")),
            (std::vector<double>{15 * 500e3, 30 * 500e3, 45 * 500e3, 60 * 500e3}));
}

}  // namespace
}  // namespace gauntlet::harness
