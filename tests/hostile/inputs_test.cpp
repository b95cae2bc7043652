// Hostile inputs to every command's readers: each case is what a hostile
// user fed gauntlet (a crash, a hang, a blow-up or a raw library message on
// the build before the input layer), and what it must do now: exit 2 with
// the file, line and column, in bounded time.
#include <sys/stat.h>

#include <string>

#include "tests/hostile/hostile.hpp"

namespace gauntlet::hostile {
namespace {

const std::string kTruth = R"({"id":"f1","type":"link_loss","target":"leaf0~spine0","start_s":30,"end_s":60})"
                           "\n";

std::string alertmanager_payload(const std::string& starts_at) {
  return R"({"alerts": [{"labels": {"alertname": "LinkLoss", "component": "leaf0~spine0"}, "startsAt": ")" + starts_at +
         "\"}]}\n";
}

fs::path truth_file(const fs::path& dir) { return write(dir / "T.jsonl", kTruth); }

// Item 1: std::regex recursed over the fraction until the stack ran out.
TEST(HostileInputs, ScoreT0WithA30000DigitFractionIsRefused) {
  const fs::path dir = scratch("t0-fraction");
  const fs::path alerts = write(dir / "A.json", alertmanager_payload("2023-11-14T22:14:30Z"));
  const Result r = gauntlet("score --truth " + truth_file(dir).string() + " --alerts " + alerts.string() + " --out " +
                            (dir / "out").string() + " --t0 2023-11-14T22:13:55." + std::string(30000, '1') + "Z");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--t0"), std::string::npos) << r.err;
}

TEST(HostileInputs, AlertmanagerStartsAtWithA30000DigitFractionIsRefused) {
  const fs::path dir = scratch("starts-at-fraction");
  const fs::path alerts =
      write(dir / "A.json", alertmanager_payload("2023-11-14T22:13:55." + std::string(30000, '1') + "Z"));
  const Result r = gauntlet("score --truth " + truth_file(dir).string() + " --alerts " + alerts.string() + " --out " +
                            (dir / "out").string() + " --t0 2023-11-14T22:13:00Z");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(alerts.string() + ":1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not an RFC3339 time"), std::string::npos) << r.err;
}

// Item 23: offsets past a day and dates no calendar has were accepted.
TEST(HostileInputs, OffsetsPastADayAndThe31stOfFebruaryAreRefused) {
  const fs::path dir = scratch("calendar");
  const fs::path alerts = write(dir / "A.json", alertmanager_payload("2023-11-14T22:14:30Z"));
  for (const std::string t0 : {"2023-11-14T22:13:55+99:99", "2023-02-31T00:00:00Z", "2023-11-14T22:13:55+24:00"}) {
    const Result r = gauntlet("score --truth " + truth_file(dir).string() + " --alerts " + alerts.string() + " --out " +
                              (dir / "out").string() + " --t0 " + t0);
    EXPECT_EQ(r.exit_code, 2) << t0 << ": " << r.err;
    // Refused as a time, not later as a time base hours away from the faults.
    EXPECT_NE(r.err.find("--t0 '" + t0 + "' is neither an RFC3339 time"), std::string::npos) << r.err;
  }
  const fs::path bad = write(dir / "B.json", alertmanager_payload("2023-02-31T22:14:30Z"));
  const Result r = gauntlet("score --truth " + truth_file(dir).string() + " --alerts " + bad.string() + " --out " +
                            (dir / "out2").string() + " --t0 2023-11-14T22:13:00Z");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("startsAt '2023-02-31T22:14:30Z' is not an RFC3339 time"), std::string::npos) << r.err;
}

// Item 2: a recursive copy or dump of the parsed tree ran out of stack.
TEST(HostileInputs, AlertsNested150000DeepAreRefusedAtTheLimit) {
  const fs::path dir = scratch("deep-alerts");
  const fs::path alerts =
      write(dir / "A.json", "{\"alerts\": " + std::string(150000, '[') + std::string(150000, ']') + "}\n");
  const Result r = gauntlet("score --truth " + truth_file(dir).string() + " --alerts " + alerts.string() + " --out " +
                            (dir / "out").string() + " --t0 2023-11-14T22:13:00Z");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(alerts.string() + ":1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nested deeper than"), std::string::npos) << r.err;
}

std::string run_summary() {
  return R"({"scenario": "demo", "seed": 1, "detectors": {"timeout": {"recall": 1}}, "faults": []})"
         "\n";
}

TEST(HostileInputs, ReportOfACellJsonNested150000DeepIsRefused) {
  const fs::path dir = scratch("deep-cell");
  fs::create_directories(dir / "run");
  write(dir / "run" / "summary.json", run_summary());
  // Inside params, where the report dumps each value back to text.
  write(dir / "run" / "cell.json",
        "{\"params\": {\"a\": " + std::string(150000, '[') + std::string(150000, ']') + "}}");
  const Result r = gauntlet("report " + (dir / "run").string() + " " + (dir / "run").string() + " --out " +
                            (dir / "report.html").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cell.json:1:"), std::string::npos) << r.err;
}

// Item 4: readers without a regular-file check or a size limit.
TEST(HostileInputs, PromRulesFromDevZeroOrAFifoAreRefusedAtOnce) {
  const fs::path dir = scratch("prom-devices");
  const fs::path scenario = write(dir / "s.yaml", small_scenario("  - timeout\n"));
  Result r = gauntlet("validate " + scenario.string() + " --detectors prom:/dev/zero", 20);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/dev/zero"), std::string::npos) << r.err;
  const fs::path fifo = dir / "rules.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  r = gauntlet("validate " + scenario.string() + " --detectors prom:" + fifo.string(), 20);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
}

TEST(HostileInputs, ChaosPlanFromDevZeroOrPastOneMebibyteIsRefused) {
  const fs::path dir = scratch("chaos-plans");
  Result r = gauntlet("chaos /dev/zero", 20);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const std::string plan = slurp("scenarios/chaos/canary-loss.yaml");
  const fs::path big = write(dir / "big.yaml", plan + "# " + std::string(1'050'000, 'x') + "\n");
  r = gauntlet("chaos " + big.string(), 20);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("limit of 1048576"), std::string::npos) << r.err;
  const fs::path exact = write(dir / "exact.yaml", plan + "#" + std::string(1048576 - plan.size() - 2, 'x') + "\n");
  ASSERT_EQ(fs::file_size(exact), 1048576u);
  r = gauntlet("chaos " + exact.string(), 20);  // at the limit: read (dry-run)
  EXPECT_EQ(r.err.find("limit of 1048576"), std::string::npos) << r.err;
}

TEST(HostileInputs, SuiteCompareOfDevZeroIsRefused) {
  const Result r = gauntlet("suite --compare /dev/zero /dev/zero", 20);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/dev/zero:1:1: not a regular file"), std::string::npos) << r.err;
}

TEST(HostileInputs, SuiteMergeOfAnEpisodeLinkedToDevZeroIsRefused) {
  const fs::path dir = scratch("merge-zero");
  fs::create_directories(dir / "out" / "episodes" / "e0");
  fs::create_symlink("/dev/zero", dir / "out" / "episodes" / "e0" / "episode.json");
  write(dir / "out" / ".gauntlet-results", "");  // a folder gauntlet wrote, as --merge requires
  const Result r = gauntlet("suite suites/smoke.yaml --merge --out " + (dir / "out").string(), 20);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("episode.json:1:1: not a regular file"), std::string::npos) << r.err;
}

// Item 21: a raw library message and exit 1 instead of file:line:col and exit 2.
TEST(HostileInputs, SweepGridIndexPastAnyIntegerIsBadInput) {
  const fs::path dir = scratch("sweep-index");
  write(dir / "demo.yaml", slurp("scenarios/demo.yaml"));
  const fs::path sweep = write(dir / "sweep.yaml",
                               "name: huge-index\nscenarios: [demo.yaml]\nseeds: [1]\n"
                               "grid:\n  faults.99999999999999999999.rate: [0.01]\n");
  const Result r = gauntlet("sweep " + sweep.string() + " --emit slurm", 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(sweep.string() + ":5:3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has no item '99999999999999999999'"), std::string::npos) << r.err;
}

std::string calibration_table() { return slurp("data/calibration/network.json"); }

TEST(HostileInputs, CalibrationTableWithANumberPastADoubleIsBadInput) {
  const fs::path dir = scratch("calibration-1e400");
  std::string table = calibration_table();
  const std::size_t at = table.find("\"line_rate_gbps\": ") + 18;
  table.replace(at, table.find(',', at) - at, "1e400");
  const fs::path file = write(dir / "t.json", table);
  const Result r = gauntlet("calibrate --summary " + file.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(file.string() + ":"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("number overflow"), std::string::npos) << r.err;
}

TEST(HostileInputs, CalibrationTableWithRaggedProfilesIsBadInput) {
  const fs::path dir = scratch("calibration-ragged");
  std::string table = calibration_table();
  // Drop the last point of the second profile.
  const std::size_t second = table.find("\"kmin_bytes\"", table.find("\"kmin_bytes\"") + 1);
  const std::size_t list_end = table.find("]", second);
  const std::size_t last_point = table.rfind(",\n", list_end);
  table.erase(last_point, table.rfind("}", list_end) + 1 - last_point);
  const fs::path file = write(dir / "t.json", table);
  const Result r = gauntlet("calibrate --summary " + file.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("every profile takes the same offered loads"), std::string::npos) << r.err;
}

// `plan capacity --gather` over a folder with one cell of the shipped plan
// whose summary.json is `summary` (or, when empty, a link to /dev/zero).
Result gather_with(const std::string& name, const std::string& summary) {
  const fs::path dir = scratch(name);
  const fs::path cell = dir / "capacity-small" / "job.checkpoint_interval=5m,job.spare_hosts=1" / "seed-1";
  fs::create_directories(cell);
  write(dir / ".gauntlet-results", "");  // a folder gauntlet wrote, as --gather requires
  if (summary.empty())
    fs::create_symlink("/dev/zero", cell / "summary.json");
  else
    write(cell / "summary.json", summary);
  write(cell / "cell.json",
        R"({"sweep": "capacity-small", "params": {"job.checkpoint_interval": "5m", "job.spare_hosts": "1"}})");
  return gauntlet("plan capacity scenarios/plans/capacity-small-plan.yaml --gather --no-progress --out " + dir.string(),
                  30);
}

// Item 4: a shard's summary linked to /dev/zero was read without end.
TEST(HostileInputs, GatherOfASummaryLinkedToDevZeroIsRefused) {
  const Result r = gather_with("gather-zero", "");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("summary.json:1:1: not a regular file"), std::string::npos) << r.err;
}

// Item 2: a shard's summary nested 150,000 deep crashed the recursive copy.
TEST(HostileInputs, GatherOfASummaryNested150000DeepIsRefused) {
  // Inside a well-formed summary, where the detectors are copied.
  const Result r = gather_with("gather-deep", R"({"scenario": "capacity-small", "seed": 1, "detectors": {"timeout": )" +
                                                  std::string(150000, '[') + std::string(150000, ']') + "}}");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nested deeper than"), std::string::npos) << r.err;
}

// Item 21: a summary whose faults are not a list was a raw library error, exit 1.
TEST(HostileInputs, GatherOfAMalformedSummaryIsBadInput) {
  const Result r = gather_with(
      "gather-malformed", R"({"scenario": "capacity-small", "seed": 1, "detectors": {"timeout": {}}, "faults": 5})");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("summary.json:1:1: not a gauntlet summary"), std::string::npos) << r.err;
}

// Item 21: the swept detector's own value, when not YAML, was a raw parser
// error, exit 1.
TEST(HostileInputs, SuiteSweepOfAMalformedParameterIsBadInput) {
  const fs::path dir = scratch("suite-malformed");
  std::string suite = slurp("suites/smoke.yaml");
  const std::string list = "detectors: [timeout, falcon, c4d, pingmesh]";
  ASSERT_NE(suite.find(list), std::string::npos);
  suite.replace(suite.find(list), list.size(),
                R"(detectors: [timeout, falcon, {name: c4d, compute_slow: "[1"}, pingmesh])");
  const fs::path file = write(dir / "suite.yaml", suite);
  const Result r = gauntlet("suite " + file.string() + " --list", 60);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(file.string() + ":"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'compute_slow' must be a number"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gauntlet::hostile
