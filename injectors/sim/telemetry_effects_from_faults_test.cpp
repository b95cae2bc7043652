#include "injectors/sim/telemetry_effects_from_faults.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "injectors/faults/fault_catalog.hpp"
#include "injectors/sim/fault_test_support.hpp"
#include "injectors/sim/fault_scheduler.hpp"
#include "models/host/host_clock.hpp"
#include "models/host/job_view.hpp"
#include "models/telemetry/hardware_sampler.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::injectors {
namespace {

using sim::kSecond;

sim::ClusterShape pod() {
  sim::ClusterShape s;
  s.spines = 1;
  s.leaves = 8;
  s.hosts = 4;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

using testing::fault;

TEST(TelemetryEffectsFromFaults, WindowsFollowTheFaultsAndOpenEndedOnesTheHorizon) {
  const sim::Topology topology(pod());
  FaultSpec throttle = fault("gpu_throttle", "h1.gpu2", 10 * kSecond, 20 * kSecond);
  throttle.params.set_number("slowdown", 0.2);
  FaultSpec contention = fault("cpu_contention", "h3", 5 * kSecond, std::nullopt);
  contention.params.set_number("slowdown", 0.25);
  FaultSpec skew = fault("clock_skew", "h0", 0, 40 * kSecond);
  skew.params.set_duration("offset", -3 * kSecond);
  const auto effects =
      telemetry_effects_from({throttle, contention, skew}, builtin_fault_catalog(), topology, 100 * kSecond);
  EXPECT_DOUBLE_EQ(effects.clock_factor(1, 2, 9 * kSecond), 1.0);
  EXPECT_DOUBLE_EQ(effects.clock_factor(1, 2, 10 * kSecond), 0.8);
  EXPECT_DOUBLE_EQ(effects.clock_factor(1, 2, 30 * kSecond), 1.0);
  EXPECT_DOUBLE_EQ(effects.clock_factor(1, 3, 15 * kSecond), 1.0);
  EXPECT_DOUBLE_EQ(effects.cpu_factor(3, 99 * kSecond), 0.75);
  EXPECT_DOUBLE_EQ(effects.cpu_factor(3, 100 * kSecond), 1.0);
  EXPECT_EQ(effects.clock_offset(0, 39 * kSecond), -3 * kSecond);
  EXPECT_EQ(effects.clock_offset(1, 39 * kSecond), 0);
}

struct NicSeen {
  std::uint64_t tx_before = 0, tx_after = 0, tx_down = 0, packets_before = 0, packets_after = 0;
  bool up_before = false, up_after = true;
  int job_events = 0;
  sim::Nanos iteration_before = 0, iteration_after = 0;
};

// 32 GPUs, tp8 dp4: one host's 8 GPUs per data-parallel replica, 4 replicas.
models::JobSpec tp8_dp4_job() {
  models::JobSpec spec;
  spec.gpus = 32;
  spec.parallelism = {8, 1, 4, 1};
  spec.compute_per_iteration = kSecond;
  spec.gradient_bytes = 10'000'000'000;
  return spec;
}

// A 32-GPU data-parallel job (tp8 dp4) on 4 hosts; h1.nic3 goes down at 20 s
// and NCCL moves h1.gpu3's ring edge to h1.nic0. Samples as the runner takes them.
NicSeen run_nic_down() {
  const std::string out = sim::run_isolated([] {
    const sim::Topology topology(pod());
    sim::FlowEngine engine(topology, 3);
    sim::TelemetryBus bus;
    const models::JobSpec spec = tp8_dp4_job();
    models::TrainingJob job(spec, topology, engine, bus);
    const FaultCatalog types = builtin_fault_catalog();
    FaultScheduler scheduler(engine, job, types);
    const std::vector<FaultSpec> faults{fault("nic_down", "h1.nic3", 20 * kSecond, std::nullopt)};
    scheduler.arm(faults, sim::kMinute);
    job.set_change_horizon([&] { return scheduler.next_change(); });
    const auto effects = telemetry_effects_from(faults, types, topology, sim::kMinute);
    models::HardwareSampler sampler(topology, effects);
    job.start(0, sim::kMinute);
    NicSeen seen;
    for (sim::Nanos t = kSecond; t <= sim::kMinute; t += kSecond) {
      engine.run_until(t);
      telemetry::Batch batch = bus.drain(t);
      sampler.observe_traffic(batch, [&] { return models::job_endpoints(job, topology); });
      sampler.sample(t, models::job_sample_inputs(job, engine), &batch);
      for (const auto& r : batch.records()) {
        if (r.has_job()) ++seen.job_events;
        if (r.has_iteration() && r.iteration().end_ns() < 20 * kSecond)
          seen.iteration_before = r.iteration().end_ns() - r.iteration().start_ns();
      }
      // The value each RNIC reports now: its latest plain sample.
      for (const auto& r : batch.records()) {
        if (!r.has_nic()) continue;
        const auto& n = r.nic();
        if (n.nic() == "h1.nic0" && t < 20 * kSecond) {
          seen.tx_before = n.tx_bytes();
          seen.packets_before = n.tx_packets();
        }
        if (n.nic() == "h1.nic0" && t > 20 * kSecond) {
          seen.tx_after = n.tx_bytes();
          seen.packets_after = n.tx_packets();
        }
        if (n.nic() == "h1.nic3" && t < 20 * kSecond) seen.up_before = n.link_up();
        if (n.nic() == "h1.nic3" && t >= 20 * kSecond) {
          seen.up_after = n.link_up();
          seen.tx_down = n.tx_bytes();
        }
      }
    }
    seen.iteration_after = job.timeline().back().duration;
    std::ostringstream o;
    o << seen.tx_before << ' ' << seen.tx_after << ' ' << seen.tx_down << ' ' << seen.packets_before << ' '
      << seen.packets_after << ' ' << seen.up_before << ' ' << seen.up_after << ' ' << seen.job_events << ' '
      << seen.iteration_before << ' ' << seen.iteration_after;
    return o.str();
  });
  std::istringstream in(out);
  NicSeen s;
  in >> s.tx_before >> s.tx_after >> s.tx_down >> s.packets_before >> s.packets_after >> s.up_before >> s.up_after >>
      s.job_events >> s.iteration_before >> s.iteration_after;
  return s;
}

TEST(TelemetryEffectsFromFaults, NicDownShowsOnlyAsADownLinkAndAFallbackRnicCarryingTwoRings) {
  const NicSeen s = run_nic_down();
  EXPECT_TRUE(s.up_before);
  EXPECT_FALSE(s.up_after);
  EXPECT_EQ(s.tx_down, 0u);
  EXPECT_EQ(s.job_events, 1);  // the job's start; no alarm, no error
  ASSERT_GT(s.tx_before, 0u);
  ASSERT_GT(s.iteration_after, s.iteration_before);
  // Two rings' bytes per iteration instead of one, over a longer iteration.
  const double expected = 2.0 * static_cast<double>(s.iteration_before) / static_cast<double>(s.iteration_after);
  RecordProperty("tx_ratio", std::to_string(static_cast<double>(s.tx_after) / static_cast<double>(s.tx_before)));
  EXPECT_NEAR(static_cast<double>(s.tx_after) / static_cast<double>(s.tx_before), expected, 0.02 * expected);
  EXPECT_NEAR(static_cast<double>(s.packets_after) / static_cast<double>(s.packets_before), expected, 0.02 * expected);
}

// Runs the same job with h1's clock 2 s ahead from 20 s to 40 s, stamping
// batches as the runner does; reports, per iteration, how far h1's end stamp
// is from h0's, and per sample block start, how far h1.gpu0's and h0.gpu0's
// stamps are from the block's true time.
std::string run_clock_skew() {
  return sim::run_isolated([] {
    const sim::Topology topology(pod());
    sim::FlowEngine engine(topology, 3);
    sim::TelemetryBus bus;
    const models::JobSpec spec = tp8_dp4_job();
    models::TrainingJob job(spec, topology, engine, bus);
    const FaultCatalog types = builtin_fault_catalog();
    FaultScheduler scheduler(engine, job, types);
    FaultSpec skew = fault("clock_skew", "h1", 20 * kSecond, 20 * kSecond);
    skew.params.set_duration("offset", 2 * kSecond);
    scheduler.arm({skew}, sim::kMinute);
    const auto effects = telemetry_effects_from({skew}, types, topology, sim::kMinute);
    job.set_change_horizon([&] { return std::min(scheduler.next_change(), effects.next_change(engine.now())); });
    models::HardwareSampler sampler(topology, effects);
    job.start(0, sim::kMinute);
    std::map<std::uint64_t, std::map<int, sim::Nanos>> ends;  // iteration -> host -> stamped end
    std::map<std::uint64_t, sim::Nanos> true_end;
    std::ostringstream o;
    auto note_blocks = [&](const telemetry::Batch& batch) {
      for (const auto& block : batch.steady_samples())
        for (const auto& r : block.samples())
          if (r.has_gpu() && (r.gpu().gpu() == "h1.gpu0" || r.gpu().gpu() == "h0.gpu0"))
            o << "S " << block.from_ns() << ' ' << r.gpu().gpu() << ' ' << r.gpu().time_ns() - block.from_ns() << '\n';
    };
    auto note = [&](const telemetry::IterationRecord& it, sim::Nanos shift, std::uint64_t index) {
      const int host = sim::ComponentId::parse(it.worker())->host;
      ends[index][host] = it.end_ns() + shift;
    };
    for (sim::Nanos t = kSecond; t <= sim::kMinute; t += kSecond) {
      engine.run_until(t);
      telemetry::Batch batch = bus.drain(t);
      for (const auto& r : batch.records())
        if (r.has_iteration()) true_end[r.iteration().iteration()] = r.iteration().end_ns();
      for (const auto& run : batch.steady())
        for (const auto& r : run.records())
          if (r.has_iteration())
            for (std::uint64_t i = run.first_iteration(); i <= run.last_iteration(); ++i)
              true_end[i] =
                  r.iteration().end_ns() + static_cast<sim::Nanos>(i - run.first_iteration()) * run.period_ns();
      sampler.observe_traffic(batch, [&] { return models::job_endpoints(job, topology); });
      sampler.sample(t, models::job_sample_inputs(job, engine), &batch);
      models::apply_host_clocks(effects, &batch);
      for (const auto& r : batch.records())
        if (r.has_iteration()) note(r.iteration(), 0, r.iteration().iteration());
      for (const auto& run : batch.steady())
        for (const auto& r : run.records())
          if (r.has_iteration())
            for (std::uint64_t i = run.first_iteration(); i <= run.last_iteration(); ++i)
              note(r.iteration(), static_cast<sim::Nanos>(i - run.first_iteration()) * run.period_ns(), i);
      note_blocks(batch);
    }
    telemetry::Batch last;
    sampler.flush(&last);
    models::apply_host_clocks(effects, &last);
    note_blocks(last);
    for (const auto& [i, by_host] : ends)
      o << "I " << true_end[i] << ' ' << by_host.at(1) - by_host.at(0) << ' ' << by_host.at(0) - true_end[i] << '\n';
    return o.str();
  });
}

TEST(TelemetryEffectsFromFaults, ClockSkewOffsetsExactlyThatHostsStampsWhileItLasts) {
  std::istringstream in(run_clock_skew());
  std::string kind;
  int iterations = 0, skewed = 0, blocks = 0, skewed_blocks = 0;
  while (in >> kind) {
    if (kind == "I") {
      sim::Nanos end = 0, h1_minus_h0 = 0, h0_error = 0;
      in >> end >> h1_minus_h0 >> h0_error;
      const bool during = end >= 20 * kSecond && end < 40 * kSecond;
      EXPECT_EQ(h1_minus_h0, during ? 2 * kSecond : 0) << "iteration ending at " << end;
      EXPECT_EQ(h0_error, 0);
      ++iterations;
      skewed += during ? 1 : 0;
    } else {
      sim::Nanos from = 0, shift = 0;
      std::string gpu;
      in >> from >> gpu >> shift;
      const bool during = from >= 20 * kSecond && from < 40 * kSecond;
      EXPECT_EQ(shift, gpu == "h1.gpu0" && during ? 2 * kSecond : 0) << gpu << " block from " << from;
      ++blocks;
      skewed_blocks += gpu == "h1.gpu0" && during ? 1 : 0;
    }
  }
  EXPECT_GT(iterations, 20);
  EXPECT_GT(skewed, 5);
  // h1's blocks end at the skew's edges (before, during, after); h0's run on.
  EXPECT_GE(blocks, 4);
  EXPECT_EQ(skewed_blocks, 1);
}

}  // namespace
}  // namespace gauntlet::injectors
