#include "injectors/sim/fault_scheduler.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/flow/flow_engine.hpp"
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
    FaultScheduler scheduler(engine, training);
    const auto path = engine.route(topology.endpoint(0, 0), topology.endpoint(1, 0));
    const int used_spine = topology.link_component(path[1]).spine;
    const std::string ring = topology.link_name(path[1]);
    const std::string other = topology.link_name(topology.fabric_link(0, 1 - used_spine));
    double factor = 1.0;
    for (FaultSpec& fault : faults) {
      if (fault.target == "RING") fault.target = ring;
      if (fault.target == "OTHER") fault.target = other;
      if (fault.type == FaultType::link_loss)
        factor = scheduler.link_loss_factor(*topology.link_of(*sim::ComponentId::parse(fault.target)),
                                            fault.params.rate);
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
  f.type = FaultType::link_loss;
  f.target = target;
  f.start = 10 * sim::kSecond;
  f.params.rate = rate;
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
  throttle.type = FaultType::gpu_throttle;
  throttle.target = "h1.gpu0";
  throttle.start = 5 * sim::kSecond;
  throttle.params.slowdown = 0.2;
  const Outcome base = run_with({loss("OTHER", 0.0)});
  const Outcome throttled = run_with({throttle});
  EXPECT_NEAR(static_cast<double>(throttled.last_duration - base.last_duration), 1e9 / 0.8 - 1e9, 1e3);
  FaultSpec contention = throttle;
  contention.id = "f2";
  contention.type = FaultType::cpu_contention;
  contention.target = "h1.cpu";
  contention.params.slowdown = 0.1;
  const Outcome both = run_with({throttle, contention});
  EXPECT_NEAR(static_cast<double>(both.last_duration - base.last_duration), 1e9 / (0.8 * 0.9) - 1e9, 1e3);
}

TEST(FaultScheduler, RejectsFaultsItCannotSimulate) {
  EXPECT_FALSE(FaultScheduler::simulated(FaultType::gpu_fail));
  EXPECT_TRUE(FaultScheduler::simulated(FaultType::link_loss));
}

}  // namespace
}  // namespace gauntlet::injectors
