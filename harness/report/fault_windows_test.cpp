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
  const std::vector<models::IterationSpan> faulty = {{0, 10, 0, sim::kSecond},
                                                     {10, 5, 10 * sim::kSecond, 2 * sim::kSecond},
                                                     {15, 10, 20 * sim::kSecond, sim::kSecond}};
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

TEST(FaultWindows, BeforeAndAfterStopAtOtherFaults) {
  auto episode = [](std::string id, double start, double end) {
    FaultEpisode f;
    f.id = std::move(id);
    f.type = "gpu_throttle";
    f.target = "h0.gpu0";
    f.start_s = start;
    f.end_s = end;
    return f;
  };
  // f1 slows steps to 2 s over 10-20 s, f2 to 3 s over 24-30 s, f3 overlaps
  // f2's end (28-40 s, 4 s steps); 1 s steps elsewhere.
  const std::vector<models::IterationSpan> faulty = {{0, 10, 0, sim::kSecond},
                                                     {10, 5, 10 * sim::kSecond, 2 * sim::kSecond},
                                                     {15, 4, 20 * sim::kSecond, sim::kSecond},
                                                     {19, 2, 24 * sim::kSecond, 3 * sim::kSecond},
                                                     {21, 3, 30 * sim::kSecond, 4 * sim::kSecond},
                                                     {24, 20, 42 * sim::kSecond, sim::kSecond}};
  const std::vector<models::IterationSpan> clean = {{0, 60, 0, sim::kSecond}};
  const auto windows =
      fault_window_times({episode("f1", 10, 20), episode("f2", 24, 30), episode("f3", 28, 40)}, faulty, clean, 60);
  // f1's after stops where f2 begins (20-24 s: 1 s steps), not at 30 s inside f2.
  EXPECT_EQ(windows[0].after_s, 1.0);
  // f2's before starts where f1 ended (20-24 s); f3 is active at f2's end: no after.
  EXPECT_EQ(windows[1].before_s, 1.0);
  EXPECT_FALSE(windows[1].after_s);
  EXPECT_EQ(windows[1].after_overlaps, "f3");
  EXPECT_EQ(windows[2].before_overlaps, "f2");
  EXPECT_FALSE(windows[2].before_s);
  EXPECT_EQ(windows[2].after_s, 1.0);
  const std::string table = fault_window_table(windows);
  EXPECT_NE(
      table.find("f2 gpu_throttle h0.gpu0 24.0-30.0 s: before 1.000 s, during 3.000 s (+200.0%), after - (f3 active)"),
      std::string::npos)
      << table;
}

}  // namespace
}  // namespace gauntlet::harness
