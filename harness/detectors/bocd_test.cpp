#include "harness/detectors/bocd.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "sim/rng.hpp"

namespace gauntlet::harness {
namespace {

// Box-Muller on the project's portable uniform draws.
double normal(sim::Rng& rng, double mean, double sd) {
  double u1 = 1.0 - rng.uniform();  // (0, 1]: log stays finite
  double u2 = rng.uniform();
  return mean + sd * std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

BocdConfig config_for(double mean, double sd) {
  BocdConfig c;
  c.hazard = 1.0 / 200;
  c.max_run = 512;
  c.prior = {mean, 0.1, 1.0, sd * sd};
  c.confirm = 10;
  return c;
}

std::vector<std::uint64_t> run(Bocd& bocd, const std::vector<double>& xs) {
  std::vector<std::uint64_t> found;
  for (double x : xs)
    if (auto cp = bocd.push(x)) found.push_back(*cp);
  return found;
}

TEST(Bocd, FindsStepChangeInNoisySeries) {
  for (std::uint64_t seed : {1, 2, 3, 4, 5}) {
    sim::Rng rng = sim::RngStreams(seed).stream("bocd-step");
    std::vector<double> xs;
    for (int i = 0; i < 300; ++i) xs.push_back(normal(rng, 10.0, 0.3));
    for (int i = 0; i < 200; ++i) xs.push_back(normal(rng, 11.5, 0.3));
    Bocd bocd(config_for(10.0, 0.3));
    auto found = run(bocd, xs);
    ASSERT_EQ(found.size(), 1u) << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(found[0]), 300.0, 2.0) << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(bocd.map_segment_start()), 300.0, 2.0);
    EXPECT_EQ(bocd.map_run_length(), 500 - bocd.map_segment_start());
  }
}

TEST(Bocd, ReportsChangeOnlyAfterConfirmation) {
  sim::Rng rng = sim::RngStreams(9).stream("bocd-confirm");
  Bocd bocd(config_for(5.0, 0.1));
  for (int i = 0; i < 100; ++i) ASSERT_FALSE(bocd.push(normal(rng, 5.0, 0.1)));
  // The new level is obvious at once, yet it is reported only on the 10th point.
  for (int i = 0; i < 9; ++i) ASSERT_FALSE(bocd.push(normal(rng, 7.0, 0.1))) << i;
  EXPECT_GT(bocd.probability_change_since(100), 0.99);
  auto cp = bocd.push(normal(rng, 7.0, 0.1));
  ASSERT_TRUE(cp);
  EXPECT_EQ(*cp, 100u);
}

TEST(Bocd, StationaryNoisySeriesRaisesNothing) {
  for (std::uint64_t seed : {11, 12, 13}) {
    sim::Rng rng = sim::RngStreams(seed).stream("bocd-flat");
    std::vector<double> xs;
    for (int i = 0; i < 1000; ++i) xs.push_back(normal(rng, 3.0, 0.2));
    Bocd bocd(config_for(3.0, 0.2));
    EXPECT_TRUE(run(bocd, xs).empty()) << "seed " << seed;
    EXPECT_EQ(bocd.map_segment_start(), 0u);
    EXPECT_LT(bocd.probability_change_since(900), 0.05);
  }
}

TEST(Bocd, ModerateOutliersAreNotChanges) {
  sim::Rng rng = sim::RngStreams(21).stream("bocd-outlier");
  Bocd bocd(config_for(1.0, 0.01));
  std::vector<double> xs;
  for (int i = 0; i < 400; ++i) xs.push_back(i % 100 == 50 ? 1.035 : normal(rng, 1.0, 0.01));
  EXPECT_TRUE(run(bocd, xs).empty());
}

TEST(Bocd, ExtremeOutlierRestartsTheSegmentButIsNotReportedAsOne) {
  // The Gaussian segment model has no notion of an outlier: after a wild
  // value it may start a new segment. What it reports must then begin after
  // the outlier, at the (unchanged) level, so a mean-shift guard can reject it.
  sim::Rng rng = sim::RngStreams(22).stream("bocd-outlier");
  Bocd bocd(config_for(1.0, 0.01));
  std::vector<double> xs;
  for (int i = 0; i < 400; ++i) xs.push_back(i == 200 ? 1.5 : normal(rng, 1.0, 0.01));
  for (auto cp : run(bocd, xs)) EXPECT_NE(cp, 200u);
}

TEST(Bocd, MemoryStaysBoundedAndLateChangesAreStillFound) {
  sim::Rng rng = sim::RngStreams(31).stream("bocd-long");
  BocdConfig c = config_for(2.0, 0.05);
  c.max_run = 64;
  Bocd bocd(c);
  std::vector<double> xs;
  for (int i = 0; i < 5000; ++i) xs.push_back(normal(rng, 2.0, 0.05));
  for (int i = 0; i < 50; ++i) xs.push_back(normal(rng, 1.7, 0.05));
  auto found = run(bocd, xs);
  EXPECT_LE(bocd.hypotheses(), 64u);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(static_cast<double>(found[0]), 5000.0, 2.0);
}

TEST(Bocd, PosteriorIsNormalized) {
  sim::Rng rng = sim::RngStreams(41).stream("bocd-norm");
  Bocd bocd(config_for(0.0, 1.0));
  for (int i = 0; i < 50; ++i) {
    bocd.push(normal(rng, 0.0, 1.0));
    EXPECT_NEAR(bocd.probability_change_since(0), 1.0, 1e-9);
  }
  // With constant hazard the newest hypothesis is one of many; it must not
  // dominate a stationary series.
  EXPECT_LT(bocd.changepoint_probability(), 0.1);
}

TEST(Bocd, RejectsBadConfig) {
  BocdConfig c;
  c.hazard = 0;
  EXPECT_THROW(Bocd{c}, std::invalid_argument);
  c.hazard = 0.01;
  c.prior.beta = 0;
  EXPECT_THROW(Bocd{c}, std::invalid_argument);
}

}  // namespace
}  // namespace gauntlet::harness
