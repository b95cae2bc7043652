#include "bench/scale_scenarios.hpp"

#include <sstream>
#include <stdexcept>
#include <vector>

#include "harness/soak/scenario_generator.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "sim/rng.hpp"
#include "sim/topology.hpp"

namespace gauntlet::bench {
namespace {

constexpr int kGpusPerHost = 8;  // one RNIC per GPU, as the shipped scale scenarios
constexpr int kBaseGpus = 16'384;

int between(sim::Rng& rng, int low, int high) {
  return low + static_cast<int>(rng.below(static_cast<std::uint64_t>(high - low + 1)));
}

template <typename T>
T pick(sim::Rng& rng, const std::vector<T>& items) {
  return items[rng.below(items.size())];
}

// Faults from two minutes in to a minute before the end, 30 s to 15 min long.
harness::soak::FaultWindow hour_window() {
  harness::soak::FaultWindow w;
  w.unit = "s";
  w.at_low = 120;
  w.at_high = 3000;
  w.length_low = 30;
  w.length_high = 900;
  w.end = 3540;
  return w;
}

}  // namespace

ScaleDraw scale_scenario(std::uint64_t seed, std::uint64_t draw, int gpus) {
  if (gpus < kBaseGpus || gpus % kBaseGpus != 0)
    throw std::invalid_argument("scale draws take a multiple of 16384 GPUs, not " + std::to_string(gpus));
  sim::Rng rng(sim::mix_seed(seed, "scale-draw", draw));
  const int factor = gpus / kBaseGpus;
  sim::ClusterShape c;
  c.hosts = gpus / kGpusPerHost;
  c.gpus_per_host = c.rnics_per_host = kGpusPerHost;
  c.rail_optimized = true;
  c.leaves = pick(rng, std::vector<int>{128, 256, 512, 1024}) * factor;  // pods of 128 down to 16 hosts
  c.spines = pick(rng, std::vector<int>{8, 16});
  const int tp = pick(rng, std::vector<int>{2, 4, 8});
  const int pp = pick(rng, std::vector<int>{1, 2, 4, 8, 16});
  const int dp = gpus / (tp * pp);
  const int microbatches = between(rng, 4, 32);
  const int gradient_mb = between(rng, 4, 32) * 250;  // 1 to 8 GB
  const int activation_mb = between(rng, 1, 8) * 32;  // 32 to 256 MB
  const int compute_ms = between(rng, 8, 20) * 500;   // 4 to 10 s
  std::ostringstream y;
  y << "name: scale-draw-" << gpus << "-" << seed << "-" << draw << "\n"
    << "seed: " << between(rng, 1, 1000) << "\nduration: 1h\nengine: flow\n"
    << "cluster:\n  spines: " << c.spines << "\n  leaves: " << c.leaves << "\n  hosts: " << c.hosts
    << "\n  gpus_per_host: " << c.gpus_per_host << "\n  rnics_per_host: " << c.rnics_per_host
    << "\n  rail_optimized: true\n  host_link_gbps: 400\n  fabric_link_gbps: 400\n  link_latency: 1us\n"
    << "job:\n  name: draw\n  gpus: " << gpus << "\n  parallelism: {tp: " << tp << ", pp: " << pp << ", dp: " << dp
    << ", ep: 1}\n  compute_per_iteration: " << compute_ms << "ms\n  gradient_bytes: " << gradient_mb
    << "MB\n  activation_bytes: " << activation_mb << "MB\n  microbatches: " << microbatches
    << "\n  checkpoint_interval: " << between(rng, 2, 6) * 10 << "m\n  restart_cost: " << between(rng, 2, 10) << "m\n";
  const sim::Topology topology(c);
  const std::string faults =
      harness::soak::random_faults_yaml(sim::mix_seed(seed, "scale-draw-faults", draw),
                                        injectors::builtin_fault_catalog(), topology, c.hosts, hour_window(), 1, 6);
  y << faults << "detectors: [timeout, falcon, c4d, eroica, skeleton, pingmesh]\n";
  std::ostringstream line;
  int fault_count = 0;
  for (std::size_t at = faults.find("type: "); at != std::string::npos; at = faults.find("type: ", at + 1))
    ++fault_count;
  line << c.leaves << " leaves, " << c.spines << " spines, tp " << tp << " pp " << pp << " dp " << dp << ", "
       << microbatches << " micro-batches, " << gradient_mb << " MB gradients, " << activation_mb << " MB activations, "
       << fault_count << " faults";
  return {y.str(), line.str()};
}

}  // namespace gauntlet::bench
