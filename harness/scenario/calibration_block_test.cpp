#include "harness/scenario/calibration_block.hpp"

#include <gtest/gtest.h>

#include <string>

#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"
#include "models/calibration.hpp"
#include "models/packet_transport_calibration.hpp"

namespace gauntlet::harness {
namespace {

namespace k = models::calibration;

const char* const kBase = R"(name: calibrated
seed: 1
duration: 10m
cluster: {spines: 1, leaves: 1, hosts: 2, gpus_per_host: 2, rnics_per_host: 1}
job: {gpus: 4, parallelism: {tp: 2, dp: 2}, compute_per_iteration: 1s, gradient_bytes: 1GB}
)";

Scenario parse_with(const std::string& block) {
  return parse_scenario(std::string(kBase) + block, "cal.yaml", DetectorRegistry{});
}

// The error raised by the block, as "file:line:col: message".
std::string error_of(const std::string& block) {
  try {
    parse_with(block);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CalibrationBlock, SetsTheNamedAttributesAndLeavesTheRestAtTheirDefaults) {
  const Scenario s =
      parse_with("calibration:\n  probe.processing: 10us\n  gpu.hot_temperature: 80\n  probe.pings: 5\n");
  EXPECT_EQ(s.calibration.duration(k::kProbeProcessing), 10 * sim::kMicrosecond);
  EXPECT_DOUBLE_EQ(s.calibration.value(k::kGpuHotTemperature), 80);
  EXPECT_EQ(s.calibration.count(k::kProbePings), 5);
  EXPECT_FALSE(s.calibration.is_set(k::kGpuBusyTemperature));
  EXPECT_DOUBLE_EQ(s.calibration.value(k::kGpuBusyTemperature), 50);
  EXPECT_TRUE(parse_with("").calibration.empty());
  EXPECT_TRUE(parse_with("calibration:\n").calibration.empty());
}

TEST(CalibrationBlock, AnUnknownNameIsReportedAtItsKeyWithItsGroupsNames) {
  const std::string error = error_of("calibration:\n  probe.processing: 10us\n  probe.rtt: 2us\n");
  EXPECT_EQ(error.rfind("cal.yaml:8:3: unknown calibration attribute 'probe.rtt'", 0), 0u) << error;
  EXPECT_NE(error.find("probe.ping_interval"), std::string::npos) << error;
  const std::string no_group = error_of("calibration:\n  warp.drive: 9\n");
  EXPECT_NE(no_group.find("gpu.*"), std::string::npos) << no_group;
}

TEST(CalibrationBlock, AValueInTheWrongUnitIsReportedAtTheValue) {
  EXPECT_EQ(error_of("calibration:\n  probe.processing: 6\n").rfind("cal.yaml:7:21: ", 0), 0u);
  EXPECT_EQ(error_of("calibration:\n  probe.processing: 6GB\n").rfind("cal.yaml:7:21: ", 0), 0u);
  EXPECT_EQ(error_of("calibration:\n  rnic.mtu: 4096\n").rfind("cal.yaml:7:13: ", 0), 0u);
  EXPECT_EQ(error_of("calibration:\n  gpu.hot_temperature: 70C\n").rfind("cal.yaml:7:24: ", 0), 0u);
  EXPECT_EQ(error_of("calibration:\n  probe.pings: 2.5\n").rfind("cal.yaml:7:16: ", 0), 0u);
  EXPECT_EQ(error_of("calibration:\n  gpu.clock: [1980]\n").rfind("cal.yaml:7:14: ", 0), 0u);
  EXPECT_EQ(error_of("calibration: 4s\n").rfind("cal.yaml:6:14: ", 0), 0u);
}

TEST(CalibrationBlock, AValueOutOfRangeIsReportedWithTheRange) {
  const std::string error = error_of("calibration:\n  gpu.hot_slowdown: 1.5\n");
  EXPECT_EQ(error.rfind("cal.yaml:7:21: 'calibration.gpu.hot_slowdown' must be between 0.001 and 1, got 1.5", 0), 0u)
      << error;
  const std::string duration = error_of("calibration:\n  agent.heartbeat_interval: 2h\n");
  EXPECT_NE(duration.find("between 1ms and 1h, got 2h"), std::string::npos) << duration;
  EXPECT_EQ(error_of("calibration:\n  probe.pings: 0\n").rfind("cal.yaml:7:16: ", 0), 0u);
}

TEST(CalibrationBlock, TheQueuePairsNcclSettingsAreWholeNumbersInTheirVerbsRanges) {
  const Scenario s = parse_with("calibration:\n  transport.ib_timeout: 14\n  transport.ib_retry_count: 3\n");
  EXPECT_EQ(s.calibration.count(k::kIbTimeout), 14);
  EXPECT_EQ(s.calibration.count(k::kIbRetryCount), 3);
  EXPECT_EQ(parse_with("").calibration.count(k::kIbTimeout), 20);  // NCCL 2.23.4's default
  // The verbs fields are 5 and 3 bits wide; a timeout of 0 waits forever.
  const std::string zero = error_of("calibration:\n  transport.ib_timeout: 0\n");
  EXPECT_EQ(zero.rfind("cal.yaml:7:25: ", 0), 0u) << zero;
  EXPECT_NE(zero.find("between 1 and 31"), std::string::npos) << zero;
  EXPECT_EQ(error_of("calibration:\n  transport.ib_timeout: 32\n").rfind("cal.yaml:7:25: ", 0), 0u);
  EXPECT_EQ(error_of("calibration:\n  transport.ib_retry_count: 8\n").rfind("cal.yaml:7:29: ", 0), 0u);
  EXPECT_EQ(error_of("calibration:\n  transport.ib_retry_count: 2.5\n").rfind("cal.yaml:7:29: ", 0), 0u);
  EXPECT_EQ(error_of("calibration:\n  transport.retransmit_initial_timeout: 1\n").rfind("cal.yaml:7:41: ", 0), 0u);
}

TEST(CalibrationBlock, ANameSetTwiceIsAnError) {
  EXPECT_EQ(error_of("calibration:\n  gpu.clock: 1500\n  gpu.clock: 1600\n").rfind("cal.yaml:8:3: duplicate key", 0),
            0u);
}

// Every attribute's default lies in its range, and the text `gauntlet
// validate --calibration` prints for it reads back as the same value.
TEST(CalibrationBlock, EveryDefaultIsInRangeAndRoundTripsThroughTheBlock) {
  std::string block = "calibration:\n";
  for (const sim::Attribute* a : calibration_attributes().all()) {
    EXPECT_GE(a->default_value, a->min) << a->name;
    EXPECT_LE(a->default_value, a->max) << a->name;
    EXPECT_FALSE(a->doc.empty()) << a->name;
    block += "  " + std::string(a->name) + ": " + sim::format_attribute_value(*a, a->default_value) + "\n";
  }
  const Scenario s = parse_with(block);
  for (const sim::Attribute* a : calibration_attributes().all()) {
    EXPECT_TRUE(s.calibration.is_set(*a)) << a->name;
    EXPECT_EQ(s.calibration.value(*a), a->default_value) << a->name;
  }
}

}  // namespace
}  // namespace gauntlet::harness
