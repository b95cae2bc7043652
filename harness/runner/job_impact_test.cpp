// Which faults affected the job, judged on the placement it had: after a
// re-placement onto a slower spot the job's iterations stay slower than the
// fault-free run's, and that alone must not make later faults impactful.
#include "harness/runner/job_impact.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness {
namespace {

constexpr sim::Nanos kSecond = sim::kSecond;

models::IterationSpan span(double start_s, std::uint64_t count, double duration_s) {
  return {0, count, static_cast<sim::Nanos>(start_s * 1e9), static_cast<sim::Nanos>(duration_s * 1e9)};
}

// 1,000 s at 2 s an iteration, no fault.
SimulationOutcome fault_free_run() {
  SimulationOutcome run;
  run.timeline = {span(0, 500, 2.0)};
  run.placements = {{0, {0, 1}}};
  return run;
}

// A crash of host 1 at 200 s: hung until 300 s, restarted on host 2 at
// 300 s, where iterations take 2.02 s (rings through the spines) for good.
SimulationOutcome replaced_run() {
  SimulationOutcome run;
  run.timeline = {span(0, 100, 2.0), span(300, 346, 2.02)};
  run.placements = {{0, {0, 1}}, {300 * kSecond, {0, 2}}};
  return run;
}

TEST(JobImpact, ASlowerPlacementIsNotEveryLaterFaultsDoing) {
  const std::vector<FaultWindow> faults = {
      {"h1", 200, 1000, false},          // the crash that moved the job
      {"h3.gpu0", 500, 600, false},      // a host the job never used
      {"h1.gpu0", 500, 600, false},      // the host it left
      {"leaf0~spine0", 700, 800, false}  // the fabric; no slower than the placement
  };
  const SimulationOutcome faulty = replaced_run(), free = fault_free_run();
  const JobImpact impact(faulty, free, faults, 0.001, 1000);
  EXPECT_TRUE(impact.affected(0)) << "the crash stopped the job";
  EXPECT_FALSE(impact.affected(1)) << "never on a host the job used";
  EXPECT_FALSE(impact.affected(2)) << "the job had left that host";
  EXPECT_FALSE(impact.affected(3)) << "1% slower is the new placement's pace, not the link's";
}

TEST(JobImpact, SlowerThanItsPlacementIsImpactful) {
  SimulationOutcome faulty = replaced_run();
  // 600-700 s: 2.2 s iterations on the new placement (a throttled GPU of host 2).
  faulty.timeline = {span(0, 100, 2.0), span(300, 149, 2.02), span(600.98, 45, 2.2), span(699.98, 148, 2.02)};
  const std::vector<FaultWindow> faults = {{"h1", 200, 1000, false}, {"h2.gpu3", 600, 700, false}};
  const SimulationOutcome free = fault_free_run();
  EXPECT_TRUE(JobImpact(faulty, free, faults, 0.001, 1000).affected(1));
  // Within the margin: 0.05% slower than the placement's own pace.
  faulty.timeline = {span(0, 100, 2.0), span(300, 149, 2.02), span(600.98, 50, 2.021), span(702.03, 147, 2.02)};
  EXPECT_FALSE(JobImpact(faulty, free, faults, 0.001, 1000).affected(1));
  EXPECT_TRUE(JobImpact(faulty, free, faults, 0.0001, 1000).affected(1)) << "a finer margin sees it";
}

TEST(JobImpact, ComparesWithTheFaultFreeRunAtTheSameTime) {
  // The healthy fleet's pace changes at 500 s in both runs: the first half
  // at 2 s, the second at 2.1 s. A fault in the second half that does not
  // touch the job is latent, though 5% above the whole run's mean.
  SimulationOutcome free;
  free.timeline = {span(0, 250, 2.0), span(500, 238, 2.1)};
  free.placements = {{0, {0, 1}}};
  SimulationOutcome faulty = free;
  const JobImpact impact(faulty, free, {{"leaf0~spine0", 600, 700, false}}, 0.001, 1000);
  EXPECT_FALSE(impact.affected(0));
}

TEST(JobImpact, HostOfAComponent) {
  EXPECT_EQ(JobImpact::host_of("h7"), 7);
  EXPECT_EQ(JobImpact::host_of("h7.gpu3"), 7);
  EXPECT_EQ(JobImpact::host_of("h7.nic1~leaf1"), 7);
  EXPECT_EQ(JobImpact::host_of("leaf1~spine0"), std::nullopt);
  EXPECT_EQ(JobImpact::host_of(""), std::nullopt);
}

}  // namespace
}  // namespace gauntlet::harness
