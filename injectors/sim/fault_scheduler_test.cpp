#include "injectors/sim/fault_scheduler.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "injectors/faults/fault_catalog.hpp"
#include "injectors/sim/fault_test_support.hpp"
#include "models/job_test_support.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/contract.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::injectors {
namespace {

// Two hosts in different pods, one GPU and RNIC each: the data-parallel ring
// is h0 -> h1 -> h0, and each direction crosses two fabric links alone.
sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 2;
  s.leaves = 2;
  s.hosts = 2;
  s.gpus_per_host = 1;
  s.rnics_per_host = 1;
  s.link_latency = sim::kMicrosecond;
  return s;
}

models::JobSpec job() {
  models::JobSpec j;
  j.gpus = 2;
  j.parallelism = {1, 1, 2, 1};
  j.compute_per_iteration = sim::kSecond;
  j.gradient_bytes = 10'000'000'000;  // 10 GB: 1 s per edge at 50 GB/s... times 2(n-1)/n = 1
  return j;
}

struct Outcome {
  sim::Nanos last_duration = 0;
  double factor = 0;
  std::string ring_link;   // a fabric link on the ring
  std::string other_link;  // a fabric link on no ring path
};

// Runs 60 s with `fault` (its target may be "RING" or "OTHER" for the links
// found at run time) and reports the last iteration's duration.
Outcome run_with(std::vector<FaultSpec> faults) {
  std::string out = sim::run_isolated([faults]() mutable {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    models::TrainingJob training(job(), topology, engine, bus);
    const FaultCatalog types = builtin_fault_catalog();
    FaultScheduler scheduler(engine, training, types);
    const auto path = engine.route(topology.endpoint(0, 0), topology.endpoint(1, 0));
    const int used_spine = topology.link_component(path[1]).spine;
    const std::string ring = topology.link_name(path[1]);
    const std::string other = topology.link_name(topology.fabric_link(0, 1 - used_spine));
    double factor = 1.0;
    for (FaultSpec& fault : faults) {
      if (fault.target == "RING") fault.target = ring;
      if (fault.target == "OTHER") fault.target = other;
      if (fault.type == "link_loss")
        factor = scheduler.communicator().link_goodput(*topology.link_of(*sim::ComponentId::parse(fault.target)),
                                                       fault.params.number("rate"));
    }
    scheduler.arm(faults, sim::kMinute);
    training.set_change_horizon([&] { return scheduler.next_change(); });
    training.start(0, sim::kMinute);
    engine.run_until(sim::kMinute);
    std::ostringstream o;
    o << training.timeline().back().duration << " " << factor << " " << ring << " " << other;
    return o.str();
  });
  std::istringstream in(out);
  Outcome o;
  in >> o.last_duration >> o.factor >> o.ring_link >> o.other_link;
  return o;
}

FaultSpec loss(const std::string& target, double rate) {
  FaultSpec f;
  f.id = "f1";
  f.type = "link_loss";
  f.target = target;
  f.start = 10 * sim::kSecond;
  f.params.set_number("rate", rate);
  return f;
}

TEST(LinkLoss, OnTheRingSlowsTheAllreduceByTheGoodputFactor) {
  FaultSpec none = loss("OTHER", 0.0);
  const Outcome base = run_with({none});
  const Outcome lossy = run_with({loss("RING", 0.001)});
  ASSERT_GT(lossy.factor, 0.5);
  ASSERT_LT(lossy.factor, 0.95);
  // Compute 1 s + 10 GB at 50 GB/s * factor + 2 step latencies.
  const double comm_base = static_cast<double>(base.last_duration) - 1e9;
  const double comm_lossy = static_cast<double>(lossy.last_duration) - 1e9;
  EXPECT_NEAR(comm_lossy / comm_base, 1.0 / lossy.factor, 0.01);
}

TEST(LinkLoss, OffTheRingChangesNothing) {
  const Outcome base = run_with({loss("OTHER", 0.0)});
  const Outcome off = run_with({loss("OTHER", 0.01)});
  EXPECT_EQ(off.last_duration, base.last_duration);
}

TEST(GpuThrottle, ComposesWithCpuContentionAsAProductOfSpeeds) {
  FaultSpec throttle;
  throttle.id = "f1";
  throttle.type = "gpu_throttle";
  throttle.target = "h1.gpu0";
  throttle.start = 5 * sim::kSecond;
  throttle.params.set_number("slowdown", 0.2);
  const Outcome base = run_with({loss("OTHER", 0.0)});
  const Outcome throttled = run_with({throttle});
  EXPECT_NEAR(static_cast<double>(throttled.last_duration - base.last_duration), 1e9 / 0.8 - 1e9, 1e3);
  FaultSpec contention = throttle;
  contention.id = "f2";
  contention.type = "cpu_contention";
  contention.target = "h1.cpu";
  contention.params.set_number("slowdown", 0.1);
  const Outcome both = run_with({throttle, contention});
  EXPECT_NEAR(static_cast<double>(both.last_duration - base.last_duration), 1e9 / (0.8 * 0.9) - 1e9, 1e3);
}

// The seed case's stale entries keep the fast path until the vSwitch
// invalidates them: the slow path's latency holds from at + invalidate_after
// to the fault's end, and nothing changes before.
TEST(StaleFlowTable, SlowPathStartsWhenTheStaleEntriesAreInvalidated) {
  const std::string out = sim::run_isolated([] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    models::TrainingJob training(job(), topology, engine, bus);
    const FaultCatalog types = builtin_fault_catalog();
    FaultScheduler scheduler(engine, training, types);
    FaultSpec f;
    f.id = "f1";
    f.type = "stale_flow_table";
    f.target = "h0.nic0.ft";
    f.start = 10 * sim::kSecond;
    f.duration = 60 * sim::kSecond;
    f.params.set_duration("extra_latency", 104 * sim::kMicrosecond);
    f.params.set_duration("invalidate_after", 30 * sim::kSecond);
    scheduler.arm({f}, 2 * sim::kMinute);
    std::ostringstream o;
    o << scheduler.next_change() << ":";
    for (sim::Nanos t :
         {10 * sim::kSecond, 40 * sim::kSecond - 1, 40 * sim::kSecond, 70 * sim::kSecond - 1, 70 * sim::kSecond}) {
      engine.run_until(t);
      o << " " << engine.endpoint_state(topology.endpoint(0, 0)).extra_latency;
    }
    return o.str();
  });
  EXPECT_EQ(out, std::to_string(40 * sim::kSecond) + ": 0 0 104000 104000 0");
}

TEST(FaultScheduler, SimulatesEveryFaultType) {
  const FaultCatalog types = builtin_fault_catalog();
  for (const FaultDescriptor& d : types.all()) EXPECT_TRUE(types.simulated(d.spec.name)) << d.spec.name;
}

// A fault type whose effect is set at the onset and never removed: the
// scheduler's end-of-run check must catch the window that did not close.
class LeakyFaults final : public SimulatedFaults {
 public:
  const SimulatedFault* simulated(std::string_view type) const override {
    if (type == "leaky") return &leaky_;
    return builtin_.simulated(type);
  }

 private:
  FaultCatalog builtin_ = builtin_fault_catalog();
  SimulatedFault leaky_{[](FaultEffectScope& scope) {
    static const PathEffect half{0.5, 0, false, 1.0};
    scope.set_at(scope.start(), scope.fault().target, &half);
  }};
};

// "ok", or the ContractViolation's detail, after `faults` ran for a minute.
std::string window_check_after(const std::vector<FaultSpec>& faults) {
  return sim::run_isolated([faults] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    models::TrainingJob training(job(), topology, engine, bus);
    const LeakyFaults types;
    FaultScheduler scheduler(engine, training, types);
    scheduler.arm(faults, sim::kMinute);
    training.set_change_horizon([&] { return scheduler.next_change(); });
    training.start(0, sim::kMinute);
    engine.run_until(sim::kMinute);
    try {
      scheduler.check_windows_closed();
    } catch (const sim::ContractViolation& e) {
      return e.detail();
    }
    return std::string("ok");
  });
}

TEST(FaultScheduler, EveryFaultWindowClosesByTheEndOfTheRun) {
  FaultSpec loss = testing::fault("link_loss", "leaf0~spine0", 10 * sim::kSecond, 20 * sim::kSecond);
  loss.params.set_number("rate", 0.01);
  EXPECT_EQ(window_check_after({loss}), "ok");
  FaultSpec open_ended = testing::fault("link_loss", "leaf0~spine0", 10 * sim::kSecond, std::nullopt);
  open_ended.params.set_number("rate", 0.01);
  EXPECT_EQ(window_check_after({open_ended}), "ok");
  const FaultSpec leaky = testing::fault("leaky", "leaf0~spine0", 10 * sim::kSecond, 20 * sim::kSecond);
  EXPECT_EQ(window_check_after({leaky}),
            "fault f1's effect on leaf0~spine0 is still in force at 1m, after its window ended");
}

// --- Fail-stop, fallback and re-placement faults on an 8-GPU-per-host pod ---

using models::testing::JobHarness;
using models::testing::JobReport;
using Kind = telemetry::JobEvent;

// One pod of 4 hosts, 8 RNICs each on 8 rail leaves under one spine.
sim::ClusterShape pod() {
  sim::ClusterShape s;
  s.spines = 1;
  s.leaves = 8;
  s.hosts = 5;  // the job uses 4; h4 is a spare when the job allows it
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

models::JobSpec data_parallel_job() {
  models::JobSpec j;
  j.gpus = 32;
  j.parallelism = {8, 1, 4, 1};
  j.compute_per_iteration = sim::kSecond;
  j.gradient_bytes = 10'000'000'000;  // 15 GB per ring edge: 0.3 s at 50 GB/s
  j.checkpoint_interval = 10 * sim::kMinute;
  j.checkpoint_cost = 0;
  j.collective_timeout = 2 * sim::kMinute;
  j.restart_cost = sim::kMinute;
  return j;
}

using testing::fault;

JobReport run_faults(const models::JobSpec& job, sim::Nanos horizon, std::vector<FaultSpec> faults) {
  return models::testing::run_job(pod(), job, horizon, true, [faults, horizon](JobHarness& h) {
    auto types = std::make_shared<const FaultCatalog>(builtin_fault_catalog());
    auto scheduler = std::make_shared<FaultScheduler>(h.engine, h.job, *types);
    scheduler->arm(faults, horizon);
    h.job.set_change_horizon([s = scheduler.get()] { return s->next_change(); });
    h.keep = std::make_shared<std::pair<std::shared_ptr<const FaultCatalog>, std::shared_ptr<FaultScheduler>>>(
        types, scheduler);
  });
}

int sends_from(const JobReport& r, sim::EndpointId endpoint) {
  int n = 0;
  for (const auto& [from, to] : r.talking) n += from == endpoint ? 1 : 0;
  return n;
}

TEST(NicDown, FallbackDoublesTheFallbackRnicsLoadSilently) {
  const models::JobSpec job = data_parallel_job();
  const JobReport clean = run_faults(job, sim::kMinute, {});
  const JobReport down = run_faults(job, sim::kMinute, {fault("nic_down", "h1.nic3", 20 * sim::kSecond, {})});
  const sim::Topology topology(pod());
  // h1.gpu3's ring edge now leaves from h1.nic0, next to h1.gpu0's.
  EXPECT_EQ(sends_from(clean, topology.endpoint(1, 0)), 1);
  EXPECT_EQ(sends_from(down, topology.endpoint(1, 0)), 2);
  EXPECT_EQ(sends_from(down, topology.endpoint(1, 3)), 0);
  // Rings 0 and 3 share h1.nic0's line, so both edges take twice as long:
  // the iteration grows by one ring's communication time, the share that moved.
  const double comm = static_cast<double>(clean.last_duration() - sim::kSecond);
  EXPECT_NEAR(static_cast<double>(down.last_duration() - clean.last_duration()), comm, 0.01 * comm);
  // No error: only the job's start was ever announced.
  EXPECT_EQ(down.events.size(), 1u);
  EXPECT_EQ(down.events.front().kind, Kind::START);
}

TEST(PortFlap, ADownLongerThanTheTransportTimeoutCrashesTheJob) {
  const models::JobSpec job = data_parallel_job();
  auto flap = [](sim::Nanos down) {
    FaultSpec f = fault("port_flap", "h2.nic5", 10 * sim::kSecond, 30 * sim::kSecond);
    f.params.set_duration("period", 60 * sim::kSecond);
    f.params.set_duration("down", down);
    return f;
  };
  const JobReport brief = run_faults(job, 2 * sim::kMinute, {flap(3 * sim::kSecond)});
  EXPECT_EQ(brief.count(Kind::CRASH), 0);
  const JobReport longer = run_faults(job, 2 * sim::kMinute, {flap(5 * sim::kSecond)});
  ASSERT_EQ(longer.count(Kind::CRASH), 1);
  EXPECT_EQ(longer.first(Kind::CRASH)->time, 14 * sim::kSecond);  // 4 s after the port went down
  EXPECT_EQ(longer.first(Kind::CRASH)->error, "NCCL Error");
  EXPECT_EQ(longer.first(Kind::RESTART)->time, 14 * sim::kSecond + job.restart_cost);
}

TEST(LinkLoss, AboveTheRetryExhaustionRateTheCollectiveFails) {
  const models::JobSpec job = data_parallel_job();
  const sim::Topology topology(pod());
  const std::string link = topology.link_name(topology.host_link(topology.endpoint(2, 5)));
  auto lossy = [&](double rate) {
    FaultSpec f = fault("link_loss", link, 10 * sim::kSecond, 30 * sim::kSecond);
    f.params.set_number("rate", rate);
    return f;
  };
  const double exhaustion = models::retry_exhaustion_loss({});
  // Below it the ring only crawls at go-back-N's goodput.
  const JobReport slow = run_faults(job, 2 * sim::kMinute, {lossy(0.5 * exhaustion)});
  EXPECT_EQ(slow.count(Kind::CRASH), 0);
  const JobReport failed = run_faults(job, 2 * sim::kMinute, {lossy(1.2 * exhaustion)});
  ASSERT_GE(failed.count(Kind::CRASH), 1);
  EXPECT_EQ(failed.first(Kind::CRASH)->time, 14 * sim::kSecond);  // one transport timeout in
  EXPECT_EQ(failed.first(Kind::CRASH)->error, "NCCL Error");
}

// Many sub-timeout flaps on a ring host link: each down stalls the ring
// edges in flight for at most `down`, then they resume; the job never stops.
TEST(PortFlap, ManyShortDownsOnlyStretchTheIterationsTheyHit) {
  const models::JobSpec job = data_parallel_job();
  const sim::Nanos horizon = 12 * sim::kMinute;
  FaultSpec f = fault("port_flap", "h2.nic5", sim::kMinute, 10 * sim::kMinute);
  f.params.set_duration("period", 20 * sim::kSecond);
  f.params.set_duration("down", 500 * sim::kMillisecond);
  const int flaps = 30;
  const JobReport clean = run_faults(job, horizon, {});
  const JobReport flapping = run_faults(job, horizon, {f});
  EXPECT_EQ(flapping.count(Kind::CRASH), 0);
  ASSERT_FALSE(flapping.timeline.empty());
  const sim::Nanos step = clean.last_duration();
  ASSERT_GT(step, sim::kSecond);
  // Still iterating at the fault-free rate at the horizon.
  const models::IterationSpan& last = flapping.timeline.back();
  EXPECT_EQ(last.duration, step);
  EXPECT_GT(last.start + static_cast<sim::Nanos>(last.count) * last.duration, horizon - step);
  // Every iteration is either fault-free or stretched by at most one down.
  int stretched = 0;
  for (const models::IterationSpan& s : flapping.timeline) {
    EXPECT_GE(s.duration, step);
    EXPECT_LE(s.duration, step + f.params.duration("down"));
    if (s.duration != step) stretched += static_cast<int>(s.count);
  }
  EXPECT_GT(stretched, 0);
  EXPECT_LE(stretched, flaps);
  // Progress lost: at most the stretch of the iterations hit, plus a boundary.
  EXPECT_LE(clean.progress - flapping.progress,
            static_cast<std::uint64_t>(stretched) * f.params.duration("down") / step + 1);
}

TEST(FailStop, GpuFailHangsUntilTheWatchdogThenRestartsOnRepairedHardware) {
  const models::JobSpec job = data_parallel_job();
  const sim::Nanos at = 30 * sim::kSecond;
  const JobReport r = run_faults(job, 6 * sim::kMinute, {fault("gpu_fail", "h2.gpu6", at, 3 * sim::kMinute)});
  ASSERT_EQ(r.count(Kind::CRASH), 1);
  EXPECT_EQ(r.first(Kind::CRASH)->time, at + job.collective_timeout);
  // Repaired at 3.5 min, after the crash at 2.5 min: restart cost counts from then.
  EXPECT_EQ(r.first(Kind::RESTART)->time, at + 3 * sim::kMinute + job.restart_cost);
  EXPECT_EQ(r.unfinished.size(), 8u * 4u - 1u);
}

TEST(FailStop, NodeCrashMovesTheJobToASpareAndItsRingsWithIt) {
  models::JobSpec job = data_parallel_job();
  job.spare_hosts = 1;
  const sim::Nanos at = 30 * sim::kSecond;
  const JobReport r = run_faults(job, 5 * sim::kMinute, {fault("node_crash", "h1", at, {})});
  ASSERT_EQ(r.count(Kind::CRASH), 1);
  EXPECT_EQ(r.first(Kind::CRASH)->time, at + job.collective_timeout);
  EXPECT_EQ(r.first(Kind::RESTART)->time, at + job.collective_timeout + job.restart_cost);
  // Every GPU of h1 was gone: no rank of it entered the hung collective.
  for (const auto& c : r.unfinished) EXPECT_NE(c.worker.rfind("h1.", 0), 0u) << c.worker;
  EXPECT_EQ(r.unfinished.size(), 8u * 3u);
  EXPECT_EQ(r.hosts, (std::vector<int>{0, 4, 2, 3}));
}

TEST(Reconfigure, ChangesTheTalkingEndpointsButNotTheIterationTime) {
  models::JobSpec job = data_parallel_job();
  job.spare_hosts = 1;
  job.checkpoint_cost = 5 * sim::kSecond;
  FaultSpec f = fault("reconfigure", "", 40 * sim::kSecond, {});
  const JobReport clean = run_faults(job, 4 * sim::kMinute, {});
  const JobReport moved = run_faults(job, 4 * sim::kMinute, {f});
  EXPECT_NE(moved.talking, clean.talking);
  EXPECT_EQ(moved.hosts, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(moved.last_duration(), clean.last_duration());
  EXPECT_EQ(moved.count(Kind::CRASH), 0);
  EXPECT_EQ(moved.count(Kind::RESTART), 1);
  const double cost = static_cast<double>(job.checkpoint_cost + job.restart_cost);
  EXPECT_NEAR(static_cast<double>(clean.progress - moved.progress), cost / static_cast<double>(clean.last_duration()),
              1.0);
}

}  // namespace
}  // namespace gauntlet::injectors
