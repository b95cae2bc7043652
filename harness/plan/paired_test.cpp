// Paired comparisons by seed: the interval of the mean per-seed difference
// (Student t, n-1 degrees of freedom) and the seeds that would separate two
// settings.
#include "harness/plan/paired.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

namespace gauntlet::harness {
namespace {

TEST(Paired, TwoSeedsThatAgreeSeparateTheSettings) {
  // 16 spares against 4 over two seeds: each seed's faults cost the 4-spare
  // setting 21.8k and 22.6k GPU-hours more. The settings' own intervals over
  // two seeds (t = 12.71) span +-508k; the paired one 22.2k +- 5.1k.
  const std::map<std::uint64_t, double> sixteen = {{1, 50'000}, {2, 130'000}};
  const std::map<std::uint64_t, double> four = {{1, 71'800}, {2, 152'600}};
  const PairedComparison c = compare_paired(sixteen, four);
  EXPECT_EQ(c.seeds, 2);
  EXPECT_EQ(c.b_costlier, 2);
  EXPECT_DOUBLE_EQ(c.difference.mean, 22'200);
  // sd of {21.8k, 22.6k} is 565.7; t(0.975, 1) = 12.706.
  EXPECT_NEAR(c.difference.half_width, 12.706 * 565.685 / std::sqrt(2.0), 5);
  EXPECT_TRUE(c.separated);
  EXPECT_EQ(c.seeds_needed, 2);
}

TEST(Paired, TwoSeedsThatDisagreeInSizeDoNot) {
  // Issue figures: 20-minute checkpoints beat 40 minutes by 7.6k and 11.8k
  // GPU-hours. Both seeds agree on the sign, but two seeds spread that much
  // leave the t interval (+-26.7k) over 0; the same mean and spread need 3.
  const PairedComparison c = compare_paired({{1, 0}, {2, 0}}, {{1, 7'600}, {2, 11'800}});
  EXPECT_EQ(c.b_costlier, 2);
  EXPECT_DOUBLE_EQ(c.difference.mean, 9'700);
  EXPECT_FALSE(c.separated);
  ASSERT_TRUE(c.seeds_needed.has_value());
  // sd 2,970: t(0.975, 2) x 2,970 / sqrt(3) = 7,378 < 9,700; at n = 2 it is 26,684.
  EXPECT_EQ(*c.seeds_needed, 3);
}

TEST(Paired, SeedsOnlyOneSettingRanAreLeftOut) {
  const PairedComparison c = compare_paired({{1, 10}, {2, 20}, {3, 30}}, {{2, 25}, {3, 36}, {4, 0}});
  EXPECT_EQ(c.seeds, 2);
  EXPECT_DOUBLE_EQ(c.difference.mean, 5.5);
}

TEST(Paired, SeedsToSeparateFollowsTheTQuantile) {
  EXPECT_EQ(seeds_to_separate(0, 1), std::nullopt);
  EXPECT_EQ(seeds_to_separate(5, 0), 2);
  // mean = sd: n = 7 is the first with t(0.975, n-1) < sqrt(n) (2.447 < 2.646; n = 6: 2.571 > 2.449).
  EXPECT_EQ(seeds_to_separate(1, 1), 7);
  EXPECT_EQ(seeds_to_separate(-1, 1), 7);
  for (int n : {3, 10, 40}) {
    const double sd = std::sqrt(static_cast<double>(n)) / student_t_quantile(0.975, n - 1) * 0.999;
    EXPECT_EQ(seeds_to_separate(1, sd), n) << n;
  }
  EXPECT_EQ(seeds_to_separate(1e-9, 1), std::nullopt) << "past the cap";
}

// The two seeds again, each run cut into 8 blocks whose differences
// all favour a: 16 block pairs (t(0.975, 15) = 2.131) separate what two
// seed pairs (t = 12.7) cannot.
TEST(PairedBlocks, TwoSeedsWhoseBlocksAllAgreeSeparate) {
  const std::map<std::uint64_t, std::vector<double>> a = {{1, std::vector<double>(8, 100.0)},
                                                          {2, std::vector<double>(8, 50.0)}};
  std::map<std::uint64_t, std::vector<double>> b = {{1, {1200, 600, 1400, 500, 1100, 700, 1300, 800}},
                                                    {2, {1700, 1100, 1900, 1000, 1800, 1200, 2000, 1100}}};
  for (auto& [seed, blocks] : b)
    for (double& cost : blocks) cost += a.at(seed).front();
  const auto c = compare_blocks(a, b, 8);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->per_seed, 8);
  EXPECT_EQ(c->blocks, 16);
  EXPECT_EQ(c->b_costlier, 16);
  EXPECT_LE(c->lag1, kMaxBlockLag1);
  // The whole-run difference: (7,600 + 11,800) / 2, as by seed.
  EXPECT_NEAR(c->difference.mean, 9'700, 1e-9);
  // sd of the 16 block differences 455.9: 8 x 2.1314 x 455.9 / 4 = 1,943.
  EXPECT_NEAR(c->difference.half_width, 1'943.4, 0.5);
  EXPECT_TRUE(c->separated);
  const PairedComparison by_seed = compare_paired({{1, 800}, {2, 400}}, {{1, 8'400}, {2, 12'200}});
  EXPECT_FALSE(by_seed.separated) << "the seeds alone do not";
}

TEST(PairedBlocks, BlocksThatDisagreeInSignDoNot) {
  const std::map<std::uint64_t, std::vector<double>> a = {{1, std::vector<double>(8, 1000.0)},
                                                          {2, std::vector<double>(8, 1000.0)}};
  std::map<std::uint64_t, std::vector<double>> b = {{1, {300, -500, 200, -400, 100, -300, 250, -350}},
                                                    {2, {-200, 400, -300, 350, -250, 150, -100, 300}}};
  for (auto& [seed, blocks] : b)
    for (double& cost : blocks) cost += 1000;
  const auto c = compare_blocks(a, b, 8);
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR(c->difference.mean, -175, 1e-9);
  EXPECT_FALSE(c->separated);
  EXPECT_EQ(c->b_costlier, 8);  // half the blocks each way
}

TEST(PairedBlocks, FineBlocksMergeToTheBlocksAsked) {
  // 4 fine blocks a seed merged into 2: sums of consecutive pairs.
  const std::map<std::uint64_t, std::vector<double>> a = {{1, {0, 0, 0, 0}}, {2, {0, 0, 0, 0}}};
  const std::map<std::uint64_t, std::vector<double>> b = {{1, {1, 2, 4, 3}}, {2, {2, 3, 5, 2}}};
  const auto c = compare_blocks(a, b, 2);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->blocks, 4);
  // Block differences {3, 7, 5, 7}: mean 5.5 a block, 11 a run.
  EXPECT_DOUBLE_EQ(c->difference.mean, 11);
  EXPECT_FALSE(compare_blocks(a, b, 1).has_value()) << "one block a seed is the seed interval";
}

TEST(PairedBlocks, CorrelatedBlocksAreMerged) {
  // A slow drift within each seed: neighbouring blocks alike, lag-1 high.
  std::map<std::uint64_t, std::vector<double>> a, b;
  for (std::uint64_t seed : {1, 2}) {
    a[seed] = std::vector<double>(16, 0.0);
    for (int k = 0; k < 16; ++k) b[seed].push_back(std::sin(k * 0.4 + static_cast<double>(seed)) * 100 + 10);
  }
  // cos(0.4) = 0.92 at 16 blocks, cos(0.8) = 0.70 at 8, cos(1.6) = -0.03 at 4.
  const auto c = compare_blocks(a, b, 16);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->per_seed, 4);
  EXPECT_LE(c->lag1, kMaxBlockLag1);
}

// A failure stream like a run's: Poisson failures over a month, each
// costing b a normally drawn amount more than a (mean 500 GPU-h, sd 2,000),
// in the block where it lands. The 95% interval over 2 seeds x 8 blocks
// should cover the true whole-run difference (40 x 500) in about 95% of
// 1,000 draws; so should iid normal block differences.
TEST(PairedBlocks, IntervalsCoverTheTrueMeanNinetyFivePercentOfTheTime) {
  std::mt19937_64 rng(20261208);
  auto coverage = [&rng](auto draw_blocks, double truth) {
    int covered = 0, drawn = 0;
    for (int i = 0; i < 1000; ++i) {
      std::map<std::uint64_t, std::vector<double>> a, b;
      for (std::uint64_t seed : {1, 2}) {
        a[seed] = std::vector<double>(8, 0.0);
        b[seed] = draw_blocks();
      }
      const auto c = compare_blocks(a, b, 8);
      if (!c) continue;
      ++drawn;
      covered += std::abs(c->difference.mean - truth) <= c->difference.half_width ? 1 : 0;
    }
    EXPECT_GE(drawn, 900);
    return static_cast<double>(covered) / drawn;
  };
  std::normal_distribution<double> normal(100, 400);
  const double iid = coverage(
      [&] {
        std::vector<double> blocks(8);
        for (double& d : blocks) d = normal(rng);
        return blocks;
      },
      800);
  EXPECT_GE(iid, 0.92);
  EXPECT_LE(iid, 0.98);
  std::exponential_distribution<double> gap(40.0 / 720);  // failures an hour
  std::normal_distribution<double> cost(500, 2000);
  const double stream = coverage(
      [&] {
        std::vector<double> blocks(8, 0.0);
        for (double t = gap(rng); t < 720; t += gap(rng)) blocks[static_cast<std::size_t>(t / 90)] += cost(rng);
        return blocks;
      },
      40 * 500);
  EXPECT_GE(stream, 0.92);
  EXPECT_LE(stream, 0.98);
  std::printf("coverage: normal blocks %.3f, failure stream %.3f\n", iid, stream);
}

}  // namespace
}  // namespace gauntlet::harness
