// A day of the InfiniteHBD trace replayed onto its 400-server fleet: the
// run's ground truth and the job's containers follow the trace.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "gauntlet_cli.hpp"

namespace {

using cli_test::gauntlet;
using cli_test::scratch;
using cli_test::slurp;

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    std::string cell;
    while (std::getline(fields, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

TEST(TraceReplay, ADayOfTheInfiniteHbdTraceTakesItsServersDown) {
  const auto out = scratch("replay");
  const auto result = gauntlet("run scenarios/infinitehbd-replay-slice.yaml --no-progress --out " + out.string());
  ASSERT_EQ(result.exit_code, 0) << result.err;

  // Counted from fault_trace.json: 18 faults overlap days 125.5-126.5 (15
  // stress-test failures, 2 power supplies, 1 GPU), 4 of them open at 125.5.
  std::map<std::string, int> types;
  std::map<std::string, double> onset;  // per host
  int open_at_start = 0;
  std::istringstream truth(slurp(out / "faults.jsonl"));
  std::string line;
  while (std::getline(truth, line)) {
    const auto fault = nlohmann::json::parse(line);
    if (fault.value("background", false)) continue;  // the healthy fleet's, not the trace's
    ++types[fault["type"].get<std::string>()];
    open_at_start += fault["start_s"].get<double>() == 0;
    const std::string target = fault["target"];
    onset.emplace(target.substr(0, target.find('.')), fault["start_s"].get<double>());
  }
  EXPECT_EQ(types, (std::map<std::string, int>{{"gpu_fail", 1}, {"node_crash", 17}}));
  EXPECT_EQ(open_at_start, 4);

  // Every container stopped by a failure stood on a host the trace took
  // down, and stopped after that host's fault began; the server down for ten
  // days (h108) takes no container again. No container starts on a host
  // down at that moment: the four servers down at the start are replaced by
  // spares from the first second instead of stalling the job until the
  // collective timeout.
  std::map<std::string, std::vector<std::pair<double, double>>> down;  // host -> [start, end)
  {
    std::istringstream again(slurp(out / "faults.jsonl"));
    for (std::string fault_line; std::getline(again, fault_line);) {
      const auto fault = nlohmann::json::parse(fault_line);
      if (fault.value("background", false)) continue;
      const std::string target = fault["target"];
      const double end = fault["end_s"].is_null() ? 1e18 : fault["end_s"].get<double>();
      down[target.substr(0, target.find('.'))].emplace_back(fault["start_s"].get<double>(), end);
    }
  }
  int failure_stops = 0;
  for (const auto& row : csv_rows(slurp(out / "containers.csv"))) {
    ASSERT_GE(row.size(), 6u);
    const std::string& host = row[1];
    const double started = std::stod(row[3]);
    for (const auto& [from, to] : down[host])
      EXPECT_FALSE(started >= from && started < to) << row[0] << " started on " << host << " while it was down";
    if (host == "h108") EXPECT_LT(started, onset.at("h108")) << row[0];
    if (row[5] != "host_failed" && row[5] != "gpu_failed") continue;
    ++failure_stops;
    ASSERT_TRUE(onset.count(host)) << row[0] << " stopped for " << row[5] << " on a host the trace never failed";
    EXPECT_GE(std::stod(row[4]), onset.at(host));
  }
  // Only h108 among the job's hosts fails while the job runs; the others'
  // faults last one trace tick (8.64 s), shorter than any collective stall.
  EXPECT_EQ(failure_stops, 1);
  const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  EXPECT_LT(summary["iterations"]["no_detector"].get<double>(), summary["iterations"]["fault_free"].get<double>());
  // Spares were enough all day.
  EXPECT_EQ(summary["placement"]["stretches"], 0);
  EXPECT_DOUBLE_EQ(summary["placement"]["unplaced_s"].get<double>(), 0.0);
}

// The InfiniteHBD slice on a fleet with two spares: four servers are down
// at the start, so the job cannot be placed until two of them come back;
// the run says so and for how long instead of reporting a silent loss.
TEST(TraceReplay, AJobThatCannotBePlacedIsReported) {
  const auto out = scratch("unplaced");
  const auto scenario = out.parent_path() / "unplaced.yaml";
  std::string text = slurp("scenarios/infinitehbd-replay-slice.yaml");
  const std::string spares = "spare_hosts: 16";
  text.replace(text.find(spares), spares.size(), "spare_hosts: 2");
  const std::string trace = "../data/";
  text.replace(text.find(trace), trace.size(), std::string(GAUNTLET_SOURCE_DIR) + "/data/");
  std::ofstream(scenario) << text;
  const auto result = gauntlet("run " + scenario.string() + " --no-progress --out " + out.string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("warning: job 'llm-3k' could not be placed for"), std::string::npos) << result.err;
  const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  const auto& placement = summary["placement"];
  EXPECT_GE(placement["stretches"].get<int>(), 1);
  EXPECT_GE(placement["most_hosts_short"].get<int>(), 1);
  EXPECT_GT(placement["unplaced_s"].get<double>(), 0.0);
  bool noted = false;
  for (const auto& note : summary["notes"])
    noted = noted || note.get<std::string>().find("could not be placed") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(TraceReplay, FittedRatesDriveIsolationsAsC4dReportsThem) {
  const auto out = scratch("fitted");
  const auto result = gauntlet("run scenarios/infinitehbd-fitted-slice.yaml --no-progress --out " + out.string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  std::map<std::string, double> onset_of;
  std::set<std::string> slow_machines;  // the healthy fleet's (MegaScale's 0.5%, 10% slow)
  std::istringstream truth(slurp(out / "faults.jsonl"));
  for (std::string line; std::getline(truth, line);) {
    const auto fault = nlohmann::json::parse(line);
    const std::string type = fault["type"];
    if (fault.value("background", false)) {  // the healthy fleet's, not the trace's
      const std::string target = fault["target"];
      if (type == "slow_machine") slow_machines.insert(target.substr(0, target.find('.')));
      continue;
    }
    EXPECT_TRUE(type == "gpu_fail" || type == "node_crash") << type;
    onset_of[fault["target"].get<std::string>()] = fault["start_s"].get<double>();
  }
  // summary.json counts the background by kind rather than listing it.
  EXPECT_EQ(summary["background"]["by_kind"].value("slow_machine", 0), static_cast<int>(slow_machines.size()) * 8);
  ASSERT_FALSE(onset_of.empty());
  // C4D finds a failed worker within tens of seconds and the job restarts
  // without it: every isolation names a failed component, under a minute
  // after its onset. Its only false isolations are of the fleet's slow
  // machines, which it flags as stragglers (benign in ground truth).
  const auto& c4d = summary["detectors"]["c4d"];
  ASSERT_FALSE(c4d["mitigation_actions"].empty());
  int slow_isolations = 0;
  for (const auto& action : c4d["mitigation_actions"]) {
    const std::string component = action["components"][0];
    if (slow_machines.count(component)) {
      ++slow_isolations;
      continue;
    }
    ASSERT_TRUE(onset_of.count(component)) << component << " isolated without a fault";
    EXPECT_GE(action["time_s"].get<double>(), onset_of.at(component));
    EXPECT_LT(action["time_s"].get<double>(), onset_of.at(component) + 60);
  }
  EXPECT_EQ(c4d["false_isolations"].get<int>(), slow_isolations);
}

}  // namespace
