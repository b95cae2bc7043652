#include "harness/soak/case_runner.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gauntlet::harness::soak
