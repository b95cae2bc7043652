#include "sim/flow/flow_engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "sim/isolated_run.hpp"

namespace gauntlet::sim {
namespace {

ClusterShape two_pod_shape() {
  ClusterShape s;
  s.spines = 2;
  s.leaves = 4;
  s.hosts = 4;
  s.gpus_per_host = 2;
  s.rnics_per_host = 2;
  s.rail_optimized = true;  // pods of 2 hosts, 2 rails
  s.host_link_gbps = 400;   // 50 GB/s
  s.fabric_link_gbps = 400;
  s.link_latency = kMicrosecond;
  return s;
}

// Each test's simulation runs in its own process (SimGrid is per-process).
std::string in_child(const std::function<std::string(FlowEngine&)>& body) {
  return run_isolated([&] {
    Topology topology(two_pod_shape());
    FlowEngine engine(topology, 7);
    return body(engine);
  });
}

TEST(FlowEngine, LoneTransferTakesLatencyPlusBytesOverBandwidth) {
  std::string out = in_child([](FlowEngine& engine) {
    Nanos done = -1;
    const Topology& t = engine.topology();
    // Same rail, different pods: host link, two fabric links, host link.
    engine.start_transfer(t.endpoint(0, 0), t.endpoint(2, 0), 50e9, [&](Nanos at) { done = at; });
    engine.run_until(10 * kSecond);
    return std::to_string(done) + " " + std::to_string(engine.route_latency(t.endpoint(0, 0), t.endpoint(2, 0)));
  });
  std::istringstream in(out);
  Nanos done, latency;
  in >> done >> latency;
  EXPECT_EQ(latency, 4 * kMicrosecond);
  EXPECT_NEAR(static_cast<double>(done), static_cast<double>(kSecond + 4 * kMicrosecond), 100.0);
}

TEST(FlowEngine, TransfersIntoOneEndpointShareItsLink) {
  std::string out = in_child([](FlowEngine& engine) {
    const Topology& t = engine.topology();
    Nanos a = -1, b = -1;
    engine.start_transfer(t.endpoint(0, 0), t.endpoint(1, 0), 25e9, [&](Nanos at) { a = at; });
    engine.start_transfer(t.endpoint(2, 0), t.endpoint(1, 0), 25e9, [&](Nanos at) { b = at; });
    engine.run_until(10 * kSecond);
    return std::to_string(a) + " " + std::to_string(b);
  });
  std::istringstream in(out);
  double a, b;
  in >> a >> b;
  EXPECT_NEAR(a / 1e9, 1.0, 1e-4);  // two flows at 25 GB/s each
  EXPECT_NEAR(b / 1e9, 1.0, 1e-4);
}

TEST(FlowEngine, TimersInterleaveWithTransfersAndMayStartThem) {
  std::string out = in_child([](FlowEngine& engine) {
    const Topology& t = engine.topology();
    std::ostringstream log;
    engine.schedule_at(500 * kMillisecond, [&] {
      log << "t" << engine.now() << " ";
      engine.start_transfer(t.endpoint(0, 1), t.endpoint(1, 1), 5e9, [&](Nanos at) {
        log << "d" << at << " ";
        // Chained from a completion: starts at the completion instant.
        engine.start_transfer(t.endpoint(1, 1), t.endpoint(0, 1), 5e9, [&](Nanos at2) { log << "e" << at2; });
      });
    });
    engine.run_until(2 * kSecond);
    return log.str();
  });
  EXPECT_EQ(out.substr(0, out.find(' ')), "t500000000");
  // 5 GB at 50 GB/s = 100 ms, plus 2 us of latency within one leaf.
  EXPECT_NE(out.find("d600002000"), std::string::npos) << out;
  EXPECT_NE(out.find("e700004000"), std::string::npos) << out;
}

TEST(FlowEngine, LinkStateChangesSlowFlowsInFlightAndDownStalls) {
  std::string out = in_child([](FlowEngine& engine) {
    const Topology& t = engine.topology();
    Nanos done = -1;
    const EndpointId src = t.endpoint(0, 0), dst = t.endpoint(1, 0);
    engine.start_transfer(src, dst, 50e9, [&](Nanos at) { done = at; });
    engine.schedule_at(500 * kMillisecond, [&] { engine.set_link_state(t.host_link(dst), {0.5, 0, true}); });
    engine.schedule_at(700 * kMillisecond, [&] { engine.set_link_state(t.host_link(dst), {0.5, 0, false}); });
    engine.schedule_at(1700 * kMillisecond, [&] { engine.set_link_state(t.host_link(dst), {1.0, 0, true}); });
    engine.run_until(10 * kSecond);
    return std::to_string(done);
  });
  // 25 GB by 0.5 s, 5 GB more by 0.7 s, stalled 1 s, then 20 GB at 50 GB/s.
  EXPECT_NEAR(std::stod(out) / 1e9, 2.1, 1e-3);
}

// Transfers started while a link of their route is down or degraded run at
// the link's full rate once it recovers, on host links and flow tables alike.
TEST(FlowEngine, TransfersStartedOnADownOrSlowLinkSpeedUpWhenItRecovers) {
  std::string out = in_child([](FlowEngine& engine) {
    const Topology& t = engine.topology();
    Nanos stalled = -1, capped = -1;
    const EndpointId src = t.endpoint(0, 0), dst = t.endpoint(1, 0);
    engine.set_link_state(t.host_link(dst), {1.0, 0, false});
    engine.set_endpoint_state(t.endpoint(2, 1), {0.1, 0, true});
    engine.start_transfer(src, dst, 25e9, [&](Nanos at) { stalled = at; });
    engine.start_transfer(t.endpoint(2, 1), t.endpoint(3, 1), 25e9, [&](Nanos at) { capped = at; });
    engine.schedule_at(500 * kMillisecond, [&] { engine.set_link_state(t.host_link(dst), {1.0, 0, true}); });
    engine.schedule_at(500 * kMillisecond, [&] { engine.set_endpoint_state(t.endpoint(2, 1), {1.0, 0, true}); });
    engine.run_until(100 * kSecond);
    return std::to_string(stalled) + " " + std::to_string(capped);
  });
  std::istringstream in(out);
  double stalled = 0, capped = 0;
  in >> stalled >> capped;
  // Stalled 0.5 s, then 25 GB at 50 GB/s.
  EXPECT_NEAR(stalled / 1e9, 1.0, 1e-3);
  // 2.5 GB at 5 GB/s by 0.5 s, then 22.5 GB at 50 GB/s.
  EXPECT_NEAR(capped / 1e9, 0.95, 1e-3);
}

TEST(FlowEngine, EcmpSpreadsConnectionsAndAvoidsUnusableSpines) {
  std::string out = in_child([](FlowEngine& engine) {
    const Topology& t = engine.topology();
    int on_spine[2] = {0, 0};
    for (int h = 0; h < 2; ++h)
      for (int g = 2; g < 4; ++g)
        for (int k = 0; k < 2; ++k) ++on_spine[engine.router().spine_for(t.endpoint(h, k), t.endpoint(g, k))];
    engine.router().set_fabric_link_usable(0, 1, false);
    int moved_to = engine.router().spine_for(t.endpoint(0, 0), t.endpoint(2, 0));
    return std::to_string(on_spine[0]) + " " + std::to_string(on_spine[1]) + " " + std::to_string(moved_to);
  });
  std::istringstream in(out);
  int s0, s1, moved;
  in >> s0 >> s1 >> moved;
  EXPECT_EQ(s0 + s1, 8);
  EXPECT_GT(s0, 0);
  EXPECT_GT(s1, 0);
  EXPECT_EQ(moved, 0);
}

TEST(FlowEngine, DrainedFabricLinkLosesItsTransfersAndStaysDrainedThroughAFlap) {
  std::string out = in_child([](FlowEngine& engine) {
    const Topology& t = engine.topology();
    const EndpointId src = t.endpoint(0, 0), dst = t.endpoint(2, 0);
    const LinkId slow = t.fabric_link(0, engine.router().spine_for(src, dst));
    engine.set_link_state(slow, {0.1, 0, true});
    Nanos done = -1;
    engine.start_transfer(src, dst, 50e9, [&](Nanos at) { done = at; });
    std::uint64_t before = 0;
    bool drained = false;
    engine.schedule_at(kSecond / 2, [&] {
      before = engine.state_version();
      drained = engine.set_fabric_link_drained(slow, true);
    });
    engine.run_until(3 * kSecond);
    const bool bumped = engine.state_version() != before;
    // A flap of the drained link: routing converges on it again, still drained.
    engine.set_link_state(slow, {0.1, 0, false});
    engine.run_until(5 * kSecond);
    engine.set_link_state(slow, {1.0, 0, true});
    engine.run_until(8 * kSecond);
    bool avoided = true;
    for (LinkId l : engine.route(src, dst)) avoided = avoided && l != slow;
    std::ostringstream o;
    o << drained << " " << bumped << " " << avoided << " " << done;
    return o.str();
  });
  std::istringstream in(out);
  int drained = 0, bumped = 0, avoided = 0;
  double done = 0;
  in >> drained >> bumped >> avoided >> done;
  EXPECT_TRUE(drained);
  EXPECT_TRUE(bumped);
  EXPECT_TRUE(avoided);
  // 2.5 GB at 5 GB/s until the drain at 0.5 s, then 47.5 GB at 50 GB/s.
  EXPECT_NEAR(done / 1e9, 1.45, 1e-3);
}

// Two transfers into h1.nic0 share its downlink; a third, from h2.nic1 to
// h3.nic1, shares nothing with them: two groups.
std::vector<TransferRequest> two_groups(const Topology& t) {
  return {{t.endpoint(0, 0), t.endpoint(1, 0), 30e9},
          {t.endpoint(2, 0), t.endpoint(1, 0), 10e9},
          {t.endpoint(2, 1), t.endpoint(3, 1), 20e9}};
}

TEST(FlowEngine, ASetSimulatedApartEndsAsInPlaceAndLeavesTheEngineAsItWas) {
  std::string out = in_child([](FlowEngine& engine) {
    const std::vector<TransferRequest> transfers = two_groups(engine.topology());
    engine.run_until(kMillisecond);
    int fired = 0;
    engine.schedule_at(2 * kMillisecond, [&] { ++fired; });
    const auto apart = engine.simulate_apart(transfers, kMinute);
    std::ostringstream o;
    o << engine.now() << " " << engine.replays()->transfers_started() << " " << (apart ? apart->size() : 0) << " |";
    for (Nanos at : apart.value_or(std::vector<Nanos>{})) o << " " << at;
    o << " |";
    const Nanos begin = engine.now();
    for (const TransferRequest& t : transfers)
      engine.start_transfer(t.src, t.dst, t.bytes, [&o, begin](Nanos at) { o << " " << at - begin; });
    engine.run_until(kMinute);
    o << " | " << fired << " " << engine.replays()->transfers_undelivered();
    return o.str();
  });
  std::istringstream in(out);
  std::string now, started, count, bar;
  in >> now >> started >> count >> bar;
  EXPECT_EQ(now, std::to_string(kMillisecond));  // the parent's clock did not move
  EXPECT_EQ(started, "0");                       // nor did it start a transfer
  ASSERT_EQ(count, "3");
  std::vector<Nanos> apart(3), in_place(3);
  for (Nanos& at : apart) in >> at;
  in >> bar;
  for (Nanos& at : in_place) in >> at;  // in completion order
  int fired = -1, undelivered = -1;
  in >> bar >> fired >> undelivered;
  EXPECT_EQ(fired, 1);  // the parent's timer fired once, in the parent
  EXPECT_EQ(undelivered, 0);
  // 10 GB share h1.nic0's 50 GB/s with 30 GB: 0.4 s; the 30 GB then 0.8 s;
  // the lone 20 GB at line rate 0.4 s. Side by side or apart, the same.
  EXPECT_NEAR(static_cast<double>(apart[0]) / kSecond, 0.8, 1e-3);
  EXPECT_NEAR(static_cast<double>(apart[1]) / kSecond, 0.4, 1e-3);
  EXPECT_NEAR(static_cast<double>(apart[2]) / kSecond, 0.4, 1e-3);
  std::vector<Nanos> sorted_apart = apart, sorted_in_place = in_place;
  std::sort(sorted_apart.begin(), sorted_apart.end());
  std::sort(sorted_in_place.begin(), sorted_in_place.end());
  EXPECT_EQ(sorted_apart, sorted_in_place);
}

TEST(FlowEngine, ASetNotDoneWithinTheLimitIsDeclined) {
  std::string out = in_child([](FlowEngine& engine) {
    const auto apart = engine.simulate_apart(two_groups(engine.topology()), 100 * kMillisecond);
    return std::string(apart ? "outcome" : "declined");
  });
  EXPECT_EQ(out, "declined");
}

TEST(FlowEngine, TellsReplayObserversOnlyWhileObserved) {
  std::string out = in_child([](FlowEngine& engine) {
    int heard = 0;
    ReplayedSet set;
    set.end = kSecond;
    {
      const ReplayLedger::Observation observing = engine.observe_replays([&](const ReplayedSet&) { ++heard; });
      engine.replays()->record(set);
    }
    set.start = kSecond;  // the next set starts once the last is over
    set.end = 2 * kSecond;
    engine.replays()->record(set);
    return std::to_string(heard) + " " + std::to_string(engine.replays()->busy_until());
  });
  EXPECT_EQ(out, "1 " + std::to_string(2 * kSecond));
}

// Stalls are drawn per transfer across a link that has them: one first
// timeout when a stall is certain per message, then 2, 4, ... times it
// while every resend is lost too; none off that link or once they end.
// Each draw moves the state version, so no iteration that drew repeats.
TEST(FlowEngine, TransfersAcrossAStallingLinkDrawTheirTimeouts) {
  std::string out = in_child([](FlowEngine& engine) {
    const Topology& t = engine.topology();
    const EndpointId a = t.endpoint(0, 0), b = t.endpoint(1, 0), c = t.endpoint(2, 0);
    const LinkId lossy = t.host_link(a);
    TransferStalls certain;
    certain.per_message = 1;
    certain.first_timeout = kMillisecond;
    certain.tail_packets = 1000;
    std::ostringstream o;
    o << engine.draws_stalls();
    engine.set_link_stalls(lossy, "f1", certain);
    const std::uint64_t version = engine.state_version();
    o << " " << engine.draws_stalls() << " " << engine.draw_stall(a, c, 50e6) << " "
      << (engine.state_version() != version) << " " << engine.draw_stall(b, c, 50e6);
    TransferStalls twice = certain;
    twice.repeat = 1;  // every resend lost: doubling 16 times
    engine.set_link_stalls(lossy, "f1", twice);
    o << " " << engine.draw_stall(a, c, 50e6);
    engine.set_link_stalls(lossy, "f1", {});
    o << " " << engine.draws_stalls() << " " << engine.draw_stall(a, c, 50e6);
    return o.str();
  });
  std::istringstream in(out);
  bool before, during, moved, after;
  Nanos stalled, clean, repeated, ended;
  in >> before >> during >> stalled >> moved >> clean >> repeated >> after >> ended;
  EXPECT_FALSE(before);
  EXPECT_TRUE(during);
  EXPECT_EQ(stalled, kMillisecond);
  EXPECT_TRUE(moved);
  EXPECT_EQ(clean, 0);
  EXPECT_EQ(repeated, ((1 << 17) - 1) * kMillisecond);  // 1 + 2 + ... + 2^16 ms
  EXPECT_FALSE(after);
  EXPECT_EQ(ended, 0);
}

}  // namespace
}  // namespace gauntlet::sim
