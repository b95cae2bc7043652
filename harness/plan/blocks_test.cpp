// A run cut into time blocks: every iteration in one block, lost iterations
// by block adding up to the run's, and a trace.json's runs told apart.
#include "harness/plan/blocks.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <numeric>

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(Blocks, EachIterationLandsInTheBlockWhereItEnds) {
  // 10 iterations of 1 s from 0: they end at 1..10 s. Blocks of 4 s over
  // [0, 12]: ends in [0, 4) are 1, 2, 3; [4, 8): 4..7; [8, 12]: 8, 9, 10.
  const auto blocks = completed_by_block({{0, 1, 10}}, 12, 3);
  EXPECT_EQ(blocks, (std::vector<double>{3, 4, 3}));
  // A stretch past the run's end counts in the last block; one before any
  // block edge in the first.
  EXPECT_EQ(completed_by_block({{11, 2, 5}, {0.1, 0.5, 1}}, 12, 3), (std::vector<double>{1, 0, 5}));
  // Durations that put ends near the edges in floating point still count
  // every iteration once.
  const std::vector<IterationStretch> odd = {{0.3, 0.1, 1000}, {100.3, 1.0 / 3, 777}, {400, 0, 3}};
  for (int k : {1, 7, 64}) EXPECT_EQ(sum(completed_by_block(odd, 500, k)), 1000 + 777 + 3) << k;
}

TEST(Blocks, LostGpuHoursByBlockAddUpToTheSummarys) {
  // Fault-free: 100 iterations of 36 s over an hour. Scored: 40 of them,
  // then a gap (a failure at 24 min and its restart), then 40 more.
  TraceTimelines t;
  t.fault_free = {{0, 36, 100}};
  t.scored["c4d"] = {{0, 36, 40}, {2160, 36, 40}};
  t.scored["other"] = t.fault_free;
  const auto lost = lost_gpu_hours_by_block(t, 3600, 8, 4, {{"c4d", 20}, {"other", 1}});
  ASSERT_EQ(lost.count("c4d"), 1u);
  EXPECT_EQ(lost.count("other"), 0u) << "blocks summing to 0 lost, summary saying 1: not these runs";
  // Each lost iteration is 36 s of 8 GPUs: 0.08 GPU-h. Block 2 ([900, 1800)
  // s) holds the ends of the scored run's 25th to 40th iterations against
  // the fault-free run's 25th to 49th (9 lost), block 3 its 41st to 54th
  // against the 50th to 74th (11 lost).
  const std::vector<double>& c4d = lost.at("c4d");
  ASSERT_EQ(c4d.size(), 4u);
  EXPECT_NEAR(sum(c4d), 20 * 0.08, 1e-12);
  EXPECT_NEAR(c4d[0], 0, 1e-12);
  EXPECT_NEAR(c4d[1], 9 * 0.08, 1e-12);
  EXPECT_NEAR(c4d[2], 11 * 0.08, 1e-12);
  EXPECT_NEAR(c4d[3], 0, 1e-12);
}

TEST(Blocks, ATracesRunsByName) {
  const fs::path path = fs::temp_directory_path() / ("gauntlet-blocks-test-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path);
    out << R"json({"traceEvents":[
      {"name":"process_name","ph":"M","pid":1,"args":{"name":"faulty run watched by timeout, c4d"}},
      {"name":"iteration 0","cat":"iteration","ph":"X","pid":1,"tid":1,"ts":0,"dur":2e6,"args":{"duration_s":2}},
      {"name":"iterations 1..9","cat":"steady","ph":"X","pid":1,"tid":1,"ts":5e6,"dur":9e6,"args":{"duration_s":1,"count":9}},
      {"name":"process_name","ph":"M","pid":2,"args":{"name":"faulty run watched by eroica alone (mitigation: isolate-restart)"}},
      {"name":"iteration 0","cat":"iteration","ph":"X","pid":2,"tid":1,"ts":1e6,"dur":1e6,"args":{"duration_s":1}},
      {"name":"process_name","ph":"M","pid":3,"args":{"name":"fault-free run"}},
      {"name":"iterations 0..19","cat":"steady","ph":"X","pid":3,"tid":1,"ts":0,"dur":2e7,"args":{"duration_s":1,"count":20}},
      {"name":"a fault","cat":"fault","ph":"X","pid":1,"tid":2,"ts":3e6,"dur":1e6,"args":{}}
    ],"displayTimeUnit":"ms","otherData":{}})json";
  }
  const TraceTimelines t = read_trace_timelines(path);
  fs::remove(path);
  ASSERT_EQ(t.fault_free.size(), 1u);
  EXPECT_EQ(t.fault_free[0].count, 20u);
  ASSERT_EQ(t.scored.size(), 3u);
  ASSERT_EQ(t.scored.at("timeout").size(), 2u);
  EXPECT_DOUBLE_EQ(t.scored.at("c4d")[1].start_s, 5);
  EXPECT_EQ(t.scored.at("c4d")[1].count, 9u);
  ASSERT_EQ(t.scored.at("eroica").size(), 1u);
  EXPECT_DOUBLE_EQ(t.scored.at("eroica")[0].start_s, 1);
}

}  // namespace
}  // namespace gauntlet::harness
