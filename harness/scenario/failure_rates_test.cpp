#include "harness/scenario/failure_rates.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"

namespace gauntlet::harness {
namespace {

const std::string kTrace = std::string(GAUNTLET_SOURCE_DIR) + "/data/infinitehbd-trace/fault_trace.json";

Scenario parse(int hosts, const std::string& duration, const std::string& entry, int seed) {
  const std::string text = "name: rates\nseed: " + std::to_string(seed) + "\nduration: " + duration +
                           "\ncluster: {spines: 8, leaves: 256, hosts: " + std::to_string(hosts) +
                           ", gpus_per_host: 8, rnics_per_host: 8}\n"
                           "job: {gpus: 64, parallelism: {tp: 8, dp: 8}, compute_per_iteration: 1m, "
                           "gradient_bytes: 1GB}\nfaults:\n" +
                           entry;
  return parse_scenario(text, "s.yaml", builtin_detectors());
}

// Mean count per fault type over `seeds` seeds.
std::map<std::string, double> mean_counts(int hosts, const std::string& duration, const std::string& entry, int seeds) {
  std::map<std::string, double> counts;
  for (int seed = 1; seed <= seeds; ++seed)
    for (const auto& fault : parse(hosts, duration, entry, seed).faults) counts[fault.type] += 1.0 / seeds;
  return counts;
}

TEST(FailureRates, C4dPresetCrashesAFourThousandGpuJobFortyTimesAMonth) {
  // 512 hosts of 8 GPUs: the preset's 4,096 GPUs, 30 days, 20 seeds.
  const auto counts = mean_counts(512, "30d", "  - {preset: c4d, repair: 6h}\n", 20);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_NEAR(counts.at("gpu_fail"), 40, 3 * std::sqrt(40.0 / 20));
  const Scenario one = parse(512, "30d", "  - {preset: c4d, repair: 6h}\n", 1);
  for (const auto& fault : one.faults) EXPECT_EQ(fault.duration, 6 * sim::kHour);
}

TEST(FailureRates, Llama3PresetGivesItsInterruptionsByCause) {
  // 16,384 GPUs for 54 days, 20 seeds: each of Table 5's causes
  // (/work/shared/reference/llama3-table5.csv, "The Llama 3 Herd of
  // Models", Table 5) as many times as the table counts it, within 3 sigma
  // of a Poisson count, each recorded as its cause and acting as the fault
  // type whose signals it has.
  const int seeds = 20;
  const std::map<std::string, std::pair<std::string, double>> table5 = {
      {"Faulty GPU", {"gpu_fail", 148}},
      {"GPU HBM3 memory", {"gpu_hbm_error", 72}},
      {"Software bug", {"node_crash", 54}},
      {"Network switch/cable", {"port_flap", 35}},
      {"Host maintenance", {"node_crash", 32}},
      {"GPU SRAM memory", {"gpu_sram_error", 19}},
      {"GPU system processor", {"gpu_gsp_error", 17}},
      {"NIC", {"nic_down", 7}},
      {"NCCL watchdog timeouts", {"node_crash", 7}},
      {"Silent data corruption", {"gpu_sdc", 6}},
      {"GPU thermal interface and sensor", {"gpu_fail", 6}},
      {"SSD", {"node_crash", 3}},
      {"Power supply", {"node_crash", 3}},
      {"Server chassis", {"node_crash", 2}},
      {"IO expansion board", {"node_crash", 2}},
      {"Dependency", {"node_crash", 2}},
      {"CPU", {"node_crash", 2}},
      {"System memory", {"node_crash", 2}},
  };
  std::map<std::string, double> by_cause;
  double total = 0;
  for (int seed = 1; seed <= seeds; ++seed)
    for (const auto& fault : parse(2048, "54d", "  - {preset: llama3, repair: 3h}\n", seed).faults) {
      ASSERT_TRUE(table5.contains(fault.cause)) << "'" << fault.cause << "'";
      EXPECT_EQ(fault.type, table5.at(fault.cause).first) << fault.cause;
      by_cause[fault.cause] += 1;
      total += 1;
    }
  EXPECT_NEAR(total / seeds, 419, 3 * std::sqrt(419.0 / seeds));
  for (const auto& [cause, type_and_count] : table5) {
    const double expected = type_and_count.second * seeds;  // over all seeds, Poisson: sigma = sqrt(expected)
    EXPECT_NEAR(by_cause[cause], expected, 3 * std::sqrt(expected)) << cause;
  }
}

TEST(FailureRates, RatesFittedFromTheTraceReproduceItsCountsAndRepairs) {
  const std::string entry = "  - from_trace: " + kTrace +
                            "\n    format: infinitehbd\n    fit: {fleet: 400}\n"
                            "    map: {types: {GPU: gpu_fail, \"*\": node_crash}}\n";
  // On the trace's own fleet over its own span (348.98 days) the fitted rates
  // give back its counts: 158 GPU faults, 426 others.
  const auto counts = mean_counts(400, "348.98d", entry, 10);
  EXPECT_NEAR(counts.at("gpu_fail"), 158, 3 * std::sqrt(158.0 / 10));
  EXPECT_NEAR(counts.at("node_crash"), 426, 3 * std::sqrt(426.0 / 10));
  // Repairs: the trace's GPU repairs have a geometric mean of 8.04 h (log
  // standard deviation 2.98, each at least 8.64 s), computed from the file.
  double log_sum = 0;
  int gpu_faults = 0;
  for (int seed = 1; seed <= 10; ++seed)
    for (const auto& fault : parse(400, "348.98d", entry, seed).faults)
      if (fault.type == "gpu_fail")
        log_sum += std::log(static_cast<double>(*fault.duration) / sim::kHour), ++gpu_faults;
  EXPECT_NEAR(std::exp(log_sum / gpu_faults), 8.04, 8.04 * 0.25);
  // The same seed, the same faults.
  const auto a = parse(400, "30d", entry, 3).faults, b = parse(400, "30d", entry, 3).faults;
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i].target + std::to_string(a[i].start), b[i].target + std::to_string(b[i].start));
}

TEST(FailureRates, RepairFitAndBurstinessFollowTheirDefinitions) {
  const RepairTime fit = fit_repair({sim::kHour, 4 * sim::kHour, 16 * sim::kHour}, sim::kSecond);
  EXPECT_EQ(fit.median(), 4 * sim::kHour);  // the geometric mean of 1, 4 and 16
  EXPECT_NEAR(fit.log_sd, std::log(4.0) * std::sqrt(2.0 / 3), 1e-9);
  EXPECT_DOUBLE_EQ(interarrival_cv({0, sim::kDay, 2 * sim::kDay, 3 * sim::kDay}), 0);  // evenly spaced
  EXPECT_NEAR(interarrival_cv({0, 1, 2, 3, 10 * sim::kDay}), 1.7320, 1e-3);            // a burst, then a gap
}

TEST(FailureRates, BadPresetEntriesAreReportedAtTheirKeys) {
  auto error = [](const std::string& entry) {
    try {
      parse(512, "30d", entry, 1);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("  - {preset: google, repair: 6h}\n"),
            "s.yaml:7:14: unknown failure-rate preset 'google' (known: c4d, llama3)");
  EXPECT_EQ(error("  - {preset: c4d}\n"), "s.yaml:7:5: 'faults[0]' is missing required key 'repair'");
  EXPECT_EQ(error("  - {preset: c4d, repair: 6h, rate: 2}\n"),
            "s.yaml:7:31: unknown key 'rate' in 'faults[0]' (keys of a preset entry)");
}

}  // namespace
}  // namespace gauntlet::harness
