#include "harness/soak/case_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/soak/scenario_generator.hpp"

namespace gauntlet::harness::soak {
namespace {

TEST(CaseRunner, RunsTheGeneratedScenarioAndFindsEveryInvariantHeld) {
  const DetectorRegistry registry = builtin_detectors();
  const CaseReport report = run_case(1, 3, registry, 2);
  EXPECT_EQ(report.scenario_yaml, random_scenario_yaml(1, 3));
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();
  EXPECT_GT(report.iterations, 0u);
}

// Found by the fuzzer (seed 1, case 47, once): congestion on a leaf while
// a failed GPU kept the job stopped. The RNICs' counters read the host
// links' background rate while the job is stopped; when the load ended, the
// fabric's idle rates dropped but nothing told the RNICs' sampler, which
// kept repeating the old rate to the end of the run: the RNICs "sent" 286
// GB while their host links carried 105 GB.
TEST(CaseRunner, TheRnicsStopCountingABackgroundLoadThatEndedWhileTheJobWasStopped) {
  const std::string yaml =
      "name: stopped-job-background\nseed: 595\nduration: 360s\n"
      "cluster: {spines: 1, leaves: 2, hosts: 4, gpus_per_host: 2, rnics_per_host: 2, rail_optimized: false,"
      " host_link_gbps: 100, fabric_link_gbps: 400, link_latency: 3us}\n"
      "job: {name: fuzzjob, gpus: 8, parallelism: {tp: 2, pp: 2, dp: 2, ep: 1}, compute_per_iteration: 2000ms,"
      " gradient_bytes: 400MB, checkpoint_interval: 2m, restart_cost: 40s, activation_bytes: 8MB}\n"
      "faults:\n"
      "  - {type: congestion, target: leaf0, load: 0.5, at: 302s, duration: 15s}\n"
      "  - {type: gpu_fail, target: h1.gpu1, at: 59s, duration: 102s}\n"
      "detectors: [timeout]\nmitigation: none\n";
  const CaseReport report = check_scenario_text(yaml, builtin_detectors(), 2);
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();
  EXPECT_NE(std::find(report.checked.begin(), report.checked.end(), kByteBalance), report.checked.end());
}

}  // namespace
}  // namespace gauntlet::harness::soak
