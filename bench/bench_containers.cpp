// Cost of the container bookkeeping at one restart of a 4,096-GPU job
// (512 containers, tp8 pp8 dp64): every container stops, the next
// incarnation of each starts with its VFs and vSwitch rules, and the
// scheduler's events are published. A 30-day run pays this ~40 times.
#include <benchmark/benchmark.h>

#include "models/container.hpp"

namespace {

using namespace gauntlet;

void BM_RestartOf512Containers(benchmark::State& state) {
  sim::ClusterShape shape;
  shape.spines = 8;
  shape.leaves = 128;
  shape.hosts = 520;
  shape.gpus_per_host = 8;
  shape.rnics_per_host = 8;
  const sim::Topology topology(shape);
  models::JobSpec job;
  job.name = "llm";
  job.gpus = 4096;
  job.parallelism = {8, 8, 64, 1};
  const models::Placement placement(job, topology);
  const std::set<int> none;
  const std::set<std::pair<int, int>> no_gpus;
  sim::TelemetryBus bus;
  models::ContainerSet containers("llm", topology, &bus);
  sim::Nanos t = 0;
  containers.start_all(t, placement);
  for (auto _ : state) {
    t += sim::kHour;
    containers.stop_all(t, models::StopReason::restart, {none, no_gpus, none});
    containers.start_all(t + 5 * sim::kMinute, placement);
    benchmark::DoNotOptimize(bus.drain(t + 5 * sim::kMinute));
  }
  state.counters["containers"] = static_cast<double>(containers.lifetimes().size());
}
BENCHMARK(BM_RestartOf512Containers)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
