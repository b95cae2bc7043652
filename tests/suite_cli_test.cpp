// The smoke suite end to end through the gauntlet binary: the merged
// summary's figures hold their intervals, healthy episodes give finite
// false-alert rates, an episode's reproduce command gives its record byte for
// byte, shards merge to the same summary, another suite sharing episodes is
// compared on those, and bad suites write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gauntlet_cli.hpp"

namespace {

using namespace cli_test;
using Json = nlohmann::ordered_json;

void expect_interval_holds_value(const Json& interval, const std::string& what) {
  if (interval["value"].is_null()) return;
  const double value = interval["value"], low = interval["low"], high = interval["high"];
  EXPECT_TRUE(std::isfinite(value)) << what;
  EXPECT_LE(low, value) << what;
  EXPECT_GE(high, value) << what;
}

class SmokeSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = new fs::path(scratch("smoke"));
    run_ = new Result(gauntlet("suite suites/smoke.yaml --jobs 2 --no-progress --out " + out_->string()));
  }
  static void TearDownTestSuite() {
    delete out_;
    delete run_;
  }
  static fs::path* out_;
  static Result* run_;
};
fs::path* SmokeSuite::out_ = nullptr;
Result* SmokeSuite::run_ = nullptr;

TEST_F(SmokeSuite, MergedSummaryHoldsEveryEpisodeAndIntervalsHoldTheirEstimates) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  EXPECT_NE(run_->out.find("false alerts per healthy hour"), std::string::npos);
  const Json summary = Json::parse(slurp(*out_ / "summary.json"));
  EXPECT_EQ(summary["suite"], "smoke");
  EXPECT_EQ(summary["version"], 2);
  EXPECT_EQ(summary["episodes"], 8);
  EXPECT_EQ(summary["records"].size(), 8u);
  EXPECT_EQ(summary["healthy_episodes"], 2);
  EXPECT_GT(summary["healthy_hours"].get<double>(), 0);
  for (const auto& [name, detector] : summary["detectors"].items()) {
    const Json& rate = detector["false_alerts_per_healthy_hour"];
    ASSERT_FALSE(rate["value"].is_null()) << name;
    expect_interval_holds_value(rate, name);
    for (const auto& [fault_class, figures] : detector["classes"].items())
      for (const char* key :
           {"recall", "precision", "localization_top1", "localization_top3", "latency_p50_s", "latency_p95_s"})
        expect_interval_holds_value(figures[key], name + " " + fault_class + " " + key);
  }
  // The throttled GPU is c4d's own fault class: it catches every one of them.
  EXPECT_EQ(summary["detectors"]["c4d"]["classes"]["gpu_throttle"]["detected"], 3);
  EXPECT_EQ(summary["detectors"]["timeout"]["classes"]["all"]["detected"], 0);
  const std::string html = slurp(*out_ / "report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("detection against"), std::string::npos);
}

// c4d's sweep over compute_slow (entry lateness, as a fraction of the step,
// that makes a rank slow): a stricter threshold misses the throttles whose
// lateness falls below it, and never catches one a laxer one missed.
TEST_F(SmokeSuite, ThresholdSweepIsAPrecisionRecallCurveInThresholdOrder) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  const Json summary = Json::parse(slurp(*out_ / "summary.json"));
  ASSERT_EQ(summary["sensitivity"].size(), 1u);
  const Json& sweep = summary["sensitivity"][0];
  EXPECT_EQ(sweep["detector"], "c4d");
  const Json& points = sweep["points"];
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0]["value"], "0.02");
  EXPECT_EQ(points[1]["value"], "0.05");
  EXPECT_TRUE(points[1]["own"].get<bool>());
  EXPECT_EQ(points[1]["detected"], summary["detectors"]["c4d"]["classes"]["all"]["detected"]);
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i]["episodes"], 6);
    if (i > 0) EXPECT_LE(points[i]["detected"].get<int>(), points[i - 1]["detected"].get<int>()) << i;
    if (!points[i]["precision"]["value"].is_null()) expect_interval_holds_value(points[i]["precision"], "precision");
    expect_interval_holds_value(points[i]["recall"], "recall");
  }
  // The smoke suite's mildest throttle (slowdown 0.1385) is late by less than a fifth of the step.
  EXPECT_LT(points[2]["detected"].get<int>(), points[0]["detected"].get<int>());
  for (const Json& record : summary["records"]) EXPECT_EQ(record["sweep"].size(), 2u);
  const std::string html = slurp(*out_ / "report.html");
  EXPECT_NE(html.find("precision-recall over compute_slow"), std::string::npos);
}

TEST_F(SmokeSuite, ReproduceCommandGivesTheSameRecord) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  const Json summary = Json::parse(slurp(*out_ / "summary.json"));
  const Json& record = summary["records"][3];
  const std::string command = record["reproduce"];
  ASSERT_EQ(command, "gauntlet suite suites/smoke.yaml --episode 3");
  const fs::path again = scratch("smoke-again");
  const Result r = gauntlet(command.substr(std::string("gauntlet ").size()) + " --out " + again.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(again / "episodes" / "e3" / "episode.json"), slurp(*out_ / "episodes" / "e3" / "episode.json"));
  EXPECT_EQ(Json::parse(slurp(again / "episodes" / "e3" / "episode.json")), record);
}

TEST_F(SmokeSuite, ShardsMergeToTheSameSummary) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  const fs::path sharded = scratch("smoke-shards");
  for (const char* shard : {"0/2", "1/2"})
    ASSERT_EQ(
        gauntlet(std::string("suite suites/smoke.yaml --no-progress --shard ") + shard + " --out " + sharded.string())
            .exit_code,
        0);
  const Result merged = gauntlet("suite suites/smoke.yaml --merge --out " + sharded.string());
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(slurp(sharded / "summary.json"), slurp(*out_ / "summary.json"));
  // Same episodes, same detections: no difference is significant.
  const Result compared =
      gauntlet("suite --compare " + (*out_ / "summary.json").string() + " " + (sharded / "summary.json").string());
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_EQ(compared.out.find("(significant)"), std::string::npos) << compared.out;
  EXPECT_NE(compared.out.find("no significant difference"), std::string::npos) << compared.out;
}

// A subset of the smoke suite under a name of its own: its first fault entry
// alone, so its episodes are the smoke suite's first three, drawn alike.
// --compare pairs them by seed and draw; a suite of another seed shares none.
TEST_F(SmokeSuite, CompareOfAnotherSuitePairsTheEpisodesBothRan) {
  ASSERT_EQ(run_->exit_code, 0) << run_->err;
  std::string text = slurp("suites/smoke.yaml");
  const auto cut = [&](const std::string& from, const std::string& to) {
    const auto a = text.find(from), b = text.find(to);
    ASSERT_NE(a, std::string::npos);
    ASSERT_NE(b, std::string::npos);
    text.erase(a, b - a);
  };
  cut("  - type: link_loss", "background:");
  cut("sensitivity:", "out:");
  text.replace(text.find("name: smoke"), 11, "name: smoke-subset");
  const fs::path dir = scratch("smoke-subset");
  fs::create_directories(dir);
  const fs::path suite = dir / "subset.yaml";
  std::ofstream(suite) << text;
  const Result subset = gauntlet("suite " + suite.string() + " --no-progress --out " + (dir / "out").string());
  ASSERT_EQ(subset.exit_code, 0) << subset.err;
  const Result compared =
      gauntlet("suite --compare " + (*out_ / "summary.json").string() + " " + (dir / "out" / "summary.json").string());
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_NE(compared.out.find("paired by episode seed and draw: 3 episodes of smoke v2 and smoke-subset v2"),
            std::string::npos)
      << compared.out;
  EXPECT_NE(compared.out.find("c4d                  3     3       0       0        0"), std::string::npos)
      << compared.out;
  text.replace(text.find("seed: 1"), 7, "seed: 2");
  std::ofstream(suite) << text;
  const Result other = gauntlet("suite " + suite.string() + " --no-progress --out " + (dir / "other").string());
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const Result refused = gauntlet("suite --compare " + (*out_ / "summary.json").string() + " " +
                                  (dir / "other" / "summary.json").string());
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.err.find("shares no episode (seed and draw)"), std::string::npos) << refused.err;
}

TEST(SuiteCli, MergeOfMissingEpisodesFails) {
  const fs::path empty = scratch("smoke-empty");
  const Result r = gauntlet("suite suites/smoke.yaml --merge --out " + empty.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("8 of 8 episodes have no record"), std::string::npos) << r.err;
}

TEST(SuiteCli, ListPrintsEveryEpisode) {
  const Result r = gauntlet("suite suites/smoke.yaml --list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("8 episodes (2 healthy)"), std::string::npos);
  EXPECT_NE(r.out.find("e7 seed "), std::string::npos);
}

TEST(SuiteCli, EmitRunsShardsAndMergesThem) {
  const Result r = gauntlet("suite suites/smoke.yaml --emit slurm --shards 4 --out /shared/smoke");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("exec 'gauntlet' suite 'suites/smoke.yaml' --shard \"${SLURM_ARRAY_TASK_ID}/4\""),
            std::string::npos)
      << r.out;
  // The gather step merges the shards' records.
  EXPECT_NE(r.out.find("suite '\\''suites/smoke.yaml'\\'' '\\''--merge'\\''"), std::string::npos) << r.out;
}

TEST(SuiteCli, BadSuiteIsRefusedWithItsPositionAndNothingWritten) {
  const fs::path suite = scratch("bad-suite.yaml"), out = scratch("bad-suite-out");
  std::ofstream(suite)
      << "name: bad\nversion: 1\nseed: 1\nduration: 10m\ndetectors: [c4d]\nshapes: []\n"
         "faults:\n  - {type: gpu_throttle, episodes: 2, onset: 1m, slowdown: {uniform: [0.1, 0.2]}}\n";
  const Result r = gauntlet("suite " + suite.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(suite.string() + ":6:9: shapes: give at least one cluster shape"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
