// Hostile detectors: exec: programs that stay within the protocol's letter
// but not its spirit, and prom: rules that expand without end. Each must
// fail the detector alone, with a clear reason, while the run goes on.
#include <nlohmann/json.hpp>

#include <string>

#include "tests/hostile/hostile.hpp"

namespace gauntlet::hostile {
namespace {

const std::string kDetector = HOSTILE_DETECTOR;

struct RunOutcome {
  Result result;
  nlohmann::json summary;
};

// `run` of the small scenario with `detectors_yaml`, failures allowed.
RunOutcome run_with(const std::string& name, const std::string& detectors_yaml, int limit_s = 120) {
  const fs::path dir = scratch(name);
  const fs::path scenario = write(dir / "s.yaml", small_scenario(detectors_yaml));
  RunOutcome outcome;
  outcome.result =
      gauntlet("run " + scenario.string() + " --allow-detector-failure --out " + (dir / "out").string(), limit_s);
  if (fs::exists(dir / "out" / "summary.json"))
    outcome.summary = nlohmann::json::parse(slurp(dir / "out" / "summary.json"), nullptr, false);
  return outcome;
}

std::string status_of(const RunOutcome& outcome, const std::string& detector) {
  if (!outcome.summary.is_object() || !outcome.summary["detectors"].contains(detector)) return "(no summary)";
  return outcome.summary["detectors"][detector].value("status", "(no status)");
}

std::string exec_entry(const std::string& args) { return "  - \"exec:" + kDetector + " " + args + "\"\n"; }
std::string exec_name(const std::string& args) { return "exec:" + kDetector + " " + args; }

// Item 6: within the protocol's old limits, 100,000 probe requests a batch
// grew a queue of probes without end.
TEST(HostileDetectors, ProbeFloodFailsTheDetector) {
  const RunOutcome o = run_with("probe-flood", "  - timeout\n" + exec_entry("probes 100000"));
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_NE(status_of(o, exec_name("probes 100000")).find("probe requests in one reply (limit"), std::string::npos)
      << status_of(o, exec_name("probes 100000"));
  EXPECT_EQ(status_of(o, "timeout"), "ok");
}

// Within the per-reply limit, but faster than an RNIC runs probes (one per
// 2 s): 100 a second on one RNIC queue 10 minutes of probes in 3 s.
TEST(HostileDetectors, ProbesFasterThanAnRnicRunsThemFailTheDetector) {
  const RunOutcome o = run_with("probe-backlog", exec_entry("probes 100"));
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_NE(status_of(o, exec_name("probes 100")).find("reply 4 (batch until 4s): probe requests on h0.nic0 queue"),
            std::string::npos)
      << status_of(o, exec_name("probes 100"));
}

// Item 6: 100 alerts of 64 suspects a batch kept millions of suspects.
TEST(HostileDetectors, SuspectFloodFailsTheDetector) {
  const RunOutcome o = run_with("suspect-flood", exec_entry("suspects 100 64"));
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_NE(status_of(o, exec_name("suspects 100 64")).find("suspects over the alerts of one reply (limit"),
            std::string::npos)
      << status_of(o, exec_name("suspects 100 64"));
}

// Item 17: a NaN score failed the whole run even when failures were allowed.
TEST(HostileDetectors, NanSuspectScoreFailsTheDetectorAlone) {
  const RunOutcome o = run_with("nan-score", "  - timeout\n" + exec_entry("nan"));
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_NE(status_of(o, exec_name("nan")).find("has score NaN"), std::string::npos) << status_of(o, exec_name("nan"));
}

// Item 23: a second reply to one batch went unnoticed (and answered the next).
TEST(HostileDetectors, ExtraReplyFailsTheDetector) {
  const RunOutcome o = run_with("extra-reply", exec_entry("extra"));
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_NE(status_of(o, exec_name("extra")).find("more than one reply"), std::string::npos)
      << status_of(o, exec_name("extra"));
}

// Item 23: a benchmark of a kind nobody runs was accepted.
TEST(HostileDetectors, UnknownBenchmarkKindFailsTheDetector) {
  const RunOutcome o = run_with("nuke", exec_entry("nuke"));
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_NE(status_of(o, exec_name("nuke")).find("benchmark kind 'nuke'"), std::string::npos)
      << status_of(o, exec_name("nuke"));
}

bool process_named(const std::string& marker) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string cmdline = slurp(entry.path() / "cmdline");
    if (cmdline.compare(0, marker.size(), marker) == 0) return true;
  }
  return false;
}

// Item 23: a helper that left the detector's process group (setsid) outlived the run.
TEST(HostileDetectors, GrandchildInASessionOfItsOwnDiesWithTheRun) {
  const std::string marker = "gauntlet-hostile-grandchild-" + std::to_string(::getpid());
  const RunOutcome o = run_with("grandchild", exec_entry("grandchild " + marker));
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_FALSE(process_named(marker));
  if (process_named(marker)) std::system(("pkill -KILL -x " + marker.substr(0, 15)).c_str());
}

// Item 18: a detector command that is not UTF-8 validated, then failed the run.
TEST(HostileDetectors, NonUtf8DetectorCommandIsRefusedAtValidate) {
  const fs::path dir = scratch("non-utf8");
  const fs::path raw = write(dir / "raw.yaml", small_scenario("  - \"exec:/bin/true \xff\"\n"));
  Result r = gauntlet("validate " + raw.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(raw.string() + ":"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not UTF-8"), std::string::npos) << r.err;
  // The same through --detectors, which no file carries.
  const fs::path plain = write(dir / "plain.yaml", small_scenario("  - timeout\n"));
  r = gauntlet("validate " + plain.string() + " --detectors 'exec:/bin/true \xff'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--detectors:1:1: detector name is not UTF-8"), std::string::npos) << r.err;
}

// Item 20: 4294968296ms wrapped an int to about a second.
TEST(HostileDetectors, ReplyTimeoutPastAnHourIsRefusedAtValidate) {
  const fs::path dir = scratch("reply-timeout");
  const fs::path scenario =
      write(dir / "s.yaml", small_scenario("  - {name: \"exec:/bin/cat\", reply_timeout: 4294968296ms}\n"));
  const Result r = gauntlet("validate " + scenario.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("reply_timeout"), std::string::npos) << r.err;
}

// Item 3: a rule whose label expands to 20,000 characters killed the
// simulation process (a regular expression's recursion); now promtool's
// output is read by hand and bounded, and the detector alone may fail.
TEST(HostileDetectors, PromLabelTemplateOf20000CharactersLeavesTheRunStanding) {
  const fs::path dir = scratch("prom-template");
  const fs::path rules = write(dir / "rules.yaml",
                               "groups:\n  - name: g\n    rules:\n      - alert: Always\n"
                               "        expr: vector(1)\n"
                               "        labels:\n          pad: '{{ printf \"%020000d\" 1 }}'\n");
  const RunOutcome o = run_with("prom-template-run", "  - timeout\n  - prom:" + rules.string() + "\n", 300);
  EXPECT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_EQ(o.result.err.find("killed by signal"), std::string::npos) << o.result.err;
  EXPECT_TRUE(o.summary.is_object());
}

}  // namespace
}  // namespace gauntlet::hostile
