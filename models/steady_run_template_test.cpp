#include "models/steady_run_template.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace gauntlet::models {
namespace {

std::vector<telemetry::Record> iteration_records(sim::Nanos start) {
  std::vector<telemetry::Record> records;
  for (int rank = 0; rank < 3; ++rank) {
    telemetry::Record it;
    it.mutable_iteration()->set_worker("h" + std::to_string(rank) + ".gpu0");
    it.mutable_iteration()->set_iteration(7);
    it.mutable_iteration()->set_start_ns(start);
    it.mutable_iteration()->set_end_ns(start + 900);
    records.push_back(it);
    telemetry::Record c;
    auto* col = c.mutable_collective();
    col->set_communicator("dp0");
    col->set_rank(rank);
    col->set_worker("h" + std::to_string(rank) + ".gpu0");
    col->set_peer("h" + std::to_string((rank + 1) % 3) + ".gpu0");
    col->set_sequence(7);
    col->set_start_ns(start + 100);
    col->set_end_ns(rank == 2 ? 0 : start + 800);  // a rank still waiting keeps end 0
    records.push_back(c);
  }
  return records;
}

std::vector<const telemetry::Record*> pointers(const std::vector<telemetry::Record>& records) {
  std::vector<const telemetry::Record*> out;
  for (const telemetry::Record& r : records) out.push_back(&r);
  return out;
}

// What a stretch must read: every record shifted and renumbered, field by field.
void expect_stretch(const telemetry::SteadyRun& run, const std::vector<telemetry::Record>& base,
                    const SteadyStretch& stretch) {
  EXPECT_EQ(run.first_iteration(), stretch.first_iteration);
  EXPECT_EQ(run.last_iteration(), stretch.first_iteration + stretch.count - 1);
  EXPECT_EQ(run.period_ns(), stretch.period);
  ASSERT_EQ(run.records_size(), static_cast<int>(base.size()));
  for (std::size_t i = 0; i < base.size(); ++i) {
    telemetry::Record want = base[i];
    if (want.has_iteration()) {
      want.mutable_iteration()->set_iteration(stretch.first_iteration);
      want.mutable_iteration()->set_start_ns(base[i].iteration().start_ns() + stretch.shift);
      want.mutable_iteration()->set_end_ns(base[i].iteration().end_ns() + stretch.shift);
    } else if (want.has_collective()) {
      want.mutable_collective()->set_sequence(stretch.first_iteration);
      want.mutable_collective()->set_start_ns(base[i].collective().start_ns() + stretch.shift);
      if (base[i].collective().end_ns() != 0)
        want.mutable_collective()->set_end_ns(base[i].collective().end_ns() + stretch.shift);
    }
    EXPECT_EQ(run.records(static_cast<int>(i)).SerializeAsString(), want.SerializeAsString()) << "record " << i;
  }
}

TEST(SteadyRunTemplate, EachLentStretchReadsAsItsOwnShiftedCopyAndCountsItsExactSize) {
  const std::vector<telemetry::Record> base = iteration_records(1000);
  sim::TelemetryBus bus;
  SteadyRunTemplate steady;
  const std::uint64_t version = bus.next_records_version();
  // The second stretch's times cross a varint width (2^35 ns), the third's
  // iteration numbers one (2^14): the counted size must follow both.
  const std::vector<SteadyStretch> stretches = {
      {8, 5, 1000, 1000}, {13, 40, 1000, (sim::Nanos{1} << 35) - 950}, {20000, 3, 1000, sim::Nanos{1} << 36}};
  for (const SteadyStretch& stretch : stretches) {
    const std::uint64_t before = bus.published_bytes();
    steady.publish(bus, pointers(base), version, stretch);
    const telemetry::Batch batch = bus.drain(sim::Nanos{1} << 40);
    ASSERT_EQ(batch.steady_size(), 1);
    expect_stretch(batch.steady(0), base, stretch);
    EXPECT_EQ(bus.published_bytes() - before, batch.steady(0).ByteSizeLong());
  }
}

TEST(SteadyRunTemplate, ANewTimeScaleCountsTheIterationRecordsNewComputeTimesExactly) {
  std::vector<telemetry::Record> base = iteration_records(1000);
  // 16,383 ns is the widest two-byte varint: scaled up it takes three bytes,
  // scaled down again two.
  for (telemetry::Record& r : base)
    if (r.has_iteration()) r.mutable_iteration()->set_compute_ns(16383);
  sim::TelemetryBus bus;
  SteadyRunTemplate steady;
  const std::uint64_t version = bus.next_records_version();
  sim::Nanos shift = 1000;
  for (const double scale : {1.0, 1.01, 1.02, 0.5, 1.0}) {
    const std::uint64_t before = bus.published_bytes();
    steady.publish(bus, pointers(base), version,
                   {.first_iteration = 8, .count = 5, .period = 1000, .shift = shift, .origin = 1000, .scale = scale});
    const telemetry::Batch batch = bus.drain(sim::Nanos{1} << 40);
    ASSERT_EQ(batch.steady_size(), 1);
    EXPECT_EQ(batch.steady(0).records(0).iteration().compute_ns(), std::llround(16383 * scale)) << scale;
    EXPECT_EQ(bus.published_bytes() - before, batch.steady(0).ByteSizeLong()) << "at scale " << scale;
    shift += 5000;
  }
}

TEST(SteadyRunTemplate, TwoStretchesInOneBatchStayApart) {
  const std::vector<telemetry::Record> base = iteration_records(1000);
  sim::TelemetryBus bus;
  SteadyRunTemplate steady;
  const std::uint64_t version = bus.next_records_version();
  const SteadyStretch first{8, 2, 1000, 1000}, second{10, 3, 1000, 3000};
  steady.publish(bus, pointers(base), version, first);
  steady.publish(bus, pointers(base), version, second);  // the first is still pending: copied
  const telemetry::Batch batch = bus.drain(10000);
  ASSERT_EQ(batch.steady_size(), 2);
  expect_stretch(batch.steady(0), base, first);
  expect_stretch(batch.steady(1), base, second);
}

TEST(SteadyRunTemplate, NewRecordsReplaceTheOldOnesAndOtherKindsAreCopied) {
  sim::TelemetryBus bus;
  SteadyRunTemplate steady;
  const std::vector<telemetry::Record> old_records = iteration_records(1000);
  steady.publish(bus, pointers(old_records), bus.next_records_version(), {8, 2, 1000, 1000});
  (void)bus.drain(5000);
  std::vector<telemetry::Record> records = iteration_records(50000);
  records[1].mutable_collective()->set_communicator("dp1");
  steady.publish(bus, pointers(records), bus.next_records_version(), {60, 4, 1000, 2000});
  telemetry::Batch batch = bus.drain(70000);
  ASSERT_EQ(batch.steady_size(), 1);
  expect_stretch(batch.steady(0), records, {60, 4, 1000, 2000});
  // A kind a stretch does not rewrite is published as it is.
  telemetry::Record sample;
  sample.mutable_gpu()->set_gpu("h0.gpu0");
  sample.mutable_gpu()->set_time_ns(50000);
  records.push_back(sample);
  steady.publish(bus, pointers(records), bus.next_records_version(), {64, 4, 1000, 6000});
  batch = bus.drain(90000);
  ASSERT_EQ(batch.steady_size(), 1);
  expect_stretch(batch.steady(0), records, {64, 4, 1000, 6000});
}

}  // namespace
}  // namespace gauntlet::models
