#include "harness/report/fault_windows.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness {
namespace {

// Ten 1 s iterations from 0 s, then five 2 s iterations from 10 s.
std::vector<models::IterationSpan> two_paces() {
  return {{0, 10, 0, sim::kSecond}, {10, 5, 10 * sim::kSecond, 2 * sim::kSecond}};
}

TEST(MedianIteration, CountsOnlyWholeIterationsInsideTheWindow) {
  const auto timeline = two_paces();
  // 15 iterations, 10 of them 1 s long.
  EXPECT_EQ(median_iteration_s(timeline, 0, 20), 1.0);
  // From 6 s: four 1 s iterations and five 2 s ones.
  EXPECT_EQ(median_iteration_s(timeline, 6, 20), 2.0);
  // From 5.5 s the iteration starting at 5 s is cut and left out: still 4 vs 5.
  EXPECT_EQ(median_iteration_s(timeline, 5.5, 20), 2.0);
  // Up to 11 s the first 2 s iteration (10-12 s) is cut: only the 1 s ones.
  EXPECT_EQ(median_iteration_s(timeline, 0, 11), 1.0);
  EXPECT_EQ(median_iteration_s(timeline, 12, 13.5), std::nullopt);
}

TEST(FaultWindows, BeforeDuringAfterAreWindowsAsLongAsTheFault) {
  FaultEpisode f;
  f.id = "f1";
  f.type = "gpu_throttle";
  f.target = "h0.gpu0";
  f.start_s = 10;
  f.end_s = 20;
  // Faulty: 1 s steps, 2 s steps during the fault, 1 s again after.
  const std::vector<models::IterationSpan> faulty = {
      {0, 10, 0, sim::kSecond}, {10, 5, 10 * sim::kSecond, 2 * sim::kSecond}, {15, 10, 20 * sim::kSecond, sim::kSecond}};
  const std::vector<models::IterationSpan> clean = {{0, 30, 0, sim::kSecond}};
  const auto windows = fault_window_times({f}, faulty, clean, 30);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].before_s, 1.0);
  EXPECT_EQ(windows[0].during_s, 2.0);
  EXPECT_EQ(windows[0].after_s, 1.0);
  EXPECT_EQ(windows[0].fault_free_during_s, 1.0);
  const std::string table = fault_window_table(windows);
  EXPECT_NE(table.find("f1 gpu_throttle h0.gpu0 10.0-20.0 s: before 1.000 s, during 2.000 s (+100.0%), after 1.000 s"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace gauntlet::harness
