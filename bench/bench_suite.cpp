// The detector benchmark's cost: episodes of suites/standard.yaml run as the
// suite runs them (each episode's simulations in processes of their own),
// counted per CPU-minute of this process and its children. Run it from the
// repository's root, as the suite runs: its exec: detectors name build/python.
//   build/bench/bench_suite
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "harness/runner/runner.hpp"
#include "harness/suite/suite_spec.hpp"

namespace {

using namespace gauntlet::harness;

double cpu_seconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    ::getrusage(who, &usage);
    total += static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
             static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  }
  return total;
}

// Every `stride`-th episode of the standard suite: each fault type, every
// shape and healthy episodes appear in the slice.
void standard_slice(benchmark::State& state, std::size_t stride, bool idle_detectors) {
  const DetectorRegistry registry = builtin_detectors();
  SuiteSpec spec = load_suite(std::string(GAUNTLET_SOURCE_DIR) + "/suites/standard.yaml", registry);
  // The status quo alone raises nothing before a watchdog fires: what a run
  // costs when its detectors have nothing to do.
  if (idle_detectors) {
    spec.detectors = YAML::Load("[timeout]");
    spec.sensitivity.clear();  // the swept detectors are gone
  }
  std::vector<Scenario> slice;
  for (const Episode& episode : expand_episodes(spec))
    if (episode.index % stride == 0) slice.push_back(episode_scenario(spec, episode, registry));
  RunOptions options;
  options.parallel_runs = 1;  // as under --jobs 2: one core per episode
  double cpu = 0;
  std::size_t episodes = 0;
  for (auto _ : state) {
    const double start = cpu_seconds();
    for (const Scenario& scenario : slice) benchmark::DoNotOptimize(run_scenario(scenario, registry, options));
    cpu += cpu_seconds() - start;
    episodes += slice.size();
  }
  state.counters["episodes"] = static_cast<double>(slice.size());
  state.counters["cpu_s_per_episode"] = cpu / static_cast<double>(episodes);
  state.counters["episodes_per_cpu_minute"] = 60.0 * static_cast<double>(episodes) / cpu;
}

BENCHMARK_CAPTURE(standard_slice, every_8th_episode, 8, false)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);
BENCHMARK_CAPTURE(standard_slice, every_8th_idle_detectors, 8, true)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
