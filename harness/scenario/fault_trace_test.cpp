#include "harness/scenario/fault_trace.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

const std::string kTraceDir = std::string(GAUNTLET_SOURCE_DIR) + "/data/infinitehbd-trace";

template <typename F>
std::string error_of(F&& parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(FaultTrace, InfiniteHbdTraceHoldsWhatItsStatisticsFileCounts) {
  const FaultTrace trace = load_fault_trace(kTraceDir + "/fault_trace.json", TraceFormat::infinitehbd);
  // The trace's own summary: 584 faults on 231 of the 400 servers, 349 days.
  EXPECT_EQ(trace.faults.size(), 584u);
  EXPECT_EQ(trace.servers.size(), 231u);
  EXPECT_NEAR(static_cast<double>(trace.span) / sim::kDay, 348.98, 0.01);
  std::map<std::string, int> per_level, per_class;
  for (const TraceFault& fault : trace.faults) {
    EXPECT_TRUE(fault.repair.has_value()) << "every fault_start has its fault_end";
    const std::string level = fault.category.substr(0, fault.category.find('/'));
    ++per_level[level];
    ++per_class[fault.category.substr(0, fault.category.rfind('/'))];
  }
  std::ifstream in(kTraceDir + "/fault_statistics.json");
  const auto statistics = nlohmann::json::parse(in);
  for (const auto& [level, classes] : statistics.items()) {
    EXPECT_EQ(per_level[level], classes["LevelTotal"].get<int>()) << level;
    for (const auto& [name, counts] : classes.items())
      if (counts.is_object()) {
        EXPECT_EQ(per_class[level + "/" + name], counts["ClassTotal"].get<int>()) << name;
      }
  }
  for (std::size_t i = 1; i < trace.faults.size(); ++i) EXPECT_LE(trace.faults[i - 1].start, trace.faults[i].start);
}

TEST(FaultTrace, AFaultEndClosesTheEarliestOpenFaultOfItsNodeAndType) {
  const std::string text = R"([
  {"node_id": "a", "event_time": 1.0, "event_type": "fault_start", "fault_type": {"Level": "L", "Class": "GPU", "Desc": "x"}},
  {"node_id": "a", "event_time": 1.5, "event_type": "fault_start", "fault_type": {"Level": "L", "Class": "NIC", "Desc": "y"}},
  {"node_id": "a", "event_time": 2.0, "event_type": "fault_end", "fault_type": {"Level": "L", "Class": "NIC", "Desc": "y"}},
  {"node_id": "b", "event_time": 3.0, "event_type": "fault_start", "fault_type": {"Level": "L", "Class": "GPU", "Desc": "x"}}
])";
  const FaultTrace trace = parse_fault_trace(text, "t.json", TraceFormat::infinitehbd);
  ASSERT_EQ(trace.faults.size(), 3u);
  EXPECT_EQ(trace.servers, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(trace.faults[0].category, "L/GPU/x");
  EXPECT_FALSE(trace.faults[0].repair.has_value());  // never closed: not repaired within the trace
  EXPECT_EQ(trace.faults[1].repair, sim::kDay / 2);
  EXPECT_EQ(trace.faults[1].pos.line, 3);
  EXPECT_EQ(trace.faults[2].server, 1u);
}

TEST(FaultTrace, BadInfiniteHbdEventsAreReportedAtTheirPlace) {
  const std::string unmatched = R"([
  {"node_id": "a", "event_time": 1.0, "event_type": "fault_end", "fault_type": {"Level": "L", "Class": "GPU", "Desc": "x"}}
])";
  EXPECT_EQ(
      error_of([&] { parse_fault_trace(unmatched, "t.json", TraceFormat::infinitehbd); }),
      "t.json:2:3: fault_end of node a (L/GPU/x) closes no open fault_start of that node and fault_type before it");
  const std::string bad_type = R"([
  {"node_id": "a", "event_time": 1.0, "event_type": "crash", "fault_type": {"Level": "L", "Class": "GPU", "Desc": "x"}}
])";
  EXPECT_EQ(error_of([&] { parse_fault_trace(bad_type, "t.json", TraceFormat::infinitehbd); }),
            "t.json:2:53: 'event_type' must be fault_start or fault_end, got 'crash'");
  const std::string negative = R"([{"node_id": "a", "event_time": -2, "event_type": "fault_start",
  "fault_type": {"Level": "L", "Class": "GPU", "Desc": "x"}}])";
  EXPECT_EQ(error_of([&] { parse_fault_trace(negative, "t.json", TraceFormat::infinitehbd); }),
            "t.json:1:33: 'event_time' must be a number of days from 0 to 10000");
  EXPECT_NE(error_of([&] {
              parse_fault_trace(R"([{"node_id": "a",)", "t.json", TraceFormat::infinitehbd);
            }).find("t.json:1:"),
            std::string::npos);
}

TEST(FaultTrace, CsvTraceReadsServersDurationsAndOpenRepairs) {
  const std::string text =
      "# two servers\nserver,start,end,category\nrack1-07,1d,1.5d,GPU/ECC\n\nrack1-08,36h,,Power, redundancy lost\r\n";
  const FaultTrace trace = parse_fault_trace(text, "t.csv", TraceFormat::csv);
  ASSERT_EQ(trace.faults.size(), 2u);
  EXPECT_EQ(trace.faults[0].repair, 12 * sim::kHour);
  EXPECT_EQ(trace.faults[0].pos.line, 3);
  EXPECT_EQ(trace.faults[1].start, 36 * sim::kHour);
  EXPECT_FALSE(trace.faults[1].repair.has_value());
  EXPECT_EQ(trace.faults[1].category, "Power, redundancy lost");
  EXPECT_EQ(trace.span, 36 * sim::kHour);
}

TEST(FaultTrace, BadCsvLinesAreReportedAtTheirLineAndColumn) {
  auto error = [](const std::string& text) {
    return error_of([&] { parse_fault_trace(text, "t.csv", TraceFormat::csv); });
  };
  EXPECT_EQ(error("server,begin,end,category\n"),
            "t.csv:1:1: the first line must be the header 'server,start,end,category'");
  EXPECT_EQ(error("server,start,end,category\na,1d,2x,GPU\n"),
            "t.csv:2:6: end: bad duration '2x': unit must be one of ns us ms s m h d (a duration from the trace's "
            "origin, e.g. "
            "3.9d)");
  EXPECT_EQ(error("server,start,end,category\na,2d,1d,GPU\n"), "t.csv:2:6: end 1d is before start 2d");
  EXPECT_EQ(error("server,start,end,category\na,2d\n"),
            "t.csv:2:5: expected 4 fields (server,start,end,category), found 2");
  EXPECT_EQ(error("server,start,end,category\na,2d,3d,\n"), "t.csv:2:9: the category is empty");
  EXPECT_EQ(error("# nothing\n"),
            "t.csv:1:1: the trace is empty; its first line must be the header 'server,start,end,category'");
}

}  // namespace
}  // namespace gauntlet::harness
