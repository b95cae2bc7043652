// A day of the InfiniteHBD trace replayed onto its 400-server fleet: the
// run's ground truth and the job's containers follow the trace.
#include <gtest/gtest.h>

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
  // days (h108) takes no container again.
  int failure_stops = 0;
  for (const auto& row : csv_rows(slurp(out / "containers.csv"))) {
    ASSERT_GE(row.size(), 6u);
    const std::string& host = row[1];
    if (host == "h108") EXPECT_LT(std::stod(row[3]), onset.at("h108")) << row[0];
    if (row[5] != "host_failed" && row[5] != "gpu_failed") continue;
    ++failure_stops;
    ASSERT_TRUE(onset.count(host)) << row[0] << " stopped for " << row[5] << " on a host the trace never failed";
    EXPECT_GE(std::stod(row[4]), onset.at(host));
  }
  // The four servers down at the start and h108 are job hosts; the others'
  // faults last one trace tick (8.64 s), shorter than any collective stall.
  EXPECT_EQ(failure_stops, 5);
  const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  EXPECT_LT(summary["iterations"]["no_detector"].get<double>(), summary["iterations"]["fault_free"].get<double>());
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
