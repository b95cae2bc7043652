// The collective scheme runs use (each ring allreduce as concurrent edge
// flows, identical iterations fast-forwarded) against the algorithm as
// written: every ring step a separate round of flows, 2(n-1) rounds of S/n,
// and every iteration simulated. Both run the same scenario's job, faults
// included, each in its own process; the counters give both wall times, the
// speedup and how far apart their mean iteration times are.
//   build/bench/bench_ring_steps
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <sstream>

#include "harness/runner/runner.hpp"
#include "harness/scenario/loader.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "injectors/sim/fault_scheduler.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet {
namespace {

struct JobRun {
  double wall_seconds = 0;
  double iterations = 0;
  double mean_iteration_ns = 0;
  double simulated = 0;
};

JobRun run_job(const harness::Scenario& scenario, sim::Nanos horizon, bool stepwise) {
  const std::string text = sim::run_isolated([&] {
    const auto began = std::chrono::steady_clock::now();
    sim::Topology topology(scenario.cluster);
    sim::FlowEngine engine(topology, scenario.seed);
    sim::TelemetryBus bus;
    models::TrainingJob job(scenario.job, topology, engine, bus);
    job.set_fast_forward(!stepwise);
    job.set_stepwise_rings(stepwise);
    const injectors::FaultCatalog types = injectors::builtin_fault_catalog();
    injectors::FaultScheduler scheduler(engine, job, types);
    scheduler.arm(scenario.faults, horizon);
    job.set_change_horizon([&] { return std::min(scheduler.next_change(), engine.next_internal_change()); });
    job.start(0, horizon);
    for (sim::Nanos t = 0; t < horizon;) {
      t = std::min(t + sim::kSecond, horizon);
      engine.run_until(t);
      bus.drain(t);
    }
    double count = 0, busy = 0;
    for (const models::IterationSpan& span : job.timeline()) {
      count += static_cast<double>(span.count);
      busy += static_cast<double>(span.count) * static_cast<double>(span.duration);
    }
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - began;
    std::ostringstream o;
    o << wall.count() << " " << count << " " << (count > 0 ? busy / count : 0) << " " << job.simulated_iterations();
    return o.str();
  });
  JobRun run;
  std::istringstream in(text);
  in >> run.wall_seconds >> run.iterations >> run.mean_iteration_ns >> run.simulated;
  return run;
}

void scheme_vs_stepwise(benchmark::State& state, const char* path, int horizon_seconds) {
  const harness::DetectorRegistry registry = harness::builtin_detectors();
  const harness::Scenario scenario = harness::load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/" + path, registry);
  const sim::Nanos horizon =
      horizon_seconds > 0 ? std::min(scenario.duration, horizon_seconds * sim::kSecond) : scenario.duration;
  JobRun scheme, stepwise;
  for (auto _ : state) {
    scheme = run_job(scenario, horizon, false);
    stepwise = run_job(scenario, horizon, true);
  }
  state.counters["scheme_s"] = scheme.wall_seconds;
  state.counters["stepwise_s"] = stepwise.wall_seconds;
  state.counters["speedup"] = scheme.wall_seconds > 0 ? stepwise.wall_seconds / scheme.wall_seconds : 0;
  state.counters["iterations"] = scheme.iterations;
  state.counters["stepwise_iterations"] = stepwise.iterations;
  state.counters["scheme_simulated"] = scheme.simulated;
  state.counters["iteration_gap_pct"] =
      stepwise.mean_iteration_ns > 0
          ? 100.0 * std::abs(scheme.mean_iteration_ns - stepwise.mean_iteration_ns) / stepwise.mean_iteration_ns
          : 0;
}

// The 128-GPU demo for its whole 20 minutes, and the first two minutes of
// the 4,096-GPU hour (every ring step of 64-rank rings is costly).
BENCHMARK_CAPTURE(scheme_vs_stepwise, demo_128gpu_20min, "scenarios/demo.yaml", 0)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(scheme_vs_stepwise, scale_4096gpu_2min, "scenarios/scale-4096.yaml", 120)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace gauntlet

BENCHMARK_MAIN();
