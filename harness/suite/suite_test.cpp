// The suite file's reading and episode draws (in process), and the figures
// aggregated from records whose truth is known.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "harness/scenario/input_error.hpp"
#include "harness/suite/suite_aggregate.hpp"
#include "harness/suite/suite_report.hpp"
#include "harness/suite/suite_runner.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

const std::string kSmoke = std::string(GAUNTLET_SOURCE_DIR) + "/suites/smoke.yaml";

std::string write_suite(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() / ("gauntlet-suite-test-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path.string();
}

// The smoke suite with one line replaced.
std::string smoke_with(const std::string& from, const std::string& to) {
  std::ifstream in(kSmoke);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::string load_error(const std::string& text) {
  const std::string path = write_suite("bad.yaml", text);
  try {
    load_suite(path, builtin_detectors());
  } catch (const InputError& e) {
    return std::string(e.what()).substr(path.size());
  }
  return "loaded";
}

TEST(SuiteLoader, SmokeSuiteDrawsEpisodesWithinTheirRanges) {
  const SuiteSpec spec = load_suite(kSmoke, builtin_detectors());
  const std::vector<Episode> episodes = expand_episodes(spec);
  ASSERT_EQ(episodes.size(), 8u);
  std::set<std::uint64_t> seeds;
  for (const Episode& e : episodes) {
    seeds.insert(e.seed);
    EXPECT_EQ(e.shape, (e.index < 3 ? e.index : e.index < 6 ? e.index - 3 : e.index - 6) % 2) << e.index;
    if (!e.fault) continue;
    EXPECT_GE(e.fault->onset_ns, 120'000'000'000);
    EXPECT_LE(e.fault->onset_ns, 240'000'000'000);
    ASSERT_TRUE(e.fault->magnitude);
    if (e.fault->type == "link_loss") {
      EXPECT_GE(*e.fault->magnitude, 1e-4);
      EXPECT_LE(*e.fault->magnitude, 5e-2);
      EXPECT_TRUE(std::regex_match(e.fault->target, std::regex("leaf[0-9]+~spine[0-9]+"))) << e.fault->target;
      EXPECT_EQ(*e.fault->duration_ns, 240'000'000'000);
    } else {
      EXPECT_GE(*e.fault->magnitude, 0.05);
      EXPECT_LE(*e.fault->magnitude, 0.5);
      EXPECT_TRUE(std::regex_match(e.fault->target, std::regex("h[0-9]+\\.gpu[0-9]+"))) << e.fault->target;
    }
  }
  EXPECT_EQ(seeds.size(), episodes.size());
  EXPECT_FALSE(episodes[6].fault);
  EXPECT_FALSE(episodes[7].fault);
}

TEST(SuiteLoader, SameSuiteSameEpisodesAndAnotherSeedOthers) {
  const SuiteSpec spec = load_suite(kSmoke, builtin_detectors());
  const auto a = expand_episodes(spec), b = expand_episodes(spec);
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(episode_scenario_text(spec, a[i]), episode_scenario_text(spec, b[i]));
  const SuiteSpec other = load_suite(write_suite("seed2.yaml", smoke_with("seed: 1", "seed: 2")), builtin_detectors());
  EXPECT_NE(episode_scenario_text(spec, a[0]), episode_scenario_text(other, expand_episodes(other)[0]));
}

// An episode's scenario tree owns its nodes: one assigned from the suite
// file as it is would alias it (and join the file's node pool, which every
// later episode's tree then copied: loading suites/standard.yaml took over
// ten seconds under the fuzzer's sanitizers).
TEST(SuiteLoader, AnEpisodeTreeDoesNotAliasTheSuiteFile) {
  const SuiteSpec spec = load_suite(kSmoke, builtin_detectors());
  const SuiteShape& shape = spec.shapes.at(0);
  const int hosts = shape.cluster["hosts"].as<int>();
  YAML::Node tree = shape_scenario_tree(spec, shape);
  tree["cluster"]["hosts"] = hosts + 1;
  tree[present(shape.jobs) ? "jobs" : "job"] = "changed";
  tree["duration"] = "1s";
  EXPECT_EQ(shape.cluster["hosts"].as<int>(), hosts);
  EXPECT_TRUE(present(shape.jobs) ? shape.jobs.IsSequence() : shape.job.IsMap());
  EXPECT_NE(spec.duration.Scalar(), "1s");
  EXPECT_EQ(episode_scenario_text(spec, expand_episodes(spec)[0]).find("changed"), std::string::npos);
}

// Counts and seeds of a record must be integers within range: nlohmann's
// get<> casts any number, a double past the range being undefined behavior
// (the episode fuzzer's {"seed": 1.8e29}) and a negative count wrapping.
TEST(EpisodeRecordJson, CountsAndSeedsOutOfRangeAreNotARecord) {
  EpisodeRecord record;
  record.type = "link_loss";
  record.detectors.push_back({});
  record.detectors[0].name = "timeout";
  const nlohmann::ordered_json good = record_json(record);
  EXPECT_EQ(record_from_json(good).seed, 0u);
  auto with = [&](const nlohmann::json::json_pointer& at, const nlohmann::ordered_json& value) {
    nlohmann::ordered_json bad = good;
    bad[at] = value;
    return bad;
  };
  using Pointer = nlohmann::json::json_pointer;
  const std::string name = "timeout";
  for (const auto& [at, value] : std::vector<std::pair<Pointer, nlohmann::ordered_json>>{
           {Pointer("/seed"), 1.8e29},
           {Pointer("/seed"), -1},
           {Pointer("/episode"), 2.5},
           {Pointer("/detectors/" + name + "/alerts"), 1e12},
           {Pointer("/detectors/" + name + "/false_alerts"), -3.0},
           {Pointer("/detectors/" + name + "/background_alerts"), 4294967296}}) {
    SCOPED_TRACE(at.to_string() + " = " + value.dump());
    EXPECT_THROW(record_from_json(with(at, value)), nlohmann::json::type_error);
  }
  EXPECT_EQ(record_from_json(with(Pointer("/detectors/" + name + "/alerts"), 7)).detectors.at(0).alerts, 7);
}

TEST(SuiteLoader, BadSuitesPointAtTheValue) {
  EXPECT_EQ(load_error(smoke_with("seed: 1", "seed: 1\ncolour: red")).rfind(":7:1: unknown key 'colour'", 0), 0u);
  EXPECT_EQ(load_error(smoke_with("log_uniform: [1e-4, 5e-2]", "log_uniform: [0, 5e-2]")),
            ":32:26: log_uniform: low must be above 0");
  EXPECT_EQ(load_error(smoke_with("uniform: [0.05, 0.5]", "uniform: [0.5, 0.05]")),
            ":26:31: uniform: high must not be below low");
  EXPECT_NE(load_error(smoke_with("\"leaf*~spine*\"", "\"spine*\""))
                .find(":29:13: link_loss: its target matches no component of shape 'pod16'"),
            std::string::npos);
  // A drawn slowdown above 1 is out of gpu_throttle's range: refused at its entry before anything runs.
  const std::string over = load_error(smoke_with("uniform: [0.05, 0.5]", "uniform: [1.5, 2.5]"));
  EXPECT_NE(over.find(":21:5: episode 0 (shape pod16): "), std::string::npos) << over;
  EXPECT_NE(over.find("slowdown"), std::string::npos) << over;
  EXPECT_NE(load_error(smoke_with("episodes: 3", "episodes: 0")).find(":22:15:"), std::string::npos);
}

TEST(SuiteLoader, BadSweepsPointAtTheValue) {
  const std::string sweep = "sensitivity:\n  - {detector: c4d, param: compute_slow, values: [0.02, 0.2]}";
  EXPECT_EQ(load_error(smoke_with(sweep, "sensitivity:\n  - {detector: eroica, param: slowdown, values: [1.2]}")),
            ":39:16: 'eroica' is not one of the suite's detectors");
  const std::string with_eroica = smoke_with("detectors: [timeout, falcon, c4d, pingmesh]", "detectors: [eroica]");
  const auto at = with_eroica.find(sweep);
  EXPECT_EQ(load_error(
                std::string(with_eroica)
                    .replace(at, sweep.size(), "sensitivity:\n  - {detector: eroica, param: slowdown, values: [1.2]}")),
            "loaded");  // each copy gets a run of its own, so it sees only the profiling it opens
  EXPECT_EQ(load_error(smoke_with(sweep, "sensitivity:\n  - {detector: c4d, param: colour, values: [1]}")),
            ":39:28: 'colour' is not a numeric parameter of c4d");
  // 0.05 is c4d's own compute_slow: the detector already runs there.
  EXPECT_EQ(load_error(smoke_with(sweep, "sensitivity:\n  - {detector: c4d, param: compute_slow, values: [0.05]}")),
            ":39:51: compute_slow 0.05 is listed twice (the detector itself runs at 0.05)");
  EXPECT_NE(load_error(smoke_with(sweep, "sensitivity:\n  - {detector: c4d, param: comm_slow, values: [0.5]}"))
                .find(":39:48: c4d: "),
            std::string::npos);
}

// The suite's episode i run in process, as the suite runs it.
RunReport run_suite_episode(const SuiteSpec& spec, std::size_t i) {
  const std::vector<Episode> episodes = expand_episodes(spec);
  RunOptions options;
  options.parallel_runs = 1;
  return run_observed(episode_scenario(spec, episodes.at(i), builtin_detectors()), builtin_detectors(), options);
}

// Congestion at 20% load on a host link the ring crosses, a minute into a
// hung monitoring agent elsewhere (which training does not feel): the
// background is ground truth's benign congestion, and c4d at a ring-edge
// threshold of 1.05 blames that link (its ring edge takes 1/(1-0.2) = 1.25
// times its peers'). Those alerts are false although a fault is open: they
// blame the noise, so they do not count as finding the hang.
TEST(SuiteBackground, AlertsBlamingLowCongestionAreFalse) {
  const std::string text =
      smoke_with("detectors: [timeout, falcon, c4d, pingmesh]", "detectors: [{name: c4d, comm_slow: 1.05}]");
  std::string suite = text.substr(0, text.find("faults:")) +
                      "faults:\n  - {type: agent_hang, episodes: 1, target: \"h3.agent\", onset: 3m, duration: 5m}\n"
                      "background:\n  - {type: congestion, probability: 1, target: \"h1.nic0~leaf0\", onset: 4m,"
                      " duration: 3m, load: 0.2}\n";
  const SuiteSpec spec = load_suite(write_suite("noise.yaml", suite), builtin_detectors());
  const Episode episode = expand_episodes(spec).at(0);
  ASSERT_EQ(episode.background.size(), 1u);
  EXPECT_NE(episode_scenario_text(spec, episode).find("benign: true"), std::string::npos);
  const RunReport report = run_suite_episode(spec, 0);
  // The hang and the declared noise, then the healthy fleet's own background.
  ASSERT_GE(report.faults.size(), 2u);
  for (std::size_t i = 2; i < report.faults.size(); ++i) EXPECT_TRUE(report.faults[i].background);
  const FaultEpisode& hang = report.faults[0];
  const FaultEpisode& noise = report.faults[1];
  EXPECT_EQ(hang.type, "agent_hang");
  EXPECT_FALSE(hang.benign);
  EXPECT_EQ(noise.type, "congestion");
  EXPECT_EQ(noise.target, "h1.nic0~leaf0");
  EXPECT_TRUE(noise.benign);
  int blaming = 0;
  for (const Alert& alert : report.faulty.detectors.at("c4d").alerts)
    if (!alert.suspects.empty() && alert.suspects.front().id == noise.target && alert.time_s >= noise.start_s &&
        alert.time_s < *hang.end_s)
      ++blaming;
  EXPECT_GT(blaming, 0);
  const DetectorScore& score = report.scores.at("c4d");
  EXPECT_EQ(score.false_alerts, score.alerts);
  EXPECT_GE(score.benign_alerts, blaming);
  const EpisodeRecord record = episode_record(spec, episode, report);
  EXPECT_FALSE(record.detectors.at(0).detected);
  EXPECT_EQ(record.detectors.at(0).background_alerts, score.benign_alerts);
  EXPECT_NE(record.background.at(0).find("congestion h1.nic0~leaf0 at 240"), std::string::npos);
}

// A sweep's copies run beside the detector in the same simulated run: every
// listed detector's record is what it is without them.
TEST(SuiteSweep, CopiesLeaveTheListedDetectorsAsTheyAre) {
  const std::string text =
      smoke_with("detectors: [timeout, falcon, c4d, pingmesh]", "detectors: [falcon, c4d, skeleton, pingmesh]");
  const std::string sweep = "  - {detector: c4d, param: compute_slow, values: [0.02, 0.2]}";
  const std::string sweeps =
      "  - {detector: falcon, param: min_shift, values: [0.03]}\n"
      "  - {detector: c4d, param: comm_slow, values: [1.1, 3]}\n"
      "  - {detector: skeleton, param: rtt_margin, values: [10us]}\n"
      "  - {detector: pingmesh, param: rtt_threshold, values: [20us]}";
  const SuiteSpec with =
      load_suite(write_suite("sweeps.yaml", std::string(text).replace(text.find(sweep), sweep.size(), sweeps)),
                 builtin_detectors());
  ASSERT_EQ(with.sensitivity.size(), 4u);
  SuiteSpec without = with;
  without.sensitivity.clear();
  for (std::size_t i : {0u, 3u, 6u}) {  // a throttled GPU, a lossy link, a healthy episode
    const Episode episode = expand_episodes(with).at(i);
    const EpisodeRecord a = episode_record(with, episode, run_suite_episode(with, i));
    const EpisodeRecord b = episode_record(without, episode, run_suite_episode(without, i));
    EXPECT_EQ(a.sweep.size(), 5u);
    EXPECT_TRUE(b.sweep.empty());
    nlohmann::ordered_json ja = record_json(a), jb = record_json(b);
    EXPECT_EQ(ja["detectors"], jb["detectors"]) << i;
  }
}

EpisodeRecord record(std::size_t index, const std::string& type, std::optional<double> magnitude, bool detected,
                     double latency, int alerts, int false_alerts) {
  EpisodeRecord r;
  r.index = index;
  r.type = type;
  r.sim_seconds = 3600;
  if (magnitude) r.magnitude_param = "rate", r.magnitude = magnitude;
  DetectorEpisode d;
  d.name = "probe";
  d.detected = detected;
  d.alerts = alerts;
  d.false_alerts = false_alerts;
  if (detected) d.latency_s = latency, d.top1 = 1, d.top3 = 1;
  r.detectors.push_back(d);
  return r;
}

TEST(SuiteAggregate, FiguresFromKnownRecords) {
  SuiteSpec spec = load_suite(kSmoke, builtin_detectors());
  std::vector<EpisodeRecord> records;
  // link_loss at magnitudes 1..10: caught from 4 up.
  for (int m = 1; m <= 10; ++m) records.push_back(record(m - 1, "link_loss", m, m >= 4, 10.0 * m, m >= 4 ? 1 : 0, 0));
  // Two healthy hours with 3 false alerts.
  records.push_back(record(10, "healthy", std::nullopt, false, 0, 1, 1));
  records.push_back(record(11, "healthy", std::nullopt, false, 0, 2, 2));
  const SuiteResult result = aggregate_suite(spec, records);
  ASSERT_EQ(result.detectors.size(), 1u);
  const DetectorFigures& d = result.detectors[0];
  const ClassFigures* loss = nullptr;
  for (const ClassFigures& c : d.classes)
    if (c.fault_class == "link_loss") loss = &c;
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->detected, 7);
  EXPECT_DOUBLE_EQ(*loss->recall.value, 0.7);
  EXPECT_DOUBLE_EQ(*loss->precision.value, 1);
  EXPECT_DOUBLE_EQ(*loss->latency_p50_s.value, 70);
  ASSERT_TRUE(loss->caught_90);
  EXPECT_DOUBLE_EQ(*loss->caught_90, 4);
  EXPECT_EQ(loss->curve.size(), 6u);
  EXPECT_EQ(loss->curve.front().detected, 0);
  EXPECT_EQ(loss->curve.back().detected, loss->curve.back().episodes);
  EXPECT_DOUBLE_EQ(*d.false_alerts_per_healthy_hour.value, 1.5);
  EXPECT_DOUBLE_EQ(result.healthy_hours, 2);
  // "all" pools the healthy episodes' false alerts into precision: 7 true of 10.
  EXPECT_DOUBLE_EQ(*d.classes.back().precision.value, 0.7);
  EXPECT_NE(suite_leaderboard(result).find("rate>=4"), std::string::npos);
}

TEST(SuiteCompare, McNemarOnPairedEpisodes) {
  SuiteResult a, b;
  a.suite = b.suite = "s";
  for (std::size_t i = 0; i < 8; ++i) {
    a.records.push_back(record(i, "gpu_throttle", std::nullopt, true, 5, 1, 0));
    b.records.push_back(record(i, "gpu_throttle", std::nullopt, i == 0, 5, 1, 0));
  }
  const std::string text = compare_suites(a, "A", b, "B");
  EXPECT_NE(text.find("0.0156"), std::string::npos) << text;  // 7 discordant pairs, all one way: 2 / 2^7
  EXPECT_NE(text.find("A detects more (significant)"), std::string::npos) << text;
}

// Two suites (another name or version) that share episodes, say a subset
// of the standard suite that draws its first episodes as the standard suite
// does, pair them by seed and draw, whatever their indices.
TEST(SuiteCompare, TwoSuitesPairTheEpisodesTheyShareBySeedAndDraw) {
  SuiteResult a, b;
  a.suite = "standard", b.suite = "subset", b.version = 2;
  for (std::size_t i = 0; i < 8; ++i) {
    EpisodeRecord ra = record(i, "gpu_throttle", std::nullopt, true, 5, 1, 0);
    ra.seed = 1000 + i, ra.target = "h" + std::to_string(i) + ".gpu0";
    a.records.push_back(ra);
    EpisodeRecord rb = ra;
    rb.index = 7 - i;  // another order, other indices
    rb.detectors[0].detected = i == 0;
    b.records.push_back(rb);
  }
  EpisodeRecord other = b.records[0];  // B's own episode: another draw of the same seed
  other.target = "h9.gpu0", other.index = 8;
  b.records.push_back(other);
  const std::string text = compare_suites(a, "A", b, "B");
  EXPECT_NE(text.find("paired by episode seed and draw: 8 episodes of standard v0 and subset v2"), std::string::npos)
      << text;
  EXPECT_NE(text.find("0.0156"), std::string::npos) << text;
  EXPECT_NE(text.find("A detects more (significant)"), std::string::npos) << text;
  for (EpisodeRecord& r : b.records) r.seed += 1;  // nothing shared: refused
  EXPECT_THROW(compare_suites(a, "A", b, "B"), InputError);
}

}  // namespace
}  // namespace gauntlet::harness
