// Overlay probes through the containers' virtual functions and vSwitch
// rules: who can be probed on the overlay follows the containers' lifetimes.
#include <gtest/gtest.h>

#include <sstream>

#include "models/container.hpp"
#include "models/job_test_support.hpp"
#include "models/probe_service.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models {
namespace {

// Two pods of 8 hosts; the job fills pod 0, h8 is a spare on rail leaves of pod 1.
sim::ClusterShape cluster() { return testing::rail_pods(2, 8); }

JobSpec job() {
  JobSpec j;
  j.name = "llm";
  j.gpus = 64;
  j.parallelism = {8, 2, 4, 1};
  return j;
}

template <typename Body>
std::string isolated(Body body) {
  return sim::run_isolated([body] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 7);
    sim::TelemetryBus bus;
    ProbeService probes(engine, bus, 7);
    ContainerSet containers("llm", topology, nullptr);
    probes.set_overlay(&containers);
    std::ostringstream out;
    body(topology, engine, bus, probes, containers, out);
    return out.str();
  });
}

// Outcome as "lost rtt path-length last-component".
std::string show(const ProbeOutcome& o) {
  return std::to_string(o.lost) + " " + std::to_string(o.rtt) + " " + std::to_string(o.path.size()) + " " +
         (o.path.empty() ? "-" : o.path.back());
}

const std::set<int> kNone;
const std::set<std::pair<int, int>> kNoGpus;

TEST(ProbeOverlay, ReachesLiveContainersOnlyWhileTheUnderlayReachesEveryRnic) {
  const std::string out = isolated([](const sim::Topology& t, sim::FlowEngine&, sim::TelemetryBus&,
                                      ProbeService& probes, ContainerSet& containers, std::ostringstream& os) {
    containers.start_all(0, Placement(job(), t));
    sim::Rng rng(1);
    const int h0 = t.endpoint(0, 3), h1 = t.endpoint(1, 3), spare = t.endpoint(8, 3);
    os << show(probes.evaluate({h0, h1, true}, rng)) << '|' << show(probes.evaluate({h0, spare, true}, rng)) << '|'
       << show(probes.evaluate({h0, spare, false}, rng));
  });
  std::istringstream in(out);
  std::string peer, to_spare, underlay;
  std::getline(in, peer, '|');
  std::getline(in, to_spare, '|');
  std::getline(in, underlay, '|');
  // Same rail, same pod: two hops each way, plus processing and the two
  // containers' vSwitches; h1 is a ring neighbour of h0.
  const ProbeCost cost;
  EXPECT_EQ(peer,
            "0 " + std::to_string(4 * sim::kMicrosecond + cost.processing + cost.overlay_processing) + " 4 h1.nic3.ft");
  EXPECT_EQ(to_spare, "1 0 1 h0.nic3.ft");  // no container holds an address on h8: dropped at the source vSwitch
  EXPECT_EQ(underlay, "0 " + std::to_string(8 * sim::kMicrosecond + cost.processing) + " 4 h8.nic3~leaf11");
}

TEST(ProbeOverlay, NothingLeavesAStoppedContainerAndTheMovedOneIsReachedOnItsSpare) {
  const std::string out = isolated([](const sim::Topology& t, sim::FlowEngine& engine, sim::TelemetryBus& bus,
                                      ProbeService& probes, ContainerSet& containers, std::ostringstream& os) {
    containers.start_all(0, Placement(job(), t));
    const std::set<std::pair<int, int>> failed = {{3, 2}};
    engine.schedule_at(sim::kSecond, [&] {
      containers.stop_all(sim::kSecond, StopReason::restart, {kNone, failed, kNone});
    });
    engine.schedule_at(10 * sim::kSecond, [&] {
      containers.start_all(10 * sim::kSecond, Placement(job(), t, {0, 1, 2, 8, 4, 5, 6, 7}));
    });
    // Restart window: the overlay probe from h0 is not sent, the underlay one is.
    engine.schedule_at(5 * sim::kSecond, [&] {
      probes.submit("d", {{t.endpoint(0, 0), t.endpoint(1, 0), true}, {t.endpoint(0, 1), t.endpoint(1, 1), false}});
    });
    // After the restart, h3's slot answers on h8; h3 itself is gone from the overlay.
    engine.schedule_at(20 * sim::kSecond, [&] {
      probes.submit("d", {{t.endpoint(0, 2), t.endpoint(8, 2), true}, {t.endpoint(0, 4), t.endpoint(3, 4), true}});
    });
    engine.run_until(30 * sim::kSecond);
    const telemetry::Batch batch = bus.drain(30 * sim::kSecond);
    for (const auto& r : batch.records())
      os << r.probe().src() << '>' << r.probe().dst() << (r.probe().overlay() ? "o" : "u") << r.probe().lost() << ' ';
  });
  EXPECT_EQ(out, "h0.nic1>h1.nic1u0 h0.nic2>h8.nic2o0 h0.nic4>h3.nic4o1 ");
}

TEST(ProbeOverlay, AStaleFlowTableOnTheSparesRnicSlowsTheOverlayToIt) {
  const std::string out = isolated([](const sim::Topology& t, sim::FlowEngine& engine, sim::TelemetryBus&,
                                      ProbeService& probes, ContainerSet& containers, std::ostringstream& os) {
    containers.start_all(0, Placement(job(), t, {0, 1, 2, 8, 4, 5, 6, 7}));
    sim::Rng rng(1);
    const int a = t.endpoint(0, 3), b = t.endpoint(8, 3);
    const sim::Nanos before = probes.evaluate({a, b, true}, rng).rtt;
    engine.set_endpoint_state(b, {1.0, 104 * sim::kMicrosecond, true});  // what stale_flow_table applies
    os << before << ' ' << probes.evaluate({a, b, true}, rng).rtt << ' ' << probes.evaluate({a, b, false}, rng).rtt;
  });
  std::istringstream in(out);
  long long before = 0, stale = 0, underlay = 0;
  in >> before >> stale >> underlay;
  EXPECT_EQ(before, 16 * sim::kMicrosecond);  // the seed's healthy overlay RTT across a spine
  EXPECT_EQ(stale, 120 * sim::kMicrosecond);  // and its stale one
  EXPECT_EQ(underlay, 14 * sim::kMicrosecond);
}

// A directory whose rule for a peer still names the host the peer left.
class StaleDirectory : public OverlayDirectory {
 public:
  StaleDirectory(sim::EndpointId src, sim::EndpointId dst, sim::EndpointId old)
      : src_{src, 0, 0x0a000001}, dst_{dst, 0, 0x0a000101}, old_(old) {}
  const VirtualFunction* attached_vf(sim::EndpointId rnic) const override {
    return rnic == src_.rnic ? &src_ : rnic == dst_.rnic ? &dst_ : nullptr;
  }
  std::optional<sim::EndpointId> rule(sim::EndpointId rnic, std::uint32_t address) const override {
    if (rnic == src_.rnic && address == dst_.overlay_address) return old_;
    return std::nullopt;
  }

 private:
  VirtualFunction src_, dst_;
  sim::EndpointId old_;
};

TEST(ProbeOverlay, ARuleLeftPointingAtThePeersOldHostLosesTheProbe) {
  const std::string out = sim::run_isolated([] {
    sim::Topology t(cluster());
    sim::FlowEngine engine(t, 7);
    sim::TelemetryBus bus;
    ProbeService probes(engine, bus, 7);
    const StaleDirectory stale(t.endpoint(0, 0), t.endpoint(8, 0), t.endpoint(3, 0));
    probes.set_overlay(&stale);
    sim::Rng rng(1);
    return show(probes.evaluate({t.endpoint(0, 0), t.endpoint(8, 0), true}, rng)) + "|" +
           show(probes.evaluate({t.endpoint(8, 0), t.endpoint(0, 0), true}, rng));
  });
  // Forward: the stale rule sends it to h3; backward: h8 has no rule for
  // h0 yet and resolves it.
  EXPECT_EQ(out, "1 0 1 h0.nic0.ft|0 16000 6 h0.nic0.ft");
}

}  // namespace
}  // namespace gauntlet::models
