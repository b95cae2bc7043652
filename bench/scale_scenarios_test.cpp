#include "bench/scale_scenarios.hpp"

#include <gtest/gtest.h>

#include <set>

#include "harness/detectors/registry.hpp"
#include "harness/scenario/loader.hpp"

namespace gauntlet::bench {
namespace {

// Every draw is a scenario the loader accepts, inside the envelope the scale
// targets name: 16,384 GPUs for an hour, micro-batches 4-32, gradients 1-8
// GB, activations 32-256 MB, 128-1,024 leaves, 1-6 faults, six detectors.
TEST(ScaleScenarios, DrawsAreValidScenariosInsideTheEnvelope) {
  const harness::DetectorRegistry registry = harness::builtin_detectors();
  std::set<std::string> fault_types;
  std::set<int> pipeline_depths;
  for (std::uint64_t k = 0; k < 40; ++k) {
    const ScaleDraw draw = scale_scenario(1, k, 16'384);
    const harness::Scenario s = harness::parse_scenario(draw.yaml, "draw.yaml", registry);
    EXPECT_EQ(s.duration, sim::kHour);
    EXPECT_EQ(s.job.gpus, 16'384);
    EXPECT_GE(s.job.microbatches, 4);
    EXPECT_LE(s.job.microbatches, 32);
    EXPECT_GE(s.job.gradient_bytes, 1e9);
    EXPECT_LE(s.job.gradient_bytes, 8e9);
    EXPECT_GE(s.job.activation_bytes, 32e6);
    EXPECT_LE(s.job.activation_bytes, 256e6);
    EXPECT_GE(s.cluster.leaves, 128);
    EXPECT_LE(s.cluster.leaves, 1024);
    EXPECT_GE(s.faults.size(), 1u) << draw.yaml;
    EXPECT_LE(s.faults.size(), 6u);
    EXPECT_EQ(s.detectors.size(), 6u);
    for (const auto& f : s.faults) fault_types.insert(f.type);
    pipeline_depths.insert(s.job.parallelism.pp);
  }
  // Forty draws reach most fault types and several pipeline depths.
  EXPECT_GE(fault_types.size(), 8u);
  EXPECT_GE(pipeline_depths.size(), 4u);
}

TEST(ScaleScenarios, TheSameDrawGivesTheSameTextAndOthersDiffer) {
  EXPECT_EQ(scale_scenario(3, 5, 16'384).yaml, scale_scenario(3, 5, 16'384).yaml);
  EXPECT_NE(scale_scenario(3, 5, 16'384).yaml, scale_scenario(3, 6, 16'384).yaml);
  EXPECT_NE(scale_scenario(3, 5, 16'384).yaml, scale_scenario(4, 5, 16'384).yaml);
}

TEST(ScaleScenarios, LargerJobsScaleTheFabric) {
  const harness::DetectorRegistry registry = harness::builtin_detectors();
  const harness::Scenario s = harness::parse_scenario(scale_scenario(1, 0, 65'536).yaml, "draw.yaml", registry);
  EXPECT_EQ(s.job.gpus, 65'536);
  EXPECT_GE(s.cluster.leaves, 4 * 128);
  EXPECT_THROW(scale_scenario(1, 0, 1000), std::invalid_argument);
}

}  // namespace
}  // namespace gauntlet::bench
