#pragma once
// Two settings compared seed by seed. Every cell of one seed draws the same
// faults at the same times (common random numbers), so the difference of
// two settings' costs within a seed carries none of the seed-to-seed
// spread of the failures themselves: its mean over seeds, with a Student t
// interval on n-1 degrees of freedom, separates settings that the
// settings' own intervals over seeds cannot.
#include <cstdint>
#include <map>
#include <optional>

#include "harness/report/stats.hpp"

namespace gauntlet::harness {

struct PairedComparison {
  int seeds = 0;           // seeds both settings ran
  Estimate difference;     // mean of (b - a) over those seeds, 95% interval
  int b_costlier = 0;      // seeds where b cost more than a
  bool separated = false;  // the interval excludes 0
  // Seeds the same mean and spread would need for the interval to exclude
  // 0 (at least 2); nullopt when the mean is 0, or past kMostSeeds.
  std::optional<int> seeds_needed;
};

inline constexpr int kMostSeeds = 100000;

// `a` and `b`: cost by seed; seeds only one of them ran are left out.
PairedComparison compare_paired(const std::map<std::uint64_t, double>& a, const std::map<std::uint64_t, double>& b);

// The smallest n >= 2 with t(0.975, n-1) x sd / sqrt(n) < |mean|.
std::optional<int> seeds_to_separate(double mean, double sd);

}  // namespace gauntlet::harness
