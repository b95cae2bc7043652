#include "harness/scenario/fault_conflicts.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness::detail {
namespace {

injectors::FaultSpec throttle_at(sim::Nanos start, sim::Nanos duration) {
  injectors::FaultSpec fault;
  fault.type = "gpu_throttle";
  fault.target = "h1.gpu0";
  fault.start = start;
  fault.duration = duration;
  return fault;
}

TEST(FaultConflicts, AnOverlapAmongManyWindowsOnOneTargetIsFoundWithItsLine) {
  // 240,000 faults on one target: the check was a scan of every earlier one.
  const injectors::FaultCatalog types = injectors::builtin_fault_catalog();
  FaultConflicts conflicts(sim::kDay * 10, types);
  constexpr int kFaults = 240'000;
  for (int i = 0; i < kFaults; ++i) {
    const auto fault = throttle_at(i * 2 * sim::kSecond, sim::kSecond);
    ASSERT_FALSE(conflicts.check(fault)) << i;
    conflicts.add(fault, i + 1);
  }
  // Starts inside window 120,000 ([240000 s, 240001 s)).
  const auto why = conflicts.check(throttle_at(240'000 * sim::kSecond + sim::kMillisecond, sim::kSecond));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("(line 120001)"), std::string::npos) << *why;
  // Covers the gap and the start of the next window.
  EXPECT_TRUE(conflicts.check(throttle_at(240'001 * sim::kSecond, 2 * sim::kSecond)));
  // Fits the gap exactly: windows are half-open.
  EXPECT_FALSE(conflicts.check(throttle_at(240'001 * sim::kSecond, sim::kSecond)));
  // Spans many windows and starts before the first.
  EXPECT_TRUE(conflicts.check(throttle_at(0, sim::kDay)));
}

}  // namespace
}  // namespace gauntlet::harness::detail
