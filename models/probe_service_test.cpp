#include "models/probe_service.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models {
namespace {

// Two pods of 8 hosts on 8 rail leaves each: h0.nic3 and h8.nic3 sit on
// rail 3 of different pods, so their path crosses a spine (4 hops each way).
sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 2;
  s.leaves = 16;
  s.hosts = 16;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

template <typename Body>
std::string isolated(Body body) {
  return sim::run_isolated([body] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 7);
    sim::TelemetryBus bus;
    ProbeService probes(engine, bus, 7);
    std::ostringstream out;
    body(topology, engine, bus, probes, out);
    return out.str();
  });
}

TEST(ProbeService, IdleRttIsTwiceThePathLatencyPlusProcessing) {
  std::string out = isolated([](const sim::Topology& t, sim::FlowEngine& engine, sim::TelemetryBus&,
                                ProbeService& probes, std::ostringstream& os) {
    sim::Rng rng(1);
    const int a = t.endpoint(0, 3), b = t.endpoint(8, 3);
    os << engine.route_latency(a, b) << ' ' << probes.evaluate({a, b, false}, rng).rtt << ' '
       << probes.evaluate({a, b, true}, rng).rtt;
  });
  std::istringstream in(out);
  long long one_way = 0, underlay = 0, overlay = 0;
  in >> one_way >> underlay >> overlay;
  const ProbeCost cost;
  EXPECT_EQ(one_way, 4 * sim::kMicrosecond);  // four 1 us hops across a spine
  EXPECT_EQ(underlay, 2 * one_way + cost.processing);
  EXPECT_EQ(overlay, 2 * one_way + cost.processing + cost.overlay_processing);
  EXPECT_EQ(overlay, 16 * sim::kMicrosecond);  // the seed's healthy RTT
}

TEST(ProbeService, StaleFlowTableIsSeenByOverlayProbesOnly) {
  std::string out = isolated([](const sim::Topology& t, sim::FlowEngine& engine, sim::TelemetryBus&,
                                ProbeService& probes, std::ostringstream& os) {
    sim::Rng rng(1);
    const int a = t.endpoint(0, 3), b = t.endpoint(8, 3);
    engine.set_endpoint_state(b, {1.0, 104 * sim::kMicrosecond, true});
    const ProbeOutcome over = probes.evaluate({a, b, true}, rng);
    const ProbeOutcome under = probes.evaluate({a, b, false}, rng);
    os << over.rtt << ' ' << under.rtt << ' ' << over.path.size() << ' ' << over.path.back() << ' '
       << under.path.size();
  });
  std::istringstream in(out);
  long long overlay = 0, underlay = 0;
  std::size_t over_len = 0, under_len = 0;
  std::string last;
  in >> overlay >> underlay >> over_len >> last >> under_len;
  EXPECT_EQ(overlay, 120 * sim::kMicrosecond);  // seed: ~16 us -> ~120 us
  EXPECT_EQ(underlay, 14 * sim::kMicrosecond);  // unchanged
  EXPECT_EQ(last, "h8.nic3.ft");
  EXPECT_EQ(over_len, under_len + 2);
}

TEST(ProbeService, DownLinkLosesProbesAndLossRateMatchesTrainLength) {
  std::string out = isolated([](const sim::Topology& t, sim::FlowEngine& engine, sim::TelemetryBus&,
                                ProbeService& probes, std::ostringstream& os) {
    sim::Rng rng(3);
    const int a = t.endpoint(0, 3), b = t.endpoint(8, 3);
    engine.set_link_state(t.host_link(b), {1.0, 0, false});
    os << probes.evaluate({a, b, false}, rng).lost << ' ';
    engine.set_link_state(t.host_link(b), {});
    probes.add_loss(t.link_name(t.host_link(b)), 0, sim::kHour, 0.01);
    int lost = 0;
    const int n = 4000;
    for (int i = 0; i < n; ++i) lost += probes.evaluate({a, b, false}, rng).lost;
    os << static_cast<double>(lost) / n;
  });
  std::istringstream in(out);
  int down_lost = 0;
  double fraction = 0;
  in >> down_lost >> fraction;
  EXPECT_EQ(down_lost, 1);
  // 20 pings, each crossing the lossy link twice: 1 - 0.99^40 = 0.331.
  EXPECT_NEAR(fraction, 1 - std::pow(0.99, 40), 0.025);
}

TEST(ProbeService, ProbesQueuePerRnicAndResultsArriveWhenTheTrainEnds) {
  std::string out = isolated([](const sim::Topology& t, sim::FlowEngine& engine, sim::TelemetryBus& bus,
                                ProbeService& probes, std::ostringstream& os) {
    const int a = t.endpoint(0, 0);
    probes.add_agent_down(5, 0, sim::kHour);
    probes.submit("d", {{a, t.endpoint(1, 0), true},
                        {a, t.endpoint(2, 0), true},
                        {t.endpoint(3, 0), a, false},
                        {t.endpoint(5, 0), a, false}});
    engine.run_until(sim::kSecond);
    os << bus.drain(sim::kSecond).records_size() << ' ';
    engine.run_until(10 * sim::kSecond);
    const telemetry::Batch batch = bus.drain(10 * sim::kSecond);
    for (const auto& r : batch.records())
      os << r.probe().src() << '>' << r.probe().dst() << '@' << r.probe().sent_ns() << ' ';
    os << probes.probes_sent("d") << ' ' << probes.probe_bytes("d");
  });
  const ProbeCost cost;
  const std::string d = std::to_string(cost.probe_duration());
  // h0.nic0 runs one probe at a time; h3 probes in parallel; h5's agent is down.
  EXPECT_EQ(out, "0 h0.nic0>h1.nic0@0 h3.nic0>h0.nic0@0 h0.nic0>h2.nic0@" + d + " 3 " +
                     std::to_string(3 * cost.probe_bytes()));
}

// One RNIC runs one train at a time, so its probes go out a train's length
// apart: with the horizon at the second one's turn, the third never goes.
TEST(ProbeService, ProbesWhoseTurnComesAfterTheHorizonAreNotSent) {
  std::string out = isolated([](const sim::Topology& t, sim::FlowEngine& engine, sim::TelemetryBus& bus,
                                ProbeService& probes, std::ostringstream& os) {
    const int a = t.endpoint(0, 0), b = t.endpoint(1, 0);
    probes.set_horizon(ProbeCost{}.probe_duration());
    probes.submit("d", {{a, b, false}, {a, b, false}});
    probes.submit("e", {{a, b, false}, {b, a, false}});
    engine.run_until(sim::kHour);
    const telemetry::Batch batch = bus.drain(sim::kHour);
    for (const auto& r : batch.records()) os << r.probe().detector() << '@' << r.probe().sent_ns() << ' ';
    os << probes.probes_sent("d") << ' ' << probes.probes_sent("e") << ' ' << probes.probes_sent("f");
  });
  const std::string d = std::to_string(ProbeCost{}.probe_duration());
  EXPECT_EQ(out, "d@0 e@0 d@" + d + " 2 1 0");
}

TEST(ProbeService, SilentAgentsSendNoHeartbeats) {
  std::string out = isolated([](const sim::Topology&, sim::FlowEngine& engine, sim::TelemetryBus& bus,
                                ProbeService& probes, std::ostringstream& os) {
    probes.add_agent_down(4, 15 * sim::kSecond, sim::kHour);
    probes.start_heartbeats(10 * sim::kSecond, 30 * sim::kSecond);
    engine.run_until(30 * sim::kSecond);
    int h4 = 0, total = 0;
    const telemetry::Batch batch = bus.drain(30 * sim::kSecond);
    for (const auto& r : batch.records()) {
      ++total;
      h4 += r.heartbeat().agent() == "h4.agent";
    }
    os << total << ' ' << h4;
  });
  EXPECT_EQ(out, "62 2");  // 16 agents at 0, 10, 20, 30 s, less h4 at 20 and 30 s
}

// A probe may pick its UDP source port, and with it the spine ECMP hashes
// it to: ports on the spine behind a lossy link see it (and name it in their
// path), ports on the other spine do not. Per-ping counts follow the links'
// loss: each ping and its reply cross a link losing 20%, so 36% of pings are
// lost and a 20-ping train loses 7.2 on average.
TEST(ProbeService, SourcePortChoosesTheSpineAndPingsCountTheLoss) {
  std::string out = isolated([](const sim::Topology& t, sim::FlowEngine& engine, sim::TelemetryBus&,
                                ProbeService& probes, std::ostringstream& os) {
    const int a = t.endpoint(0, 3), b = t.endpoint(8, 3);
    probes.add_loss("leaf3~spine0", 0, sim::kHour, 0.2);
    std::uint16_t via_lossy = 0, via_clean = 0;
    for (std::uint16_t port = 0xC000; (via_lossy == 0 || via_clean == 0) && port < 0xC100; ++port) {
      const auto route = engine.route_from_port(a, b, port);
      (route[1] == t.fabric_link(t.leaf_of(a), 0) ? via_lossy : via_clean) = port;
    }
    sim::Rng rng(3);
    int lost_lossy = 0, lost_clean = 0, pings_lost = 0;
    bool named = false;
    constexpr int kProbes = 500;
    for (int i = 0; i < kProbes; ++i) {
      const ProbeOutcome lossy = probes.evaluate({a, b, false, via_lossy}, rng);
      const ProbeOutcome clean = probes.evaluate({a, b, false, via_clean}, rng);
      lost_lossy += lossy.lost, lost_clean += clean.lost;
      pings_lost += lossy.pings_lost;
      named = named || std::count(lossy.path.begin(), lossy.path.end(), "leaf3~spine0") == 1;
    }
    os << (via_lossy != 0) << ' ' << (via_clean != 0) << ' ' << lost_lossy << ' ' << lost_clean << ' '
       << static_cast<double>(pings_lost) / kProbes << ' ' << named;
  });
  std::istringstream in(out);
  int found_lossy = 0, found_clean = 0, lost_lossy = 0, lost_clean = 0, named = 0;
  double mean_pings_lost = 0;
  in >> found_lossy >> found_clean >> lost_lossy >> lost_clean >> mean_pings_lost >> named;
  ASSERT_TRUE(found_lossy && found_clean);
  EXPECT_EQ(lost_clean, 0);
  EXPECT_EQ(lost_lossy, 500);  // 1 - 0.64^20 of the trains: all but one in 7,500
  EXPECT_TRUE(named);
  // Binomial(20, 0.36) per train: mean 7.2, standard error 2.15 / sqrt(500).
  EXPECT_NEAR(mean_pings_lost, 20 * 0.36, 5 * std::sqrt(20 * 0.36 * 0.64 / 500));
}

}  // namespace
}  // namespace gauntlet::models
