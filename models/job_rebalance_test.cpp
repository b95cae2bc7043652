#include "models/job_rebalance.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <sstream>

#include "models/job_measurements.hpp"
#include "models/roce_transport.hpp"
#include "models/training_job.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/network_calibration.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models {
namespace {

double span(const std::vector<int>& units, const std::vector<double>& speed, int fixed) {
  double worst = 0;
  for (std::size_t i = 0; i < units.size(); ++i) worst = std::max(worst, (units[i] + fixed) / speed[i]);
  return worst;
}

// Every split of `total` into parts >= 1, the best min-max span by brute force.
double best_span(const std::vector<double>& speed, int total, int fixed) {
  double best = 1e300;
  std::vector<int> units(speed.size(), 1);
  std::function<void(std::size_t, int)> fill = [&](std::size_t i, int left) {
    if (i + 1 == units.size()) {
      units[i] = left;
      best = std::min(best, span(units, speed, fixed));
      return;
    }
    for (int u = 1; u <= left - static_cast<int>(units.size() - i - 1); ++u) {
      units[i] = u;
      fill(i + 1, left - u);
    }
  };
  fill(0, total);
  return best;
}

TEST(Rebalance, GreedySplitIsOptimalAndKeepsTheGlobalBatch) {
  const std::vector<std::vector<double>> cases = {{1, 1, 1, 0.5}, {1, 0.8, 1}, {0.3, 1, 0.6, 1}, {1, 1}};
  for (const auto& speed : cases)
    for (int pp : {1, 4})
      for (int total = static_cast<int>(speed.size()); total <= 24; ++total) {
        const std::vector<int> m = balance_microbatches(speed, total, pp);
        EXPECT_EQ(std::accumulate(m.begin(), m.end(), 0), total);
        EXPECT_GE(*std::min_element(m.begin(), m.end()), 1);
        EXPECT_DOUBLE_EQ(span(m, speed, pp - 1), best_span(speed, total, pp - 1)) << "total " << total;
      }
  // Healthy replicas split evenly; a half-speed one takes about half a share.
  EXPECT_EQ(balance_microbatches({1, 1, 1, 1}, 32, 1), (std::vector<int>{8, 8, 8, 8}));
  // 32 over three healthy and one half-speed replica: 4 or 5 on the slow one
  // (8 or 10 slots), the rest 28 or 27 over three: 10 slots either way.
  const std::vector<int> m = balance_microbatches({1, 1, 1, 0.5}, 32, 1);
  EXPECT_TRUE(m[3] == 4 || m[3] == 5) << m[3];
  EXPECT_DOUBLE_EQ(span(m, {1, 1, 1, 0.5}, 0), 10);
  // Layers: a stage at 60% speed keeps about 60% of a share (8 each when even).
  const std::vector<int> layers = balance_layers({1, 0.6, 1, 1}, 32);
  EXPECT_EQ(std::accumulate(layers.begin(), layers.end(), 0), 32);
  EXPECT_EQ(layers[1], 5);  // 5 / 0.6 = 8.3 slots against 9 on the others
  EXPECT_THROW(balance_microbatches({1, 1, 1}, 2, 1), std::invalid_argument);
}

sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 2;
  s.leaves = 8;
  s.hosts = 8;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

// 8 replicas of one host each (tp 8), pipeline of `pp` stages when pp > 1.
JobSpec job(int pp) {
  JobSpec j;
  j.gpus = 64;
  j.parallelism = {8, pp, 8 / pp, 1};
  j.compute_per_iteration = 2 * sim::kSecond;
  j.gradient_bytes = 200'000'000;
  j.activation_bytes = pp > 1 ? 10'000'000 : 0;
  j.microbatches = 8;
  j.checkpoint_interval = 0;
  return j;
}

// The speeds telemetry shows of the job so far (drains its bus).
std::vector<double> measured_speeds(const TrainingJob& training, sim::TelemetryBus& bus, sim::Nanos now,
                                    bool per_replica) {
  JobMeasurements measured(training.spec());
  measured.observe(bus.drain(now));
  return per_replica ? measured.measured_replica_speeds(training.placement())
                     : measured.measured_stage_speeds(training.placement());
}

// Durations of the iteration before the throttle, with it, and after the
// split `make_split` (given the replicas' or stages' measured speeds) took effect.
std::vector<sim::Nanos> durations(int pp, bool per_replica,
                                  std::function<WorkSplit(const std::vector<double>&)> make_split) {
  const std::string out = sim::run_isolated([=] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    TrainingJob training(job(pp), topology, engine, bus);
    training.set_fast_forward(false);
    engine.schedule_at(30 * sim::kSecond, [&] { training.set_gpu_speed(3, 2, 0.5); });
    engine.schedule_at(60 * sim::kSecond, [&] {
      training.apply_work_split(make_split(measured_speeds(training, bus, engine.now(), per_replica)), sim::kSecond);
    });
    training.start(0, 120 * sim::kSecond);
    engine.run_until(120 * sim::kSecond);
    std::ostringstream o;
    sim::Nanos before = 0, slow = 0;
    for (const IterationSpan& s : training.timeline()) {
      if (s.start + s.duration <= 30 * sim::kSecond)
        before = s.duration;
      else if (s.start >= 30 * sim::kSecond && s.start + s.duration <= 60 * sim::kSecond)
        slow = s.duration;
    }
    o << before << " " << slow << " " << training.timeline().back().duration;
    return o.str();
  });
  std::istringstream in(out);
  std::vector<sim::Nanos> d(3);
  in >> d[0] >> d[1] >> d[2];
  return d;
}

// A job's iteration spans, one per line, then how many iterations it
// simulated: what fast-forward must reproduce exactly.
std::string timeline_text(const TrainingJob& training) {
  std::ostringstream o;
  for (const IterationSpan& s : training.timeline())
    o << s.first << " " << s.count << " " << s.start << " " << s.duration << "\n";
  o << "simulated " << training.simulated_iterations();
  return o.str();
}

// The whole timeline, with or without steady-state fast-forward: a throttle
// at 30 s (announced as a change), a rebalance at 61.5 s and the even split
// back at 150 s.
std::string timeline(bool fast_forward) {
  return sim::run_isolated([=] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    TrainingJob training(job(2), topology, engine, bus);
    training.set_fast_forward(fast_forward);
    const sim::Nanos horizon = 240 * sim::kSecond;
    training.set_change_horizon(
        [&engine, horizon] { return engine.now() < 30 * sim::kSecond ? 30 * sim::kSecond : horizon; });
    engine.schedule_at(30 * sim::kSecond, [&] { training.set_gpu_speed(3, 2, 0.5); });
    engine.schedule_at(61 * sim::kSecond + sim::kSecond / 2, [&] {
      WorkSplit s;
      s.microbatches = balance_microbatches(measured_speeds(training, bus, engine.now(), true), 32, 2);
      training.apply_work_split(s, 2 * sim::kSecond);
    });
    engine.schedule_at(150 * sim::kSecond, [&] { training.apply_work_split({}, 2 * sim::kSecond); });
    training.start(0, horizon);
    engine.run_until(horizon);
    return timeline_text(training);
  });
}

TEST(Rebalance, FastForwardGivesTheSameTimelineUnderASplit) {
  const std::string simulated = timeline(false), forwarded = timeline(true);
  const auto spans = [](const std::string& t) { return t.substr(0, t.rfind("simulated")); };
  EXPECT_EQ(spans(forwarded), spans(simulated));
  EXPECT_GT(std::count(simulated.begin(), simulated.end(), '\n'), 3);  // healthy, slow, balanced, even again
  // ... and fast-forward did skip iterations.
  const auto count = [](const std::string& t) { return std::stoi(t.substr(t.rfind(' ') + 1)); };
  EXPECT_LT(count(forwarded), count(simulated) / 2);
}

TEST(Rebalance, FewerMicrobatchesOnTheSlowReplicaCutTheIterationToTheBalancedTime) {
  const auto d = durations(1, true, [](const std::vector<double>& replica_speeds) {
    WorkSplit s;
    s.microbatches = balance_microbatches(replica_speeds, 64, 1);
    return s;
  });
  const double compute = 2.0, comm = sim::to_seconds(d[0]) - compute;  // healthy = compute + allreduce
  EXPECT_GT(comm, 0);
  // The half-speed GPU doubles everyone's compute phase.
  EXPECT_NEAR(sim::to_seconds(d[1]), compute / 0.5 + comm, 1e-6);
  // Balanced: the slow replica gets 4 micro-batches (8 slots at half speed),
  // the seven others 60 between them (9 at most): the phase takes 9 of 8 slots.
  EXPECT_EQ(balance_microbatches({1, 1, 1, 0.5, 1, 1, 1, 1}, 64, 1)[3], 4);
  EXPECT_NEAR(sim::to_seconds(d[2]), compute * 9 / 8 + comm, 1e-6);
  // ... close to the bound total work / sum of speeds (64 / 7.5 slots).
  EXPECT_GT(sim::to_seconds(d[2]), compute * (64 / 7.5) / 8 + comm);
}

TEST(Rebalance, FewerLayersOnTheSlowStageShortenItsSlot) {
  const auto d = durations(2, false, [](const std::vector<double>& stage_speeds) {
    WorkSplit s;
    s.layers_per_stage = 8;
    s.stage_layers = balance_layers(stage_speeds, 16);
    return s;
  });
  // pp 2, 8 micro-batches: 9 slots of 2 s / 9. A half-speed GPU on a stage
  // doubles that stage's slot; with 16 layers the slow stage keeps 5 and the
  // other 11: slots of 5/8 / 0.5 and 11/8 of the nominal: 11/8 paces it.
  const double slot = 2.0 / 9;
  EXPECT_NEAR(sim::to_seconds(d[1]) - sim::to_seconds(d[0]), 9 * slot * (1 / 0.5 - 1), 1e-3);
  EXPECT_NEAR(sim::to_seconds(d[2]) - sim::to_seconds(d[0]), 9 * slot * (11.0 / 8 - 1), 1e-3);
}

// --- Network levers ---

// Two pods of four hosts: every rail's DP ring crosses between the pods
// twice, through the spines.
sim::ClusterShape two_pods() {
  sim::ClusterShape s;
  s.spines = 4;
  s.leaves = 16;
  s.hosts = 8;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

JobSpec ring_heavy_job() {
  JobSpec j = job(1);
  j.gradient_bytes = 16'000'000'000;  // the allreduce is a fifth of the iteration
  return j;
}

struct LeverDurations {
  double healthy = 0, faulty = 0, after = 0;
  double resumed = 0;  // start of the first iteration after the lever
};

// Iteration times before a fault at 30 s (`fault` may do nothing), with it,
// and after `lever` acts at 60 s with a 20 s communicator rebuild.
LeverDurations lever_durations(const std::function<void(sim::FlowEngine&)>& fault,
                               const std::function<void(TrainingJob&, sim::FlowEngine&)>& lever) {
  const std::string out = sim::run_isolated([=] {
    sim::Topology topology(two_pods());
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    TrainingJob training(ring_heavy_job(), topology, engine, bus);
    training.set_fast_forward(false);
    engine.schedule_at(30 * sim::kSecond, [&] { fault(engine); });
    engine.schedule_at(60 * sim::kSecond, [&] { lever(training, engine); });
    training.start(0, 180 * sim::kSecond);
    engine.run_until(180 * sim::kSecond);
    std::ostringstream o;
    sim::Nanos healthy = 0, faulty = 0, resumed = -1;
    for (const IterationSpan& s : training.timeline())
      for (std::uint64_t k = 0; k < s.count; ++k) {
        const sim::Nanos start = s.start + static_cast<sim::Nanos>(k) * s.duration;
        if (start + s.duration <= 30 * sim::kSecond)
          healthy = s.duration;
        else if (start >= 30 * sim::kSecond && start + s.duration <= 60 * sim::kSecond)
          faulty = s.duration;
        else if (start >= 60 * sim::kSecond && resumed < 0)
          resumed = start;
      }
    o << healthy << " " << faulty << " " << training.timeline().back().duration << " " << resumed;
    return o.str();
  });
  std::istringstream in(out);
  sim::Nanos v[4];
  in >> v[0] >> v[1] >> v[2] >> v[3];
  return {sim::to_seconds(v[0]), sim::to_seconds(v[1]), sim::to_seconds(v[2]), sim::to_seconds(v[3])};
}

// The fabric link the rail-3 ring's edge h3 -> h4 goes up on.
sim::LinkId crossing_uplink(const sim::NetworkEngine& engine) {
  const sim::Topology& t = engine.topology();
  for (sim::LinkId l : engine.route(t.endpoint(3, 3), t.endpoint(4, 3)))
    if (t.is_fabric_link(l)) return l;
  return -1;
}

TEST(NetworkLevers, DrainingALossyFabricLinkBringsTheRingBackToHealthySpeed) {
  const LeverDurations d = lever_durations(
      [](sim::FlowEngine& engine) {
        const sim::LinkId link = crossing_uplink(engine);
        // 1% loss under go-back-N on a 400 Gb/s cross-spine path, as the packet engine measured it.
        const double goodput = sim::shipped_network_calibration()
                                   .loss_response(0.01, bdp_packets(engine.topology().link_bytes_per_second(link),
                                                                    8 * sim::kMicrosecond, {}))
                                   .goodput;
        engine.set_link_state(link, {goodput, 0, true});
      },
      [](TrainingJob& job, sim::FlowEngine& engine) {
        job.drain_fabric_link(crossing_uplink(engine), 20 * sim::kSecond);
      });
  const double comm = d.healthy - 2.0;  // compute is 2 s
  // 2 x 7/8 x 16 GB over 50 GB/s host links, plus the ring's latency.
  EXPECT_NEAR(comm, 0.56, 0.01);
  EXPECT_GT(d.faulty, d.healthy + comm);  // the lossy edge paces the ring at under half its rate
  EXPECT_NEAR(d.after, d.healthy, 0.02 * d.healthy);
  EXPECT_GE(d.resumed, 80.0);  // the rebuild's pause
}

// The whole timeline through a lossy link at 30 s, its drain at 61.5 s and
// an RNIC move at 120.5 s, with or without steady-state fast-forward.
std::string timeline_through_levers(bool fast_forward) {
  return sim::run_isolated([=] {
    sim::Topology topology(two_pods());
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    TrainingJob training(ring_heavy_job(), topology, engine, bus);
    training.set_fast_forward(fast_forward);
    const sim::Nanos horizon = 240 * sim::kSecond;
    training.set_change_horizon(
        [&engine, horizon] { return engine.now() < 30 * sim::kSecond ? 30 * sim::kSecond : horizon; });
    const sim::LinkId link = crossing_uplink(engine);
    engine.schedule_at(30 * sim::kSecond, [&] { engine.set_link_state(link, {0.3, 0, true}); });
    engine.schedule_at(61 * sim::kSecond + sim::kSecond / 2,
                       [&] { training.drain_fabric_link(link, 5 * sim::kSecond); });
    engine.schedule_at(120 * sim::kSecond + sim::kSecond / 2,
                       [&] { training.move_nic_traffic(3, 3, 0, 5 * sim::kSecond); });
    training.start(0, horizon);
    engine.run_until(horizon);
    return timeline_text(training);
  });
}

TEST(NetworkLevers, FastForwardGivesTheSameTimelineThroughADrainAndAMove) {
  const std::string simulated = timeline_through_levers(false), forwarded = timeline_through_levers(true);
  const auto spans = [](const std::string& t) { return t.substr(0, t.rfind("simulated")); };
  EXPECT_EQ(spans(forwarded), spans(simulated));
  EXPECT_GE(std::count(simulated.begin(), simulated.end(), '\n'), 4);  // healthy, lossy, drained, moved
  const auto count = [](const std::string& t) { return std::stoi(t.substr(t.rfind(' ') + 1)); };
  EXPECT_LT(count(forwarded), count(simulated) / 2);
}

TEST(NetworkLevers, MovingAnRnicsGpusOntoAnotherDoublesThatRnicsRingLoad) {
  const LeverDurations d =
      lever_durations([](sim::FlowEngine&) {},
                      [](TrainingJob& job, sim::FlowEngine&) { job.move_nic_traffic(3, 3, 0, 20 * sim::kSecond); });
  const double comm = d.healthy - 2.0;
  EXPECT_NEAR(d.faulty, d.healthy, 1e-9);  // no fault here
  // h3.nic0 now carries its own rail-0 ring edges and the moved rail-3 ones:
  // each at half the link rate, so the allreduce takes twice as long.
  EXPECT_NEAR(d.after, d.healthy + comm, 0.02 * d.healthy);
  EXPECT_GE(d.resumed, 80.0);
}

}  // namespace
}  // namespace gauntlet::models
