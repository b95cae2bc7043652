#pragma once
// Two settings compared seed by seed. Every cell of one seed draws the same
// faults at the same times (common random numbers), so the difference of
// two settings' costs within a seed carries none of the seed-to-seed
// spread of the failures themselves: its mean over seeds, with a Student t
// interval on n-1 degrees of freedom, separates settings that the
// settings' own intervals over seeds cannot.
//
// Within a seed too: each seed's run is one long run with many failures, so
// cut into equal time blocks (blocks.hpp) its paired block differences are
// many draws of the same difference (the method of batch means), and their
// t interval over seeds x blocks - 1 degrees of freedom can separate
// settings that two seeds (t = 12.7) cannot. It assumes blocks long enough
// for a failure's cost to stay mostly within its own block, and checks the
// within-seed lag-1 autocorrelation of the block differences, merging
// blocks two by two while it is high.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "harness/report/stats.hpp"

namespace gauntlet::harness {

// b against a block by block over the seeds both have blocks for.
struct BlockComparison {
  int seeds = 0;
  int per_seed = 0;     // blocks each seed's run is cut into, after merging
  int blocks = 0;       // block pairs: seeds x per_seed
  Estimate difference;  // whole-run b - a: per_seed x the mean block difference, 95% t interval
  int b_costlier = 0;   // blocks where b cost more than a
  double lag1 = 0;      // lag-1 autocorrelation of block differences within seeds
  bool separated = false;
};

struct PairedComparison {
  int seeds = 0;                 // seeds both settings ran
  Estimate difference;           // mean of (b - a) over those seeds, 95% interval
  int b_costlier = 0;            // seeds where b cost more than a
  bool seeds_separated = false;  // the interval over seeds excludes 0
  // Seeds the same mean and spread would need for the interval over seeds
  // to exclude 0 (at least 2); nullopt when the mean is 0, or past kMostSeeds.
  std::optional<int> seeds_needed;
  std::optional<BlockComparison> blocks;  // when both have blocks for 2 or more a seed
  bool separated = false;                 // the blocks' interval excludes 0; without blocks, the seeds'
};

// Merge blocks two by two while the lag-1 autocorrelation of block
// differences exceeds this. Not fitted to anything measured: at 0.2 an
// AR(1) stream of differences would widen a mean's interval by sqrt(1.5),
// about 22%; below it the interval is taken as it is.
inline constexpr double kMaxBlockLag1 = 0.2;

inline constexpr int kMostSeeds = 100000;

// `a` and `b`: cost by seed; seeds only one of them ran are left out.
PairedComparison compare_paired(const std::map<std::uint64_t, double>& a, const std::map<std::uint64_t, double>& b);

// `a` and `b`: cost by seed in equal time blocks, as many for every seed
// (per_seed times a power of two); seeds only one of them has are left out.
// Blocks merged in groups to per_seed (a power of two), then two by two
// while the lag-1 autocorrelation exceeds kMaxBlockLag1. nullopt below 2
// blocks a seed.
std::optional<BlockComparison> compare_blocks(const std::map<std::uint64_t, std::vector<double>>& a,
                                              const std::map<std::uint64_t, std::vector<double>>& b, int per_seed);

// The smallest n >= 2 with t(0.975, n-1) x sd / sqrt(n) < |mean|.
std::optional<int> seeds_to_separate(double mean, double sd);

}  // namespace gauntlet::harness
