// The background fabric and events against their sources: CorrOpt's
// distribution of corrupting links (Zhuo et al., SIGCOMM'17, Table 1), the
// 400G RS(544,514) FEC's design point, and the benign XIDs of NVIDIA's
// device plugin.
#include "models/fleet/background.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>

#include "sim/rng.hpp"

namespace gauntlet::models {
namespace {

sim::ClusterShape shape(int hosts) {
  sim::ClusterShape s;
  s.spines = 4;
  s.leaves = 8;
  s.hosts = hosts;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  s.rail_optimized = true;
  return s;
}

TEST(Background, CorruptionRatesFollowCorrOptsDecades) {
  // CorrOpt, Table 1: 47.23% of corrupting links at 1e-8..1e-5, 18.43% at
  // 1e-5..1e-4, 21.67% at 1e-4..1e-3, 12.67% at 1e-3..1e-2 (all four kept
  // when the background reaches 1e-2).
  sim::Rng rng(11);
  std::array<int, 4> bands{};
  const int draws = 100000;
  for (int i = 0; i < draws; ++i) {
    const double rate = draw_corruption_rate(rng.uniform(), rng.uniform(), 1e-2);
    ASSERT_GE(rate, 1e-8);
    ASSERT_LE(rate, 1e-2);
    ++bands[rate < 1e-5 ? 0 : rate < 1e-4 ? 1 : rate < 1e-3 ? 2 : 3];
  }
  EXPECT_NEAR(bands[0] / double(draws), 0.4723, 0.01);
  EXPECT_NEAR(bands[1] / double(draws), 0.1843, 0.01);
  EXPECT_NEAR(bands[2] / double(draws), 0.2167, 0.01);
  EXPECT_NEAR(bands[3] / double(draws), 0.1267, 0.01);
}

TEST(Background, BackgroundCorruptionStaysBelowWhereLinkLossBegins) {
  // The default boundary, 1e-5: CorrOpt's lowest band, log-uniform within it
  // (a decade's worth of draws in each of its three decades).
  const sim::Topology topology(shape(64));
  int corrupting = 0, links = 0;
  std::array<int, 3> decades{};
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const Background background(topology, {}, seed, 20 * sim::kMinute);
    for (int l = 0; l < topology.links(); ++l) {
      ++links;
      const double rate = background.corruption(l);
      if (rate == 0) continue;
      ++corrupting;
      ASSERT_GE(rate, 1e-8);
      ASSERT_LE(rate, 1e-5);
      ++decades[rate < 1e-7 ? 0 : rate < 1e-6 ? 1 : 2];
    }
    for (const BackgroundCondition& c : background.conditions())
      if (c.kind == BackgroundKind::link_corruption) {
        EXPECT_EQ(c.start, 0);  // stable for the whole run (CorrOpt: rates are stable over time)
        EXPECT_EQ(c.end, 20 * sim::kMinute);
      }
  }
  EXPECT_NEAR(corrupting / double(links), 0.01, 0.003);
  for (int d : decades) EXPECT_NEAR(d / double(corrupting), 1.0 / 3, 0.12);
}

TEST(Background, PamFourLinksAlwaysCountCorrectedCodewords) {
  // 400G RS(544,514): pre-FEC BER up to the design point, about 2e-4; a
  // healthy link always corrects some codewords and never fails one.
  const sim::Topology topology(shape(16));
  const Background background(topology, {}, 5, sim::kHour);
  for (int l = 0; l < topology.links(); ++l) {
    const double ber = background.pre_fec_ber(l);
    EXPECT_GE(ber, 1e-8);
    EXPECT_LE(ber, 2e-4);
    EXPECT_GT(Background::fec_corrected_per_second(ber, 400e9), 0);
  }
  // At the design point about two thirds of 400G's 73.5M codewords a second
  // hold an error: 1 - (1 - 2e-4)^5440 = 0.663.
  EXPECT_NEAR(Background::fec_corrected_per_second(2e-4, 400e9), 400e9 / 5440 * 0.663, 400e9 / 5440 * 0.002);
  // Rare errors: one corrected codeword per errored bit.
  EXPECT_NEAR(Background::fec_corrected_per_second(1e-8, 400e9), 4000, 1);
}

TEST(Background, ApplicationXidsAreTheBenignOnesAtTheirRate) {
  // NVIDIA's device plugin: 13, 31, 43 and 45 leave the GPU healthy.
  const sim::Topology topology(shape(64));
  BackgroundParams params;
  params.app_xid_interval = 10 * sim::kHour;
  const Background background(topology, params, 9, 10 * sim::kHour);
  int xids = 0;
  std::set<double> codes;
  for (const BackgroundCondition& c : background.conditions())
    if (c.kind == BackgroundKind::app_xid) {
      ++xids;
      codes.insert(c.value);
    }
  EXPECT_EQ(codes, (std::set<double>{13, 31, 43, 45}));
  EXPECT_NEAR(xids, 512, 4 * 23);  // 512 GPUs x 1 expected each, Poisson
}

TEST(Background, EcnBurstsAreShortAndOnHostLinks) {
  const sim::Topology topology(shape(64));
  const Background background(topology, {}, 3, 24 * sim::kHour);
  int bursts = 0;
  for (const BackgroundCondition& c : background.conditions())
    if (c.kind == BackgroundKind::ecn_burst) {
      ++bursts;
      EXPECT_EQ(c.end - c.start, 2 * sim::kSecond);
      EXPECT_NE(c.target.find(".nic"), std::string::npos);
    }
  EXPECT_NEAR(bursts, 512 * 3, 4 * 40);  // 512 host links, one burst each 8 h
  EXPECT_TRUE(std::is_sorted(background.conditions().begin(), background.conditions().end(),
                             [](const auto& a, const auto& b) { return a.start < b.start; }));
}

TEST(Background, CleanFabricHasNoBackground) {
  const sim::Topology topology(shape(16));
  const Background clean(topology);
  EXPECT_TRUE(clean.conditions().empty());
  for (int l = 0; l < topology.links(); ++l) EXPECT_EQ(clean.corruption(l), 0);
}

}  // namespace
}  // namespace gauntlet::models
