// Long horizons with many crash/restart cycles: 30 simulated days of a
// 4,096-GPU job (512 hosts x 8 GPUs x 8 RNICs, tp8 pp8 dp64, 8 spines,
// rail-optimized) with 40 GPU failures, each hanging the job until the
// watchdog, then a restart on a spare. Every run is forked (one flow engine
// per process). Run: build/bench/bench_job_lifecycle
#include <benchmark/benchmark.h>

#include <sstream>

#include "injectors/faults/fault_catalog.hpp"
#include "injectors/sim/fault_scheduler.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet {
namespace {

sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 8;
  s.leaves = 128;
  s.hosts = 520;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  s.rail_optimized = true;
  return s;
}

models::JobSpec job() {
  models::JobSpec j;
  j.gpus = 4096;
  j.parallelism = {8, 8, 64, 1};
  j.compute_per_iteration = 7500 * sim::kMillisecond;
  j.gradient_bytes = 2'000'000'000;
  j.activation_bytes = 64'000'000;
  j.microbatches = 8;
  j.checkpoint_interval = 30 * sim::kMinute;
  j.checkpoint_cost = 20 * sim::kSecond;
  j.restart_cost = 5 * sim::kMinute;
  j.spare_hosts = 8;
  return j;
}

void BM_MonthOfFailStops4096Gpus(benchmark::State& state) {
  const int failures = static_cast<int>(state.range(0));
  const sim::Nanos horizon = 30 * sim::kDay;
  std::string result;
  for (auto _ : state) {
    result = sim::run_isolated([&] {
      sim::Topology topology(cluster());
      sim::FlowEngine engine(topology, 1);
      sim::TelemetryBus bus;
      models::TrainingJob training(job(), topology, engine, bus);
      const injectors::FaultCatalog types = injectors::builtin_fault_catalog();
      injectors::FaultScheduler scheduler(engine, training, types);
      std::vector<injectors::FaultSpec> faults;
      for (int i = 0; i < failures; ++i) {
        injectors::FaultSpec f;
        f.id = "f" + std::to_string(i + 1);
        f.type = "gpu_fail";
        f.target = "h" + std::to_string((i * 37) % 512) + ".gpu" + std::to_string(i % 8);
        f.start = (i + 1) * (horizon / (failures + 1));
        f.duration = 6 * sim::kHour;
        faults.push_back(f);
      }
      scheduler.arm(faults, horizon);
      training.set_change_horizon([&] { return scheduler.next_change(); });
      training.start(0, horizon);
      for (sim::Nanos t = 0; t < horizon;) {  // drain hourly, as a runner would
        t = std::min(t + sim::kHour, horizon);
        engine.run_until(t);
        bus.drain(t);
      }
      std::ostringstream o;
      o << training.restarts() << " " << training.simulated_iterations() << " " << training.executed_iterations();
      return o.str();
    });
  }
  std::istringstream in(result);
  double restarts = 0, simulated = 0, executed = 0;
  in >> restarts >> simulated >> executed;
  state.counters["restarts"] = restarts;
  state.counters["simulated_iterations"] = simulated;
  state.counters["executed_iterations"] = executed;
}
BENCHMARK(BM_MonthOfFailStops4096Gpus)->Arg(40)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace gauntlet

BENCHMARK_MAIN();
