#include "models/telemetry/fabric_counters.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models {
namespace {

constexpr double kLineRate = 50e9;  // 400 Gb/s in bytes/s

sim::ClusterShape shape(int hosts = 4, int spines = 2) {
  sim::ClusterShape s;
  s.spines = spines;
  s.leaves = 4;
  s.hosts = hosts;
  s.gpus_per_host = 2;
  s.rnics_per_host = 2;
  s.rail_optimized = true;
  return s;
}

struct Totals {
  double ecn = 0, queue = 0, cnp = 0, tx = 0, rx = 0;
  int overloaded_ports = 0;
};

Totals totals(const FabricWindow& w) {
  Totals t;
  for (const auto& [d, p] : w.ports) {
    t.ecn += p.ecn_marked;
    t.queue += p.queue_bytes;
    if (p.overloaded_seconds > 0) ++t.overloaded_ports;
  }
  for (const auto& [e, n] : w.nics) t.cnp += n.cnp, t.tx += n.tx_bytes, t.rx += n.rx_bytes;
  return t;
}

std::string show(const Totals& t) {
  std::ostringstream o;
  o.precision(17);
  o << t.ecn << " " << t.queue << " " << t.cnp << " " << t.tx << " " << t.rx << " " << t.overloaded_ports;
  return o.str();
}

Totals parse(const std::string& text) {
  std::istringstream in(text);
  Totals t;
  in >> t.ecn >> t.queue >> t.cnp >> t.tx >> t.rx >> t.overloaded_ports;
  return t;
}

// Runs `setup` on a fresh engine, then measures [0, 1 s).
Totals run_window(const std::function<void(sim::FlowEngine&, TelemetryEffects&)>& setup, int hosts = 4) {
  return parse(sim::run_isolated([&] {
    sim::Topology topology(shape(hosts));
    sim::FlowEngine engine(topology, 7);
    TrafficLedger ledger(engine);
    TelemetryEffects effects;
    setup(engine, effects);
    engine.run_until(sim::kSecond);
    ledger.snapshot(sim::kSecond);
    return show(totals(measure_fabric(ledger.segments(0, sim::kSecond), topology, effects, 0, sim::kSecond)));
  }));
}

TEST(FabricCounters, IdleFabricCountsNothing) {
  const Totals t = run_window([](sim::FlowEngine&, TelemetryEffects&) {});
  EXPECT_EQ(t.tx, 0);
  EXPECT_EQ(t.ecn, 0);
  EXPECT_EQ(t.cnp, 0);
}

TEST(FabricCounters, LoneFlowAtLineRateIsNotCongestion) {
  const Totals t = run_window([](sim::FlowEngine& engine, TelemetryEffects&) {
    const auto& topo = engine.topology();
    engine.start_transfer(topo.endpoint(0, 0), topo.endpoint(2, 0), 100e9, nullptr);  // cross-spine
  });
  EXPECT_NEAR(t.tx, kLineRate, kLineRate * 1e-6);  // a full second at line rate
  EXPECT_NEAR(t.rx, kLineRate, kLineRate * 1e-6);
  EXPECT_EQ(t.overloaded_ports, 0);
  EXPECT_EQ(t.ecn, 0);
  EXPECT_EQ(t.queue, 0);
  EXPECT_EQ(t.cnp, 0);
}

// What the packet engine measured at this offered load, for the default
// ECN setting (the table FabricCounterParams reads by default).
sim::LoadResponse measured_at(double offered_load) {
  return sim::NetworkCalibration::load_response(*FabricCounterParams{}.ecn, offered_load);
}

TEST(FabricCounters, IncastQueuesAndMarksAsThePacketEngineMeasuredAndSendersSeeCnps) {
  // Two senders at line rate into one RNIC: the leaf's port toward it is
  // offered 2C for the whole second.
  const Totals t = run_window([](sim::FlowEngine& engine, TelemetryEffects&) {
    const auto& topo = engine.topology();
    engine.start_transfer(topo.endpoint(0, 0), topo.endpoint(1, 0), 100e9, nullptr);
    engine.start_transfer(topo.endpoint(2, 0), topo.endpoint(1, 0), 100e9, nullptr);
  });
  const sim::LoadResponse packets = measured_at(2.0);
  EXPECT_EQ(t.overloaded_ports, 1);
  EXPECT_NEAR(t.ecn, packets.ecn_marked_per_packet * kLineRate / 4096, 1.0);
  EXPECT_NEAR(t.queue, sim::to_seconds(packets.queueing_delay) * kLineRate, 1.0);
  // DCQCN holds the queue in the marking band's foot: above nothing, below Kmax.
  EXPECT_GT(t.queue, 0);
  EXPECT_LT(t.queue, calibration::kEcnKmax.default_value);
  // Each sender crosses the overloaded port all second.
  EXPECT_NEAR(t.cnp, 2 * packets.cnp_per_second, 1.0);
  EXPECT_GT(t.cnp, 0);
  EXPECT_NEAR(t.rx, kLineRate, kLineRate * 1e-6);
}

TEST(FabricCounters, BackgroundLoadOfCongestionFaultRaisesMarks) {
  auto flow = [](sim::FlowEngine& engine, TelemetryEffects& effects, double load) {
    const auto& topo = engine.topology();
    const sim::EndpointId a = topo.endpoint(0, 0), b = topo.endpoint(2, 0);
    const std::vector<sim::LinkId> route = engine.route(a, b);
    if (load > 0) {
      effects.add_background_load(route[1], 0, sim::kHour, load);
      engine.set_link_state(route[1], {1.0 - load, 0, true});  // what the fault scheduler does
    }
    engine.start_transfer(a, b, 100e9, nullptr);
  };
  const Totals quiet = run_window([&](sim::FlowEngine& e, TelemetryEffects& f) { flow(e, f, 0.0); });
  const Totals loaded = run_window([&](sim::FlowEngine& e, TelemetryEffects& f) { flow(e, f, 0.5); });
  EXPECT_EQ(quiet.ecn, 0);
  EXPECT_EQ(quiet.queue, 0);
  EXPECT_EQ(loaded.overloaded_ports, 1);  // the leaf-to-spine direction only
  // Offered = C (flow) + C/2 (background).
  EXPECT_NEAR(loaded.ecn, measured_at(1.5).ecn_marked_per_packet * kLineRate / 4096, 1.0);
  EXPECT_GT(loaded.queue, 0);
  EXPECT_NEAR(loaded.tx, kLineRate / 2, kLineRate * 1e-6);  // the flow got the other half
  EXPECT_GT(loaded.cnp, 0);
}

TEST(FabricCounters, LossyLinkCountsCrcErrorsAndGoBackNCountsAtTheEnds) {
  std::string out = sim::run_isolated([] {
    sim::Topology topology(shape());
    sim::FlowEngine engine(topology, 7);
    TrafficLedger ledger(engine);
    TelemetryEffects effects;
    const sim::EndpointId a = topology.endpoint(0, 0), b = topology.endpoint(2, 0);
    const sim::LinkId lossy = engine.route(a, b)[1];
    effects.add_link_loss(lossy, 0, sim::kHour, 0.01);
    engine.start_transfer(a, b, 100e9, nullptr);
    engine.run_until(sim::kSecond);
    ledger.snapshot(sim::kSecond);
    const FabricWindow w = measure_fabric(ledger.segments(0, sim::kSecond), topology, effects, 0, sim::kSecond);
    std::ostringstream o;
    o.precision(17);
    o << w.ports.at(directed_link(lossy, true)).crc_errors << " " << w.ports.at(directed_link(lossy, true)).tx_bytes
      << " " << w.nics.at(a).retransmitted << " " << w.nics.at(a).naks_received << " " << w.nics.at(b).naks_sent << " "
      << w.nics.at(a).tx_bytes;
    return o.str();
  });
  std::istringstream in(out);
  double crc, port_bytes, retransmitted, naks_received, naks_sent, sent;
  in >> crc >> port_bytes >> retransmitted >> naks_received >> naks_sent >> sent;
  EXPECT_NEAR(crc, 0.01 * port_bytes / 4096, 1e-6 * crc);  // 1% of the frames crossing
  const double packets = sent / 4096;
  // One NAK per lost packet or so, and go-back-N resends a window's worth per loss.
  EXPECT_GT(naks_sent, 0.5 * 0.01 * packets);
  EXPECT_LT(naks_sent, 2.0 * 0.01 * packets);
  EXPECT_EQ(naks_received, naks_sent);
  EXPECT_GT(retransmitted, 10 * naks_sent);
}

TEST(FabricCounters, AllHostsCrossSpineMarkOnlyPortsOfferedMoreThanCapacity) {
  // 16 hosts with 2 RNICs each send to the host 8 positions on (the other
  // pod), all at once over 8 spines: ECMP puts several connections on some
  // fabric links and none on others.
  std::string out = sim::run_isolated([] {
    sim::Topology topology(shape(16, 8));
    sim::FlowEngine engine(topology, 11);
    TrafficLedger ledger(engine);
    TelemetryEffects effects;
    std::map<int, double> offered;
    for (int h = 0; h < 16; ++h)
      for (int k = 0; k < 2; ++k) {
        const sim::EndpointId a = topology.endpoint(h, k), b = topology.endpoint((h + 8) % 16, k);
        engine.start_transfer(a, b, 100e9, nullptr);
      }
    engine.run_until(sim::kMillisecond);
    ledger.snapshot(sim::kMillisecond);
    const auto segments = ledger.segments(0, sim::kMillisecond);
    for (const auto& s : segments)
      for (int d : s.flow->directions) offered[d] += s.flow->demand;
    const FabricWindow w = measure_fabric(segments, topology, effects, 0, sim::kMillisecond);
    std::ostringstream o;
    int checked = 0, marked = 0;
    for (const auto& [d, port] : w.ports) {
      const double capacity = topology.link_bytes_per_second(link_of_direction(d));
      const bool over = offered[d] > capacity * 1.0001;
      if (over != (port.ecn_marked > 0)) o << "mismatch on " << d << " ";
      ++checked;
      marked += over;
    }
    o << "checked " << checked << " marked " << marked;
    return o.str();
  });
  EXPECT_EQ(out.find("mismatch"), std::string::npos) << out;
  const int marked = std::stoi(out.substr(out.find("marked ") + 7));
  EXPECT_GT(marked, 0) << out;   // hash collisions exist at this size
  EXPECT_LT(marked, 32) << out;  // but not every fabric port collides
}

TEST(FabricCounters, FailedFabricLinkStallsUntilRoutingConvergesThenMoves) {
  std::string out = sim::run_isolated([] {
    sim::Topology topology(shape());
    sim::FlowEngine engine(topology, 7);
    engine.set_convergence_delay(sim::kSecond);
    TrafficLedger ledger(engine);
    const sim::EndpointId a = topology.endpoint(0, 0), b = topology.endpoint(2, 0);
    const sim::LinkId fabric = engine.route(a, b)[1];
    sim::Nanos done = -1;
    engine.start_transfer(a, b, 100e9, [&](sim::Nanos at) { done = at; });
    engine.schedule_at(sim::kSecond / 2, [&] { engine.set_link_state(fabric, {1.0, 0, false}); });
    std::ostringstream o;
    engine.run_until(sim::kSecond + sim::kSecond / 2 - 1);
    o << (engine.route(a, b)[1] == fabric) << " " << engine.transfer_progress(1) << " ";
    engine.run_until(4 * sim::kSecond);
    o << (engine.route(a, b)[1] == fabric) << " " << done;
    return o.str();
  });
  std::istringstream in(out);
  int still_on_failed, on_failed_after;
  double progress_before_convergence;
  sim::Nanos done;
  in >> still_on_failed >> progress_before_convergence >> on_failed_after >> done;
  EXPECT_EQ(still_on_failed, 1);                        // routing has not converged yet
  EXPECT_NEAR(progress_before_convergence, 25e9, 1e6);  // stalled since 0.5 s
  EXPECT_EQ(on_failed_after, 0);                        // moved to the other spine
  // 0.5 s at line rate, 1 s stalled, then the other 75 GB on the other spine.
  EXPECT_NEAR(sim::to_seconds(done), 0.5 + 1.0 + 1.5, 1e-3);
}

}  // namespace
}  // namespace gauntlet::models
