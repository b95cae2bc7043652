// falcon-ladder: a half-speed GPU costs "do nothing" a fixed share of every
// iteration while it lasts; the ladder's micro-batch rebalancing wins most of
// it back, and its lost iterations follow from when it acted, its pauses and
// the balanced pace. A slowdown shorter than the first rung's cost gets no
// action at all (ski-rental); one that never ends climbs every rung.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct LadderRun {
  nlohmann::json summary;
  std::vector<double> start, duration;  // timeline.csv of the run without detectors
};

LadderRun run(const std::string& scenario) {
  const fs::path out = fs::temp_directory_path() / ("gauntlet-ladder-" + std::to_string(::getpid()));
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet run " + scenario + " --out " +
                              out.string() + " >/dev/null 2>&1 </dev/null";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  LadderRun r;
  std::ifstream summary(out / "summary.json");
  r.summary = nlohmann::json::parse(summary);
  std::ifstream timeline(out / "timeline.csv");
  std::string line;
  std::getline(timeline, line);  // header
  while (std::getline(timeline, line)) {
    std::istringstream fields(line);
    std::string iteration, start, end, duration;
    std::getline(fields, iteration, ',');
    std::getline(fields, start, ',');
    std::getline(fields, end, ',');
    std::getline(fields, duration, ',');
    r.start.push_back(std::stod(start));
    r.duration.push_back(std::stod(duration));
  }
  fs::remove_all(out);
  return r;
}

// The duration of the first iteration that starts inside [from, to).
double duration_in(const LadderRun& r, double from, double to) {
  for (std::size_t i = 0; i < r.start.size(); ++i)
    if (r.start[i] >= from && r.start[i] < to) return r.duration[i];
  ADD_FAILURE() << "no iteration starts in [" << from << ", " << to << ")";
  return 1;
}

TEST(FalconLadder, RebalancingWinsBackMostOfAThrottledGpusLoss) {
  const LadderRun r = run("scenarios/falcon-ladder-throttle.yaml");
  const nlohmann::json& s = r.summary;
  const double onset = 600, end = 1800, pause = 10;  // from the scenario
  const double healthy = duration_in(r, 0, onset), slow = duration_in(r, onset + 20, end);
  // 4 s of compute at half speed: every iteration 4 s longer.
  EXPECT_NEAR(slow - healthy, 4.0, 1e-3);
  // Balanced: 4 micro-batches on the slow replica (8 slots at half speed),
  // 60 over the other seven (9 at most): compute takes 9/8 of nominal.
  const double balanced = healthy + 4.0 * (9.0 / 8 - 1);

  const double none = s["iterations"]["fault_free"].get<double>() - s["iterations"]["no_detector"].get<double>();
  EXPECT_NEAR(none, (end - onset) * (1 / healthy - 1 / slow), 1.5);

  // C4D must drive the ladder; EROICA's run is held to the same formula
  // whenever it alerts at all.
  EXPECT_GT(s["detectors"]["c4d"]["detected"].get<int>(), 0);
  for (const char* name : {"c4d", "eroica"}) {
    SCOPED_TRACE(name);
    const nlohmann::json& d = s["detectors"][name];
    if (d["detected"].get<int>() == 0) continue;
    const nlohmann::json& actions = d["mitigation_actions"];
    ASSERT_EQ(actions.size(), 2u) << actions.dump();
    // Rung 1 once the slowdown has lasted the rebalance cost; the relayout
    // rung has no pipeline to act on and the restart rung is never reached.
    EXPECT_EQ(actions[0]["action"], "rebalance-microbatches");
    EXPECT_EQ(actions[1]["action"], "even-split");
    const double rebalanced = actions[0]["time_s"].get<double>();
    const double reverted = actions[1]["time_s"].get<double>();
    // The rung's cost after the alert (stamped detection latency after onset).
    const double latency = d["detection_latency_s"]["p50"].get<double>();
    EXPECT_NEAR(rebalanced, onset + latency + pause, 1.0);
    EXPECT_GE(reverted, end);
    EXPECT_LE(reverted, end + 1);  // the next observe tick

    // Lost vs fault-free: slow until the rebalance, a pause, the balanced
    // pace until the split is undone, another pause. Each lever abandons
    // the step in flight (up to one iteration each) and iteration
    // boundaries shift by up to one.
    const double formula = (rebalanced - onset) * (1 / healthy - 1 / slow) + pause / healthy +
                           (reverted - rebalanced - pause) * (1 / healthy - 1 / balanced) + pause / healthy;
    const double lost = d["lost_iterations"].get<double>();
    EXPECT_GE(lost, formula - 1.5);
    EXPECT_LE(lost, formula + 3);
    EXPECT_LT(lost, none);
    // A prompt alert wins back most of what doing nothing loses.
    if (latency < 60) {
      EXPECT_LT(lost, 0.35 * none) << "none lost " << none;
    }
  }
}

TEST(FalconLadder, APersistentSlowdownClimbsEveryRungToARestartOnASpare) {
  const LadderRun r = run("scenarios/falcon-ladder-persistent.yaml");
  const nlohmann::json& s = r.summary;
  const double onset = 600, healthy = duration_in(r, 0, onset);
  const double none = s["iterations"]["fault_free"].get<double>() - s["iterations"]["no_detector"].get<double>();
  const nlohmann::json& c4d = s["detectors"]["c4d"];
  const double alert = onset + c4d["detection_latency_s"]["p50"].get<double>();
  const nlohmann::json& actions = c4d["mitigation_actions"];
  ASSERT_EQ(actions.size(), 3u) << actions.dump();
  // Each rung once the slowdown has outlasted its cost (10 s, 1 min, 5 min).
  const std::vector<std::pair<std::string, double>> rungs = {
      {"rebalance-microbatches", 10}, {"move-layers", 60}, {"checkpoint-restart", 300}};
  for (std::size_t k = 0; k < rungs.size(); ++k) {
    EXPECT_EQ(actions[k]["action"], rungs[k].first);
    EXPECT_NEAR(actions[k]["time_s"].get<double>(), alert + rungs[k].second, 1.0) << rungs[k].first;
  }
  EXPECT_EQ(actions[2]["components"], nlohmann::json::array({"h3.gpu2"}));
  EXPECT_EQ(c4d["false_isolations"].get<int>(), 0);
  // On the spare the job runs at full speed: what is lost is the progress
  // since the checkpoint at the onset and the restart itself, up to a
  // checkpoint's write and iteration boundaries.
  const double restarted = actions[2]["time_s"].get<double>();
  EXPECT_NEAR(c4d["lost_iterations"].get<double>(), (restarted + 300 - onset) / healthy, 4);
  EXPECT_LT(c4d["lost_iterations"].get<double>(), none);
}

TEST(FalconLadder, ATransientSlowdownEndsBeforeTheFirstRungIsWorthIt) {
  const LadderRun r = run("scenarios/falcon-ladder-transient.yaml");
  const nlohmann::json& s = r.summary;
  const double none = s["iterations"]["fault_free"].get<double>() - s["iterations"]["no_detector"].get<double>();
  EXPECT_GT(none, 0.5);  // the 40 s throttle did cost something
  const nlohmann::json& c4d = s["detectors"]["c4d"];
  EXPECT_GT(c4d["alerts"].get<int>(), 0);  // the ladder was told...
  EXPECT_TRUE(c4d["mitigation_actions"].empty()) << c4d["mitigation_actions"].dump();  // ...and waited it out
  EXPECT_EQ(c4d["lost_iterations"].get<double>(), none);
}

}  // namespace
