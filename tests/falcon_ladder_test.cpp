// falcon-ladder: a half-speed GPU costs "do nothing" a fixed share of every
// iteration while it lasts; the ladder's micro-batch rebalancing wins most of
// it back, and its lost iterations follow from when it acted, its pauses and
// the balanced pace. Each lever is taken once the training time lost since
// the last step (1 - healthy / slow per second) reaches its cost, so a
// slowdown shorter than that gets no action at all; a lever that makes
// iterations slower is undone. A lossy fabric link is drained from ECMP,
// with no restart; a slow GPU never moves network traffic.
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

// On the clean fleet (`background: none`): the ladder's arithmetic below is
// pinned on identical GPUs, whose healthy step the scenarios state.
LadderRun run(const std::string& scenario) {
  const fs::path out = fs::temp_directory_path() / ("gauntlet-ladder-" + std::to_string(::getpid()));
  const fs::path clean = fs::temp_directory_path() / ("gauntlet-ladder-clean-" + std::to_string(::getpid()) + ".yaml");
  {
    std::ifstream shipped(scenario);
    std::ofstream(clean) << shipped.rdbuf() << "\nbackground: none\n";
  }
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet run " + clean.string() + " --out " +
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
  fs::remove(clean);
  return r;
}

double lost_by_doing_nothing(const nlohmann::json& summary) {
  return summary["iterations"]["fault_free"].get<double>() - summary["iterations"]["no_detector"].get<double>();
}

// The time a lever costing `cost` is due after the alert when iterations
// take `slow` instead of `healthy`: the loss accrues at 1 - healthy / slow.
double due_after(double cost, double healthy, double slow) { return cost / (1 - healthy / slow); }

bool moves_network_traffic(const nlohmann::json& actions) {
  for (const auto& a : actions) {
    const std::string name = a["action"].get<std::string>();
    if (name == "drain-fabric-link" || name.find("nic-traffic") != std::string::npos) return true;
  }
  return false;
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

  const double none = lost_by_doing_nothing(s);
  EXPECT_NEAR(none, (end - onset) * (1 / healthy - 1 / slow), 1.5);

  // C4D must drive the ladder; EROICA's run is held to the same formula
  // whenever it alerts at all.
  EXPECT_GT(s["detectors"]["c4d"]["detected"].get<int>(), 0);
  for (const char* name : {"c4d", "eroica"}) {
    SCOPED_TRACE(name);
    const nlohmann::json& d = s["detectors"][name];
    if (d["detected"].get<int>() == 0) continue;
    const nlohmann::json& actions = d["mitigation_actions"];
    EXPECT_FALSE(moves_network_traffic(actions)) << actions.dump();
    ASSERT_EQ(actions.size(), 2u) << actions.dump();
    // Rung 1 once the loss has reached the rebalance cost; the relayout
    // rung has no pipeline to act on and the restart rung is never reached.
    EXPECT_EQ(actions[0]["action"], "rebalance-microbatches");
    EXPECT_EQ(actions[1]["action"], "even-split");
    const double rebalanced = actions[0]["time_s"].get<double>();
    const double reverted = actions[1]["time_s"].get<double>();
    // Due once the loss since the alert (stamped detection latency after
    // onset) reaches the rung's cost; the next observe tick takes it.
    const double latency = d["detection_latency_s"]["p50"].get<double>();
    EXPECT_GE(rebalanced, onset + latency + due_after(pause, healthy, slow) - 1e-6);
    EXPECT_LE(rebalanced, onset + latency + due_after(pause, healthy, slow) + 1);
    // The ladder learns of the recovery from the compute times of the first
    // iteration begun after it: within two iterations, and the next tick.
    EXPECT_GE(reverted, end);
    EXPECT_LE(reverted, end + 2 * balanced + 1);

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

TEST(FalconLadder, APersistentSlowdownClimbsEveryRungThatPaysToARestartOnASpare) {
  const LadderRun r = run("scenarios/falcon-ladder-persistent.yaml");
  const nlohmann::json& s = r.summary;
  const double onset = 600, rebalance = 10, restart = 300, compute = 4;  // from the scenario
  const double healthy = duration_in(r, 0, onset), slow = duration_in(r, onset + 20, 3600);
  const double none = lost_by_doing_nothing(s);
  const nlohmann::json& c4d = s["detectors"]["c4d"];
  const double alert = onset + c4d["detection_latency_s"]["p50"].get<double>();
  const nlohmann::json& actions = c4d["mitigation_actions"];
  EXPECT_FALSE(moves_network_traffic(actions)) << actions.dump();
  ASSERT_EQ(actions.size(), 2u) << actions.dump();
  EXPECT_EQ(actions[0]["action"], "rebalance-microbatches");
  EXPECT_EQ(actions[1]["action"], "checkpoint-restart");
  const double rebalanced = actions[0]["time_s"].get<double>(), restarted = actions[1]["time_s"].get<double>();
  // Rung 1: the loss at the throttled pace reaches 10 s.
  EXPECT_GE(rebalanced, alert + due_after(rebalance, healthy, slow) - 1e-6);
  EXPECT_LE(rebalanced, alert + due_after(rebalance, healthy, slow) + 1);
  // 32 micro-batches over four replicas of two stages, one at half speed:
  // the slow replica runs 4 (5 slots at half speed, 10), the others 10, 9
  // and 9 (11, 10, 10 slots): 11 of the 9 slots of 4 s / 9 each. That
  // leaves every stage's worst replica at 11 slots, so no layer split does
  // better and the layer rung is skipped; the restart comes once 300 s are
  // lost at that pace.
  const double balanced = healthy + (11 - 9) * compute / 9;
  EXPECT_NEAR(restarted, rebalanced + rebalance + due_after(restart, healthy, balanced), 2);
  EXPECT_EQ(actions[1]["components"], nlohmann::json::array({"h3.gpu2"}));
  EXPECT_EQ(c4d["false_isolations"].get<int>(), 0);
  EXPECT_LT(c4d["lost_iterations"].get<double>(), none);
}

TEST(FalconLadder, APersistentLossyFabricLinkIsDrainedAndTheJobRunsAtItsHealthyPace) {
  const LadderRun r = run("scenarios/falcon-ladder-lossy-link.yaml");
  const nlohmann::json& s = r.summary;
  const double onset = 600, end = 1800, repair = 30;  // from the scenario
  const double healthy = duration_in(r, 0, onset), slow = duration_in(r, onset + 20, end);
  // 2 x 7/8 x 16 GB over 50 GB/s: 0.56 s of allreduce, more than doubled
  // by the go-back-N goodput of the lossy edge.
  EXPECT_NEAR(healthy - 2.0, 0.56, 0.01);
  EXPECT_GT(slow - 2.0, 2 * (healthy - 2.0));
  const double none = lost_by_doing_nothing(s);
  EXPECT_NEAR(none, (end - onset) * (1 / healthy - 1 / slow), 1.5);

  const nlohmann::json& pingmesh = s["detectors"]["pingmesh"];
  const nlohmann::json& actions = pingmesh["mitigation_actions"];
  ASSERT_EQ(actions.size(), 1u) << actions.dump();  // re-pairing sufficed: no restart
  EXPECT_EQ(actions[0]["action"], "drain-fabric-link");
  EXPECT_EQ(actions[0]["components"], nlohmann::json::array({"leaf3~spine2"}));
  const double alert = onset + pingmesh["detection_latency_s"]["p50"].get<double>();
  const double drained = actions[0]["time_s"].get<double>();
  EXPECT_GE(drained, alert + due_after(repair, healthy, slow) - 1e-6);
  EXPECT_LE(drained, alert + due_after(repair, healthy, slow) + 1);
  // Slow until the drain, the rebuild's pause, then nothing more lost: the
  // re-hashed ring runs at the healthy pace. The pause abandons the step in
  // flight (up to one iteration) and boundaries shift by up to one.
  const double formula = (drained - onset) * (1 / healthy - 1 / slow) + repair / healthy;
  const double lost = pingmesh["lost_iterations"].get<double>();
  EXPECT_GE(lost, formula - 1);
  EXPECT_LE(lost, formula + 2);
  EXPECT_EQ(pingmesh["false_isolations"].get<int>(), 0);

  // c4d blames a ring edge's RNIC, never the fabric link: the ladder may
  // try moving its GPUs to the sibling (two rings' edges at half rate
  // against the lossy link's go-back-N pace), measures each move and undoes
  // one that did not pay, and never restarts the job for a fabric fault.
  const nlohmann::json& c4d = s["detectors"]["c4d"];
  EXPECT_GT(c4d["alerts"].get<int>(), 0);
  for (const nlohmann::json& action : c4d["mitigation_actions"]) {
    EXPECT_NE(action["action"], "checkpoint-restart") << c4d["mitigation_actions"].dump();
    EXPECT_NE(action["action"], "drain-fabric-link") << c4d["mitigation_actions"].dump();
  }
  EXPECT_LE(c4d["lost_iterations"].get<double>(), none);
  EXPECT_EQ(c4d["false_isolations"].get<int>(), 0);
}

TEST(FalconLadder, ALossyHostLinksGpusMoveToTheFallbackRnicWhichCarriesTwoRings) {
  const LadderRun r = run("scenarios/falcon-ladder-lossy-host-link.yaml");
  const nlohmann::json& s = r.summary;
  const double onset = 600, end = 1800, repair = 30, compute = 2;  // from the scenario
  const double healthy = duration_in(r, 0, onset), slow = duration_in(r, onset + 20, end);
  // The fallback RNIC's host link carries its own ring edges and the moved
  // ones at half rate each: the allreduce takes twice its healthy time.
  const double doubled = healthy + (healthy - compute);
  EXPECT_GT(slow, 1.05 * doubled);  // so the move pays
  const double none = lost_by_doing_nothing(s);
  for (const char* name : {"c4d", "falcon"}) {
    SCOPED_TRACE(name);
    const nlohmann::json& d = s["detectors"][name];
    const nlohmann::json& actions = d["mitigation_actions"];
    ASSERT_EQ(actions.size(), 1u) << actions.dump();
    EXPECT_EQ(actions[0]["action"], "move-nic-traffic");
    EXPECT_EQ(actions[0]["components"], nlohmann::json::array({"h4.nic3"}));
    const double alert = onset + d["detection_latency_s"]["p50"].get<double>();
    const double moved = actions[0]["time_s"].get<double>();
    EXPECT_GE(moved, alert + due_after(repair, healthy, slow) - 1e-6);
    EXPECT_LE(moved, alert + due_after(repair, healthy, slow) + 1);
    // Slow until the move, the rebuild, then the doubled allreduce: not
    // back to healthy, which would lose about 75 iterations fewer.
    const double formula = (moved - onset) * (1 / healthy - 1 / slow) + repair / healthy +
                           (end - moved - repair) * (1 / healthy - 1 / doubled);
    const double lost = d["lost_iterations"].get<double>();
    EXPECT_GE(lost, formula - 1);
    EXPECT_LE(lost, formula + 2);
    EXPECT_LT(lost, none);
    EXPECT_EQ(d["false_isolations"].get<int>(), 0);
  }
}

TEST(FalconLadder, AMoveOntoACongestedRnicIsMeasuredAndMovedBack) {
  // The lossy host link's scenario with h4's RNIC 0, the fallback, also
  // congested to 0.3 of its rate: alone there a ring is faster than on the
  // 2% lossy link (its go-back-N goodput 0.21 of the line, as the packet
  // engine measured it), so the lossy link is the one falcon finds; moving
  // RNIC 3's GPUs there puts two rings on 0.3 of a link, 0.15 each, slower.
  std::ifstream in("scenarios/falcon-ladder-lossy-host-link.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string fault = "  - {type: link_loss, target: h4.nic3~leaf3, at: 10m, rate: 0.02}\n";
  ASSERT_NE(yaml.find(fault), std::string::npos);
  yaml.replace(yaml.find(fault), fault.size(),
               fault + "  - {type: congestion, target: h4.nic0~leaf0, at: 10m, load: 0.7}\n");
  const fs::path path =
      fs::temp_directory_path() / ("gauntlet-ladder-congested-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << yaml;
  const LadderRun r = run(path.string());
  fs::remove(path);
  const double repair = 30;
  const double slow = duration_in(r, 620, 1800);
  const nlohmann::json& actions = r.summary["detectors"]["falcon"]["mitigation_actions"];
  ASSERT_GE(actions.size(), 2u) << actions.dump();
  EXPECT_EQ(actions[0]["action"], "move-nic-traffic");
  EXPECT_EQ(actions[0]["components"], nlohmann::json::array({"h4.nic3"}));
  EXPECT_EQ(actions[1]["action"], "restore-nic-traffic");
  EXPECT_EQ(actions[1]["components"], nlohmann::json::array({"h4.nic3"}));
  // Moved back at the first tick after one iteration begun after the rebuild.
  const double moved = actions[0]["time_s"].get<double>(), restored = actions[1]["time_s"].get<double>();
  EXPECT_GE(restored, moved + repair);
  EXPECT_LE(restored, moved + repair + 2 * slow + 1);
  EXPECT_EQ(r.summary["detectors"]["falcon"]["false_isolations"].get<int>(), 0);
}

TEST(FalconLadder, ATransientSlowdownEndsBeforeTheFirstRungIsWorthIt) {
  const LadderRun r = run("scenarios/falcon-ladder-transient.yaml");
  const nlohmann::json& s = r.summary;
  const double none = lost_by_doing_nothing(s);
  EXPECT_GT(none, 0.5);  // the 40 s throttle did cost something
  const nlohmann::json& c4d = s["detectors"]["c4d"];
  EXPECT_GT(c4d["alerts"].get<int>(), 0);                                              // the ladder was told...
  EXPECT_TRUE(c4d["mitigation_actions"].empty()) << c4d["mitigation_actions"].dump();  // ...and waited it out
  EXPECT_EQ(c4d["lost_iterations"].get<double>(), none);
}

// A two-stage pipeline with one replica: only the layer move applies.
// `layers` sets its granularity.
std::string pipeline_scenario(int layers) {
  const fs::path path = fs::temp_directory_path() / ("gauntlet-ladder-layers-" + std::to_string(::getpid()) + "-" +
                                                     std::to_string(layers) + ".yaml");
  std::ofstream out(path);
  out << "name: falcon-ladder-layers\n"
         "seed: 11\n"
         "duration: 40m\n"
         "engine: flow\n"
         "cluster: {spines: 1, leaves: 8, hosts: 2, gpus_per_host: 8, rnics_per_host: 8, rail_optimized: true}\n"
         "job:\n"
         "  name: llm\n"
         "  gpus: 16\n"
         "  parallelism: {tp: 8, pp: 2, dp: 1, ep: 1}\n"
         "  compute_per_iteration: 4s\n"
         "  activation_bytes: 64MB\n"
         "  microbatches: 8\n"
         "  layers: "
      << layers
      << "\n"
         "  checkpoint_interval: 10m\n"
         "faults:\n"
         "  - {type: gpu_throttle, target: h1.gpu2, at: 10m, slowdown: 0.5}\n"
         "detectors: [falcon]\n"
         "mitigation: {policy: falcon-ladder, relayout_cost: 1m, restart_cost: 2h}\n";
  return path.string();
}

TEST(FalconLadder, LayerMovesSplitTheJobsLayersAtTheirGranularity) {
  const double onset = 600, end = 2400, pause = 60, compute = 4;
  // Stage 1 at half speed. 16 layers: it keeps 5 (a slot of 5/8 / 0.5),
  // stage 0 takes 11 (11/8): the pipeline runs at 11/8 of nominal. 48
  // layers: 16 and 32, both slots at 4/3.
  for (const auto& [layers, share] : {std::pair{16, 11.0 / 8}, std::pair{48, 4.0 / 3}}) {
    SCOPED_TRACE(layers);
    const std::string path = pipeline_scenario(layers);
    const LadderRun r = run(path);
    fs::remove(path);
    const nlohmann::json& falcon = r.summary["detectors"]["falcon"];
    ASSERT_GT(falcon["detected"].get<int>(), 0);
    const nlohmann::json& actions = falcon["mitigation_actions"];
    ASSERT_EQ(actions.size(), 1u) << actions.dump();
    EXPECT_EQ(actions[0]["action"], "move-layers");
    const double healthy = duration_in(r, 0, onset), slow = duration_in(r, onset + 20, end);
    const double moved = actions[0]["time_s"].get<double>();
    const double relaid = healthy + compute * (share - 1);
    const double formula = (moved - onset) * (1 / healthy - 1 / slow) + pause / healthy +
                           (end - moved - pause) * (1 / healthy - 1 / relaid);
    const double lost = falcon["lost_iterations"].get<double>();
    EXPECT_GE(lost, formula - 1.5);
    EXPECT_LE(lost, formula + 1.5);
  }
}

}  // namespace
