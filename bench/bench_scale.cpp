// Scale benchmarks: whole scenario runs (the faulty run with every detector
// and the fault-free counterfactual, each in its own process), as a user
// would run them. Wall time is real time; peak memory is the largest child's.
//   build/bench/bench_scale --benchmark_filter=4096
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "harness/runner/runner.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/isolated_run.hpp"

namespace {

using namespace gauntlet::harness;

void run_scenario_file(benchmark::State& state, const char* path) {
  const DetectorRegistry registry = builtin_detectors();
  const Scenario scenario = load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/" + path, registry);
  std::uint64_t iterations = 0;
  for (auto _ : state) {
    const RunReport report = run_scenario(scenario, registry, RunOptions{});
    iterations = report.faulty.iterations();
  }
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  state.counters["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["iterations"] = static_cast<double>(iterations);
}

// The faulty run alone, with or without steady-state fast-forward: the
// ratio of the two is what skipping identical iterations saves.
void faulty_run(benchmark::State& state, const char* path, bool fast_forward) {
  const DetectorRegistry registry = builtin_detectors();
  const Scenario scenario = load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/" + path, registry);
  SimulationRequest request;
  request.fast_forward = fast_forward;
  for (auto _ : state)
    benchmark::DoNotOptimize(
        gauntlet::sim::run_isolated([&] { return simulate(scenario, registry, request).to_json(); }));
}

BENCHMARK_CAPTURE(faulty_run, demo_fast_forward, "scenarios/demo.yaml", true)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK_CAPTURE(faulty_run, demo_every_iteration, "scenarios/demo.yaml", false)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK_CAPTURE(run_scenario_file, demo_128gpu_20min, "scenarios/demo.yaml")
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(run_scenario_file, scale_4096gpu_1h, "scenarios/scale-4096.yaml")
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(run_scenario_file, scale_16384gpu_1h, "scenarios/scale-16384.yaml")
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(run_scenario_file, month_4096gpu_40_failstops, "scenarios/month-4096-failstop.yaml")
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);
// The planners' scale targets: 16,384 GPUs with all six reference detectors
// (under 60 s, 4 GiB), 65,536 GPUs with all six (under 5 minutes, 16 GiB),
// C4D's month under C4D with isolate-restart (under 2 minutes).
BENCHMARK_CAPTURE(run_scenario_file, scale_16384gpu_1h_six_detectors, "scenarios/scale-16384-six.yaml")
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(run_scenario_file, scale_65536gpu_1h_six_detectors, "scenarios/scale-65536-six.yaml")
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(run_scenario_file, c4d_month_isolate_restart, "scenarios/c4d-month-c4d.yaml")
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
