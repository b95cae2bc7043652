#include "harness/probe_plan/detection_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gauntlet::harness {
namespace {

TEST(DetectionModel, AOnePercentLinkFailsAboutAThirdOfTwentyPingTrains) {
  // Each of 20 pings and its reply cross the link: 1 - 0.99^40.
  EXPECT_NEAR(train_failure_probability({FaultSite::fabric_link, 0.01}, 20), 0.331, 0.001);
  // A flow table is crossed once a round trip.
  EXPECT_NEAR(train_failure_probability({FaultSite::flow_table, 0.01}, 20), 0.182, 0.001);
  EXPECT_EQ(train_failure_probability({FaultSite::host_link, 1.0}, 20), 1.0);
}

TEST(DetectionModel, RoundsAlikeGiveHalfARoundThenGeometricRounds) {
  // One chance a round at its start, seen with probability p and read a
  // round later: T/2 to the next round, T to its read, T (1 - p) / p more.
  const double round = 30, p = 0.25;
  const double mean = mean_detection_s({{0, p, round}}, round);
  EXPECT_NEAR(mean, round / 2 + round + round * (1 - p) / p, 1e-9);
  // Two rounds a cycle, the fault seen only in the first: a round more on average.
  const double alternate = mean_detection_s({{0, p, round}}, 2 * round);
  EXPECT_NEAR(alternate, round + round + 2 * round * (1 - p) / p, 1e-9);
  EXPECT_TRUE(std::isinf(mean_detection_s({}, round)));
}

TEST(DetectionModel, ACertainChanceIsReadAfterTheWaitForIt) {
  // Seen for sure at 10 s into each 40 s cycle, read 5 s later: the wait is
  // uniform over the cycle (20 s on average).
  EXPECT_NEAR(mean_detection_s({{10, 1.0, 5}}, 40), 25, 1e-9);
}

TEST(DetectionModel, ComponentsNoProbeCrossesAreNeverProbed) {
  sim::ClusterShape shape;
  shape.spines = 2;
  shape.leaves = 2;
  shape.hosts = 2;
  shape.gpus_per_host = 1;
  shape.rnics_per_host = 1;
  shape.rail_optimized = false;
  const sim::Topology t(shape);
  ProbeSchedule s;
  s.round_seconds = 10;
  s.slot_seconds = 2;
  s.slots_per_round = 5;
  s.fixed.assign(static_cast<std::size_t>(t.links() + t.endpoints()), {});
  s.fixed[static_cast<std::size_t>(t.fabric_link(0, 1))].push_back({0, 3, 3});
  const ClassPrediction fabric = predict_class(t, s, {FaultSite::fabric_link, 1.0}, 20);
  EXPECT_EQ(fabric.components, 4);
  EXPECT_EQ(fabric.never_probed, 3);
  // A link down fails every probe: seen in the first round after the onset.
  EXPECT_NEAR(fabric.mean_s, 5 + 10, 1e-9);
}

}  // namespace
}  // namespace gauntlet::harness
