#include "harness/scenario/trace_faults.hpp"

#include <gtest/gtest.h>

#include <map>

#include "harness/scenario/fault_trace.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"

namespace gauntlet::harness {
namespace {

const std::string kTrace = std::string(GAUNTLET_SOURCE_DIR) + "/data/infinitehbd-trace/fault_trace.json";

std::string scenario_text(int hosts, const std::string& duration, const std::string& entry, int seed = 5) {
  return "name: replay\nseed: " + std::to_string(seed) + "\nduration: " + duration +
         "\ncluster: {spines: 8, leaves: 96, hosts: " + std::to_string(hosts) +
         ", gpus_per_host: 8, rnics_per_host: 8}\n"
         "job: {gpus: 64, parallelism: {tp: 8, dp: 8}, compute_per_iteration: 1m, gradient_bytes: 1GB}\n"
         "faults:\n" +
         entry;
}

std::string trace_entry(const std::string& extra, const std::string& types = "{GPU: gpu_fail, \"*\": node_crash}") {
  return "  - from_trace: " + kTrace + "\n    format: infinitehbd\n" + extra + "    map:\n      types: " + types + "\n";
}

Scenario parse(const std::string& text) { return parse_scenario(text, "s.yaml", builtin_detectors()); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::map<std::string, int> count_types(const Scenario& scenario) {
  std::map<std::string, int> counts;
  for (const auto& fault : scenario.faults) ++counts[fault.type];
  return counts;
}

TEST(TraceFaults, TheWholeTraceReplaysOntoFourHundredHosts) {
  const Scenario scenario = parse(scenario_text(400, "350d", trace_entry("")));
  // fault_statistics.json: 158 GPU faults of 584; no two faults of one server
  // overlap outside the GPU class, so nothing merges on 400 hosts.
  EXPECT_EQ(count_types(scenario), (std::map<std::string, int>{{"gpu_fail", 158}, {"node_crash", 426}}));
  const FaultTrace trace = load_fault_trace(kTrace, TraceFormat::infinitehbd);
  sim::Nanos trace_downtime = 0, replayed_downtime = 0;
  for (const auto& fault : trace.faults) trace_downtime += std::max(*fault.repair, detail::kTraceResolution);
  std::map<std::string, int> per_host;
  for (const auto& fault : scenario.faults) {
    ASSERT_TRUE(fault.duration.has_value()) << fault.id << ": every trace fault was repaired";
    replayed_downtime += *fault.duration;
    ++per_host[fault.target.substr(0, fault.target.find('.'))];
  }
  EXPECT_EQ(replayed_downtime, trace_downtime);
  EXPECT_EQ(per_host.size(), 231u);  // the servers that ever failed, one host each
  EXPECT_EQ(scenario.faults.front().start, 3 * sim::kDay + 8955 * sim::kDay / 10'000);
}

TEST(TraceFaults, ASliceStartsWithTheFaultsStillOpenAtItsStart) {
  const Scenario scenario =
      load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/infinitehbd-replay.yaml", builtin_detectors());
  // Counted from the trace: 65 faults overlap days 100-130, 23 of them open at day 100.
  EXPECT_EQ(count_types(scenario), (std::map<std::string, int>{{"gpu_fail", 11}, {"node_crash", 54}}));
  int open_at_start = 0;
  for (const auto& fault : scenario.faults) open_at_start += fault.start == 0;
  EXPECT_EQ(open_at_start, 23);
}

TEST(TraceFaults, ServersSharingAHostMergeTheirOverlappingWindows) {
  const Scenario small = parse(scenario_text(66, "350d", trace_entry("", "{\"*\": node_crash}")));
  // 231 servers on 66 hosts: overlapping downtimes of one host become one.
  EXPECT_LT(small.faults.size(), 584u);
  std::map<std::string, sim::Nanos> busy_until;
  for (const auto& fault : small.faults) {
    EXPECT_GE(fault.start, busy_until[fault.target]) << fault.id << " overlaps the previous fault on " << fault.target;
    busy_until[fault.target] = *fault.end();
  }
}

TEST(TraceFaults, GpuTargetsFollowTheSeed) {
  auto targets = [](int seed) {
    std::vector<std::string> out;
    for (const auto& fault : parse(scenario_text(400, "350d", trace_entry(""), seed)).faults)
      out.push_back(fault.target);
    return out;
  };
  EXPECT_EQ(targets(5), targets(5));
  EXPECT_NE(targets(5), targets(6));
}

TEST(TraceFaults, AnExplicitHostMapReplaysOnlyTheServersItNames) {
  const std::string entry =
      "  - from_trace: " + kTrace +
      "\n    format: infinitehbd\n    map:\n      hosts: {6f24e2b2-5b9b-4f8a-82ec-d7d57d7c6758: h7}\n"
      "      types: {\"*\": node_crash}\n";
  const Scenario scenario = parse(scenario_text(400, "350d", entry));
  ASSERT_FALSE(scenario.faults.empty());
  for (const auto& fault : scenario.faults) EXPECT_EQ(fault.target, "h7");
}

TEST(TraceFaults, MappingMistakesAreReportedWhereTheyAre) {
  EXPECT_EQ(error_of(scenario_text(400, "30d", trace_entry("", "{GPU: gpu_fail}"))),
            kTrace +
                ":42:5: category 'Hardware Failure/Parameter Plane Cable/Link Down' has no fault type in the "
                "scenario's map.types (name it, one of its segments, or \"*\")");
  EXPECT_EQ(
      error_of(scenario_text(400, "30d", trace_entry("", "{GPU: gpu_fail, Disk: node_crash, \"*\": node_crash}"))),
      "s.yaml:10:30: 'Disk' names no category of " + kTrace);
  EXPECT_EQ(error_of(scenario_text(400, "30d", trace_entry("", "{\"*\": leaf_crash}"))),
            "s.yaml:10:20: unknown fault type 'leaf_crash' (known: link_loss, port_flap, stale_flow_table, "
            "gpu_throttle, nic_down, congestion, cpu_contention, gpu_fail, node_crash, agent_hang, clock_skew, "
            "reconfigure, pfc_storm, gpu_hbm_error, gpu_sram_error, gpu_gsp_error, gpu_sdc, or skip)");
  EXPECT_EQ(error_of(scenario_text(400, "30d", trace_entry("", "{\"*\": link_loss}"))),
            "s.yaml:10:20: link_loss needs its parameter 'rate': write {type: link_loss, rate: ...}");
  EXPECT_EQ(error_of(scenario_text(400, "30d", trace_entry("    format_x: 1\n"))),
            "s.yaml:9:5: unknown key 'format_x' in 'faults[0]' (keys of a from_trace entry)");
}

TEST(TraceFaults, ParametersAndSkipsApplyPerCategory) {
  const Scenario scenario = parse(scenario_text(400, "350d",
                                                trace_entry("",
                                                            "{\"Parameter Plane Cable\": {type: link_loss, rate: 0.2}, "
                                                            "\"*\": skip}")));
  // fault_statistics.json: 40 "Link Down" faults of the parameter-plane cables.
  ASSERT_EQ(scenario.faults.size(), 40u);
  for (const auto& fault : scenario.faults) {
    EXPECT_EQ(fault.type, "link_loss");
    EXPECT_NE(fault.target.find("~leaf"), std::string::npos) << fault.target;
    EXPECT_DOUBLE_EQ(fault.params.number("rate"), 0.2);
  }
}

}  // namespace
}  // namespace gauntlet::harness
