// The scale benchmark over drawn scenarios (bench/scale_scenarios.hpp): each
// draw run as `gauntlet run` runs it (the faulty run with its detectors and
// the fault-free counterfactual), in a process of its own so that its peak
// memory is its own: the largest resident set of that process and of the
// simulations it starts. Reports each draw, then the worst wall time and the
// worst peak, which are what the scale targets bound.
//   build/bench/bench_scale_draws --gpus 16384 --seed 1 --draws 10
//   build/bench/bench_scale_draws --gpus 16384 --seed 1 --first 3 --draws 1 --print
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <vector>

#include "bench/scale_scenarios.hpp"
#include "harness/cli/unsigned_option.hpp"
#include "harness/runner/runner.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"

namespace po = boost::program_options;
using namespace gauntlet;

namespace {

struct Measured {
  double wall_seconds = 0;
  double cpu_seconds = 0;  // the draw's processes together: steadier than wall time on a shared machine
  double peak_mib = 0;
  bool ok = false;
};

// The draw's whole run in a child; wall time and the child's peak resident
// set and CPU time (Linux folds in those of the simulations it waited for).
Measured run_in_child(const harness::Scenario& scenario, const harness::DetectorRegistry& registry) {
  const auto began = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child < 0) return {};
  if (child == 0) {
    try {
      harness::run_scenario(scenario, registry, harness::RunOptions{});
      std::fflush(nullptr);
      ::_exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "run failed: %s\n", e.what());
      ::_exit(1);
    }
  }
  int status = 0;
  rusage usage{};
  if (::wait4(child, &status, 0, &usage) != child) return {};
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - began;
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  return {wall.count(), cpu, static_cast<double>(usage.ru_maxrss) / 1024.0,
          WIFEXITED(status) && WEXITSTATUS(status) == 0};
}

}  // namespace

int main(int argc, char** argv) {
  cli::UnsignedOption seed{1}, first{0}, draws{10};
  int gpus = 16'384;
  po::options_description options("bench_scale_draws [options]");
  options.add_options()("help,h", "show this help")("gpus", po::value(&gpus)->default_value(16'384),
                                                    "the job's GPUs, a multiple of 16384")(
      "seed", po::value(&seed), "the generator's seed (default 1)")("first", po::value(&first),
                                                                    "the first draw (default 0)")(
      "draws", po::value(&draws), "how many draws (default 10)")("print", "print each draw's scenario, do not run it");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "bench_scale_draws: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (gpus < 16'384 || gpus % 16'384 != 0) {
    std::fprintf(stderr, "bench_scale_draws: --gpus must be a multiple of 16384\n");
    return 2;
  }
  const harness::DetectorRegistry registry = harness::builtin_detectors();
  std::vector<double> walls;
  std::vector<double> cpus;
  double worst_peak = 0;
  bool all_ok = true;
  for (unsigned long long k = first.value; k < first.value + draws.value; ++k) {
    const bench::ScaleDraw draw = bench::scale_scenario(seed.value, k, gpus);
    if (vm.count("print")) {
      std::cout << "# draw " << k << ": " << draw.summary << "\n" << draw.yaml;
      continue;
    }
    harness::Scenario scenario;
    try {
      scenario = harness::parse_scenario(draw.yaml, "draw-" + std::to_string(k) + ".yaml", registry);
    } catch (const harness::InputError& e) {
      std::fprintf(stderr, "draw %llu refused: %s\n", k, e.what());
      all_ok = false;
      continue;
    }
    const Measured m = run_in_child(scenario, registry);
    std::printf("draw %llu: %.1f s wall, %.1f s CPU, %.0f MiB peak%s  (%s)\n", k, m.wall_seconds, m.cpu_seconds,
                m.peak_mib, m.ok ? "" : ", FAILED", draw.summary.c_str());
    std::fflush(stdout);
    all_ok = all_ok && m.ok;
    walls.push_back(m.wall_seconds);
    cpus.push_back(m.cpu_seconds);
    worst_peak = std::max(worst_peak, m.peak_mib);
  }
  if (!walls.empty()) {
    std::sort(walls.begin(), walls.end());
    std::sort(cpus.begin(), cpus.end());
    std::printf(
        "%zu draws of %d GPUs: worst %.1f s wall (median %.1f s), worst %.1f s CPU (median %.1f s), "
        "worst peak %.0f MiB\n",
        walls.size(), gpus, walls.back(), walls[walls.size() / 2], cpus.back(), cpus[cpus.size() / 2], worst_peak);
  }
  return all_ok ? 0 : 1;
}
