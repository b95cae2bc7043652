// Each case is a value that once validated and then crashed, hung or ate
// gigabytes: now it is refused at its position with the limit named.
#include "harness/scenario/limits.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"
#include "harness/scenario/loader.hpp"

namespace gauntlet::harness {
namespace {

std::string demo_text() {
  std::ifstream in(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/demo.yaml");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The demo with `from` replaced by `to`; the error of loading it ("" if none).
std::string error_with(const std::string& from, const std::string& to) {
  std::string text = demo_text();
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return "";
  text.replace(at, from.size(), to);
  try {
    parse_scenario(text, "s.yaml", builtin_detectors());
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

void expect_refused(const std::string& from, const std::string& to, const std::string& where,
                    const std::string& fragment) {
  const std::string error = error_with(from, to);
  EXPECT_EQ(error.rfind("s.yaml:" + where + ": ", 0), 0u) << to << ": " << error;
  EXPECT_NE(error.find(fragment), std::string::npos) << to << ": " << error;
}

TEST(ScenarioLimits, ClusterSizesPastTheLimitsAreRefusedBeforeBuilding) {
  expect_refused("hosts: 16", "hosts: 10000000", "11:10", "limit of 65536");
  expect_refused("hosts: 16", "hosts: 300000000", "11:10", "limit of 65536");
  expect_refused("gpus_per_host: 8", "gpus_per_host: 100000", "12:18", "limit of 16");
  expect_refused("spines: 4", "spines: 1000000", "9:11", "limit of 4096");
}

TEST(ScenarioLimits, NonsenseLinkAndJobValuesAreOutOfRange) {
  expect_refused("host_link_gbps: 400", "host_link_gbps: 1e-300", "15:19", "within 0.1..100000");
  expect_refused("link_latency: 1us", "link_latency: 1h", "17:17", "limit of 1s");
  expect_refused("gradient_bytes: 4GB", "gradient_bytes: 2000TB", "23:19", "limit of");
  expect_refused("compute_per_iteration: 2s", "compute_per_iteration: 2s\n  channels: 100000000", "23:13",
                 "limit of 64");
}

TEST(ScenarioLimits, DurationsCannotOverflow) {
  expect_refused("duration: 20m", "duration: 9223372036.9s", "6:11", "longer than the limit");
  expect_refused("duration: 20m", "duration: 106751d", "6:11", "longer than the limit");
}

TEST(ScenarioLimits, AFlapEveryTwoNanosecondsIsTooManyEvents) {
  expect_refused("  - {type: gpu_throttle, target: h5.gpu2, at: 12m, duration: 5m, slowdown: 0.2}",
                 "  - {type: port_flap, target: h5.nic2~leaf2, at: 12m, duration: 5m, period: 2ns, down: 1ns}", "26:1",
                 "events per simulated second");
}

TEST(ScenarioLimits, TheEstimateRefusesWhatWouldNotFitInMemory) {
  // 65,536 hosts of 16 GPUs and 16 RNICs: every value within its own limit.
  std::string error = error_with("  hosts: 16\n  gpus_per_host: 8\n  rnics_per_host: 8",
                                 "  hosts: 65536\n  gpus_per_host: 16\n  rnics_per_host: 16");
  EXPECT_NE(error.find("MiB, more than the limit of 8192 MiB"), std::string::npos) << error;
  // The demo itself is far inside: a small estimate, bounded from below by its measured 42 MiB.
  const RunEstimate demo =
      estimate_run(load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/demo.yaml", builtin_detectors()));
  EXPECT_GT(demo.bytes, 42.0 * (1 << 20));
  EXPECT_LT(demo.bytes, 256.0 * (1 << 20));
  EXPECT_EQ(demo.fault_events, 4);
}

TEST(ScenarioLimits, TheFaultTotalIsCheckedBeforeEachEveryEntryIsExpanded) {
  // Two entries of 600,000 faults each: the second is refused at its own line.
  expect_refused("  - {type: gpu_throttle, target: h5.gpu2, at: 12m, duration: 5m, slowdown: 0.2}",
                 "  - {type: gpu_throttle, target: h5.gpu2, at: 0s, every: 2ms, duration: 1ms, slowdown: 0.2}\n"
                 "  - {type: gpu_throttle, target: h5.gpu3, at: 0s, every: 2ms, duration: 1ms, slowdown: 0.2}",
                 "30:47", "would produce more than 1000000 faults");
}

TEST(ScenarioLimits, LongStringsAndHugeOrSpecialFilesAreRefused) {
  expect_refused("  name: llm", "  name: " + std::string(5000, 'x'), "19:9", "limit of 4096");
  const std::filesystem::path big =
      std::filesystem::temp_directory_path() / ("gauntlet-big-" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(big);
    out << demo_text() << "# " << std::string(kMaxInputFileBytes, 'x') << "\n";
  }
  try {
    load_scenario(big.string(), builtin_detectors());
    ADD_FAILURE() << "a file over the limit loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(big.string() + ":1:1: the file has"), std::string::npos) << e.what();
  }
  std::filesystem::remove(big);
  EXPECT_THROW(load_scenario("/dev/zero", builtin_detectors()), InputError);
  EXPECT_THROW(load_scenario(GAUNTLET_SOURCE_DIR, builtin_detectors()), InputError);
}

}  // namespace
}  // namespace gauntlet::harness
