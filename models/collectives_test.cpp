// Collectives against their analytical cost and the fabric's geometry.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <sstream>

#include "models/collectives/pipeline.hpp"
#include "models/job_test_support.hpp"
#include "models/ring_allreduce.hpp"
#include "sim/ecmp.hpp"

namespace gauntlet::models {
namespace {

constexpr double kLineRate = 400e9 / 8;  // bytes/s of a 400 Gb/s link

// One pod: 4 hosts x 8 GPUs x 8 RNICs on 8 rail leaves under one spine.
sim::ClusterShape pod(int hosts = 4) {
  sim::ClusterShape s;
  s.spines = 1;
  s.leaves = 8;
  s.hosts = hosts;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  s.rail_optimized = true;
  s.link_latency = sim::kMicrosecond;
  return s;
}

TEST(RingCollectives, ReduceScatterAndAllgatherCarryHalfTheAllreduceVolume) {
  for (RingOp op : {RingOp::reduce_scatter, RingOp::allgather, RingOp::allreduce}) {
    const double bytes = 2e9;
    const int n = 4;
    const std::string out = sim::run_isolated([&] {
      sim::Topology topology(pod());
      sim::FlowEngine engine(topology, 1);
      std::vector<FlowEnd> ring;
      for (int h = 0; h < n; ++h) ring.push_back({h, topology.endpoint(h, 2)});
      RingResult result;
      start_ring(engine, ring, op, bytes, 2, [&](const RingResult& r) { result = r; });
      engine.run_until(100 * sim::kSecond);
      std::ostringstream o;
      o << result.end - result.start << " " << engine.route_latency(ring[0].endpoint, ring[1].endpoint);
      return o.str();
    });
    std::istringstream in(out);
    double duration, alpha;
    in >> duration >> alpha;
    const double share = op == RingOp::allreduce ? 2.0 : 1.0;
    const double expected = share * (n - 1) / n * bytes / kLineRate * 1e9 + share * (n - 1) * alpha;
    EXPECT_NEAR(duration, expected, 0.005 * expected) << ring_op_name(op);
  }
}

TEST(RingCollectives, ChannelsSplitTheBytesWithoutChangingTheTime) {
  auto iteration = [](int channels) {
    JobSpec job;
    job.gpus = 32;
    job.parallelism = {8, 1, 4, 1};
    job.compute_per_iteration = sim::kSecond;
    job.gradient_bytes = 4'000'000'000;
    job.channels = channels;
    return testing::run_job(pod(), job, 10 * sim::kSecond, true).last_duration();
  };
  const double one = static_cast<double>(iteration(1));
  EXPECT_NEAR(static_cast<double>(iteration(4)), one, 1e-4 * one);
}

// With every RNIC of one pod talking to every same-rail RNIC of the other,
// ECMP's per-connection hash must spread the load over the spines.
TEST(Ecmp, CrossSpineLoadStaysWithinTwiceTheMeanOnEverySpineLink) {
  sim::ClusterShape s;
  s.spines = 8;
  s.leaves = 16;
  s.hosts = 64;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  s.rail_optimized = true;
  const sim::Topology topology(s);
  for (std::uint64_t seed : {1u, 7u, 42u}) {
    const sim::EcmpRouter router(topology, seed);
    std::map<sim::LinkId, int> load;
    for (int a = 0; a < 32; ++a)
      for (int b = 32; b < 64; ++b)
        for (int nic = 0; nic < 8; ++nic)
          for (sim::LinkId link : router.route(topology.endpoint(a, nic), topology.endpoint(b, nic)))
            if (topology.is_fabric_link(link)) ++load[link];
    ASSERT_EQ(load.size(), static_cast<std::size_t>(16 * 8));  // every leaf-spine link carries some
    double total = 0;
    int most = 0;
    for (const auto& [link, n] : load) {
      total += n;
      most = std::max(most, n);
    }
    EXPECT_LE(most, 2.0 * total / static_cast<double>(load.size())) << "seed " << seed;
  }
}

TEST(RailOptimized, RingsCrossSpinesOnlyWhereTheyLeaveThePod) {
  sim::ClusterShape s;
  s.spines = 4;
  s.leaves = 16;  // two pods of 8 hosts
  s.hosts = 16;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  s.rail_optimized = true;
  const sim::Topology topology(s);
  const sim::EcmpRouter router(topology, 3);
  JobSpec job;
  job.gpus = 128;
  job.parallelism = {8, 2, 8, 1};  // stage 0 on pod 0, stage 1 on pod 1
  const Placement p(job, topology);
  int inside = 0, leaving = 0;
  auto check = [&](int a, int b) {
    const sim::EndpointId ea = p.rank(a).endpoint, eb = p.rank(b).endpoint;
    EXPECT_EQ(topology.nic_of(ea), topology.nic_of(eb));  // a ring stays on its rail
    bool spine = false;
    for (sim::LinkId link : router.route(ea, eb)) spine = spine || topology.is_fabric_link(link);
    const bool same_pod = topology.pod_of_host(p.rank(a).host) == topology.pod_of_host(p.rank(b).host);
    EXPECT_EQ(spine, !same_pod);
    (same_pod ? inside : leaving) += 1;
  };
  for (const DpGroup& g : p.dp_groups())
    for (std::size_t i = 0; i < g.ranks.size(); ++i) check(g.ranks[i], g.ranks[(i + 1) % g.ranks.size()]);
  for (const PipelineEdge& e : p.pipeline_edges()) check(e.sender, e.receiver);
  EXPECT_EQ(inside, 16 * 8);  // DP rings stay inside their stage's pod
  EXPECT_EQ(leaving, 8 * 8);  // every pipeline edge goes from pod 0 to pod 1
  for (const DpGroup& g : p.tp_groups())
    for (int r : g.ranks) EXPECT_EQ(p.rank(r).host, p.rank(g.ranks[0]).host);  // TP is NVLink only
}

// Two stages on two hosts, one boundary per rail.
JobSpec two_stages(std::uint64_t activation_bytes) {
  JobSpec job;
  job.gpus = 16;
  job.parallelism = {8, 2, 1, 1};
  job.microbatches = 4;
  job.compute_per_iteration = sim::kSecond;
  job.activation_bytes = activation_bytes;
  return job;
}

TEST(Pipeline, BubbleIsItsShareOfComputeAndShortTransfersOnlyShowInFillAndDrain) {
  const testing::JobReport r = testing::run_job(pod(2), two_stages(10'000'000), 10 * sim::kSecond, true);
  // Each rank is busy m of the m + pp - 1 slots: bubble (pp-1)/(m+pp-1) = 1/5.
  ASSERT_FALSE(r.compute_ns.empty());
  for (sim::Nanos busy : r.compute_ns) EXPECT_EQ(busy, 800 * sim::kMillisecond);
  EXPECT_DOUBLE_EQ(pipeline_bubble(2, 4), 0.2);
  // t = 10 MB / 50 GB/s = 0.2 ms per micro-batch, hidden but for 2 (pp-1) of them.
  const double t = 10e6 / kLineRate * 1e9;
  EXPECT_NEAR(static_cast<double>(r.last_duration()), 1e9 + 2 * t, 0.02 * 2 * t);
}

TEST(Pipeline, SlowTransfersSetThePace) {
  // 25 GB per micro-batch at 50 GB/s: t = 0.5 s > the 0.2 s compute slot.
  const testing::JobReport r = testing::run_job(pod(2), two_stages(25'000'000'000), 30 * sim::kSecond, true);
  const double expected = (4 + 2 - 1) * 0.5e9 + 2 * (2 - 1) * 0.5e9;
  EXPECT_NEAR(static_cast<double>(r.last_duration()), expected, 1e-3 * expected);
}

TEST(TensorParallel, AllreduceRidesNvlinkAt450GBs) {
  JobSpec job;
  job.gpus = 8;
  job.parallelism = {8, 1, 1, 1};
  job.compute_per_iteration = sim::kSecond;
  job.tp_bytes = 9'000'000'000;
  const testing::JobReport r = testing::run_job(pod(1), job, 10 * sim::kSecond, true);
  // 2 (n-1)/n * 9 GB = 15.75 GB over NVLink at 450 GB/s = 35 ms, plus 14 steps.
  const sim::Nanos expected = sim::kSecond + 35 * sim::kMillisecond + 14 * kNvlinkStepLatency;
  EXPECT_EQ(r.last_duration(), expected);
}

TEST(ExpertParallel, AllToAllSendsEachPeerItsShareAtOnce) {
  JobSpec job;
  job.gpus = 32;
  job.parallelism = {8, 1, 4, 4};
  job.compute_per_iteration = sim::kSecond;
  job.alltoall_bytes = 40'000'000'000;
  const testing::JobReport r = testing::run_job(pod(), job, 20 * sim::kSecond, true);
  // Each RNIC sends 3/4 of 40 GB (10 GB to each of 3 peers) at line rate.
  const double expected = 1e9 + 30e9 / kLineRate * 1e9;
  EXPECT_NEAR(static_cast<double>(r.last_duration()), expected, 1e-3 * expected);
}

// Three flows, two sharing h0's uplink and two h1's downlink, of different
// sizes: max-min sharing gives them different completion times. A fourth
// uses link directions none of them uses: a group of its own.
std::vector<Flow> contended_flows(const sim::Topology& t) {
  auto end = [&](int host) { return FlowEnd{host, t.endpoint(host, 0)}; };
  return {{end(0), end(1), 300e6}, {end(0), end(2), 100e6}, {end(3), end(1), 200e6}, {end(2), end(3), 150e6}};
}

// Completion offsets of the flows, or "" if on_all never ran.
std::string run_set(sim::NetworkEngine& engine, const std::vector<Flow>& flows, const FlowReuse& reuse) {
  const sim::Nanos start = engine.now();
  auto ends = std::make_shared<std::vector<sim::Nanos>>(flows.size(), -1);
  auto finished = std::make_shared<sim::Nanos>(-1);
  start_flows(
      engine, flows, 1, [ends](std::size_t i, sim::Nanos at) { (*ends)[i] = at; },
      [finished, &engine] { *finished = engine.now(); }, nullptr, reuse);
  engine.run_until(start + sim::kSecond);
  std::ostringstream o;
  for (sim::Nanos at : *ends) o << at - start << " ";
  o << "| " << *finished - start;
  return o.str();
}

TEST(FlowOutcomeCache, ReplaysExactlyWhatTheSimulationGaveForTheSameNetworkState) {
  const std::string out = sim::run_isolated([] {
    sim::Topology topology(pod());
    sim::FlowEngine engine(topology, 1);
    const std::vector<Flow> flows = contended_flows(topology);
    FlowOutcomeCache cache;
    const FlowReuse reuse{&cache, std::numeric_limits<sim::Nanos>::max()};
    std::ostringstream o;
    o << run_set(engine, flows, reuse) << "\n";  // simulated, recorded
    o << run_set(engine, flows, reuse) << "\n";  // replayed
    const sim::LinkId uplink = topology.host_link(topology.endpoint(0, 0));
    engine.set_link_state(uplink, {0.5, 0, true});
    o << run_set(engine, flows, reuse) << "\n";  // a new state: simulated
    engine.set_link_state(uplink, {});
    o << run_set(engine, flows, reuse) << "\n";  // back to the first state: replayed
    o << run_set(engine, flows, {}) << "\n";     // no cache: simulated again
    o << run_set(engine, flows, {&cache, engine.now() + sim::kMillisecond}) << "\n";  // a change is due: simulated
    o << cache.hits() << " " << cache.misses() << "\n";
    FlowOutcomeCache apart;  // simulated group by group in a forked engine, then replayed
    o << run_set(engine, flows, {&apart, std::numeric_limits<sim::Nanos>::max(), 1}) << "\n";
    o << apart.hits() << " " << apart.misses();
    return o.str();
  });
  std::istringstream in(out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_NE(lines[0].find("| "), std::string::npos);
  EXPECT_EQ(lines[1], lines[0]);
  EXPECT_NE(lines[2], lines[0]);  // the halved uplink slows the two flows crossing it
  EXPECT_EQ(lines[3], lines[0]);
  EXPECT_EQ(lines[4], lines[0]);
  EXPECT_EQ(lines[5], lines[0]);
  EXPECT_EQ(lines[6], "2 2");  // hits: lines 1 and 3; misses: 0 and 2 (5 was found but not quiet)
  EXPECT_EQ(lines[7], lines[0]);
  EXPECT_EQ(lines[8], "1 1");  // not found, then replayed from the apart simulation
}

// An engine with the calls every engine has and none of the optional
// capabilities (replays, simulate_apart): what a second backend may be.
class PlainEngine final : public sim::NetworkEngine {
 public:
  explicit PlainEngine(sim::NetworkEngine& inner) : inner_(inner) {}
  const sim::Topology& topology() const override { return inner_.topology(); }
  sim::Nanos now() const override { return inner_.now(); }
  sim::TimerId schedule_at(sim::Nanos at, TimerCallback callback) override {
    return inner_.schedule_at(at, std::move(callback));
  }
  void cancel(sim::TimerId id) override { inner_.cancel(id); }
  sim::TransferId start_transfer(sim::EndpointId src, sim::EndpointId dst, double bytes,
                                 TransferCallback on_done) override {
    return inner_.start_transfer(src, dst, bytes, std::move(on_done));
  }
  void set_link_state(sim::LinkId link, const sim::PathState& state) override { inner_.set_link_state(link, state); }
  void set_endpoint_state(sim::EndpointId e, const sim::PathState& state) override {
    inner_.set_endpoint_state(e, state);
  }
  const sim::PathState& link_state(sim::LinkId link) const override { return inner_.link_state(link); }
  const sim::PathState& endpoint_state(sim::EndpointId e) const override { return inner_.endpoint_state(e); }
  std::vector<sim::LinkId> route(sim::EndpointId src, sim::EndpointId dst) const override {
    return inner_.route(src, dst);
  }
  sim::Nanos route_latency(sim::EndpointId src, sim::EndpointId dst) const override {
    return inner_.route_latency(src, dst);
  }
  void run_until(sim::Nanos until) override { inner_.run_until(until); }
  std::uint64_t state_version() const override { return inner_.state_version(); }

 private:
  sim::NetworkEngine& inner_;
};

TEST(FlowOutcomeCache, AnEngineWithoutReplaysSimulatesEverySetWithTheSameOutcome) {
  const std::string out = sim::run_isolated([] {
    sim::Topology topology(pod());
    sim::FlowEngine flow_engine(topology, 1);
    PlainEngine engine(flow_engine);
    const std::vector<Flow> flows = contended_flows(topology);
    FlowOutcomeCache cache;
    std::ostringstream o;
    o << run_set(engine, flows, {}) << "\n";  // no cache
    for (std::size_t apart_from : {std::size_t{4096}, std::size_t{1}})
      for (int pass = 0; pass < 2; ++pass)
        o << run_set(engine, flows, {&cache, std::numeric_limits<sim::Nanos>::max(), apart_from}) << "\n";
    o << cache.hits() << " " << cache.misses() << " " << flow_engine.replays()->transfers_started();
    return o.str();
  });
  std::istringstream in(out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 6u);
  for (std::size_t i = 1; i < 5; ++i) EXPECT_EQ(lines[i], lines[0]);
  EXPECT_EQ(lines[5], "0 0 20");  // never looked up; all five runs of four flows reached the network
}

TEST(FlowOutcomeCache, FlowsSharingALinkDirectionAreSimulatedTogether) {
  // Each flow's time alone: its bytes at line rate plus the route latency.
  const std::string out = sim::run_isolated([] {
    sim::Topology topology(pod());
    sim::FlowEngine engine(topology, 1);
    std::ostringstream o;
    for (const Flow& f : contended_flows(topology)) o << run_set(engine, {f}, {}) << "\n";
    o << run_set(engine, contended_flows(topology), {}) << "\n";
    return o.str();
  });
  std::istringstream in(out);
  std::vector<double> alone(4), together(4);
  for (double& a : alone) {
    std::string bar, rest;
    in >> a >> bar >> rest;
  }
  for (double& t : together) in >> t;
  // The fourth flow shares no link direction with the others: unchanged.
  EXPECT_EQ(together[3], alone[3]);
  // The others share: max-min gives f1 half of h0's uplink, so it ends later.
  EXPECT_GT(together[1], 1.9 * alone[1] - 1e6);
}

// A fabric fault that ends puts the network back in its first state: the
// job replays the flow sets it simulated then, and every iteration matches
// a run that simulates every flow.
TEST(FlowOutcomeCache, JobWithAFaultThatEndsMatchesFullSimulation) {
  JobSpec job;
  job.gpus = 32;
  job.parallelism = {8, 2, 2, 1};
  job.microbatches = 4;
  job.compute_per_iteration = 200 * sim::kMillisecond;
  job.gradient_bytes = 1'000'000'000;
  job.activation_bytes = 50'000'000;
  const sim::Nanos horizon = 6 * sim::kSecond;
  auto run = [&](bool fast) {
    return testing::run_job(pod(), job, horizon, fast, [](testing::JobHarness& h) {
      const sim::LinkId link = h.engine.topology().host_link(h.job.rank_endpoint(0));
      const sim::Nanos from = 2 * sim::kSecond, to = 4 * sim::kSecond;
      h.engine.schedule_at(from, [&h, link] { h.engine.set_link_state(link, {0.25, 0, true}); });
      h.engine.schedule_at(to, [&h, link] { h.engine.set_link_state(link, {}); });
      h.job.set_change_horizon([&h, from, to] {
        const sim::Nanos now = h.engine.now();
        return now < from ? from : now < to ? to : std::numeric_limits<sim::Nanos>::max();
      });
      TrainingJob* j = &h.job;
      h.probe = [j] { return std::to_string(j->flow_outcomes().hits()); };
    });
  };
  const testing::JobReport fast = run(true), full = run(false);
  ASSERT_EQ(fast.timeline.size(), full.timeline.size());
  for (std::size_t i = 0; i < fast.timeline.size(); ++i) {
    EXPECT_EQ(fast.timeline[i].first, full.timeline[i].first);
    EXPECT_EQ(fast.timeline[i].count, full.timeline[i].count);
    EXPECT_EQ(fast.timeline[i].start, full.timeline[i].start);
    EXPECT_EQ(fast.timeline[i].duration, full.timeline[i].duration);
  }
  EXPECT_GT(std::stoi(fast.extra), 0);  // after the fault, flow sets were replayed
  EXPECT_EQ(full.extra, "0");
}

}  // namespace
}  // namespace gauntlet::models
