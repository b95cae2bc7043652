// The packet engine's speed on a 16-host ring allreduce (8 rails, 128 RNICs,
// each ring edge one flow carrying 2(n-1)/n of the rail's gradient, as the
// job's collectives issue it): ns-3 events and packet hops per second of
// wall time, and the same ring on the flow engine for the wall-time ratio.
// Each engine runs in its own process (SimGrid and ns-3 are per-process).
//   build/bench/bench_packet_engine
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <sstream>
#include <type_traits>

#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"
#include "sim/packet/packet_engine.hpp"

namespace gauntlet {
namespace {

sim::ClusterShape demo_cluster() {
  sim::ClusterShape s;
  s.spines = 4;
  s.leaves = 16;
  s.hosts = 16;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  s.rail_optimized = true;
  return s;
}

struct RingRun {
  double wall_seconds = 0;
  double cpu_seconds = 0;  // the child's own, unaffected by a busy machine
  double events = 0;
  double hops = 0;
  double finished_ns = 0;
};

// Starts every edge of the eight rail rings at once and runs to the last.
template <typename Engine>
RingRun run_ring(double gradient_bytes) {
  const std::string text = sim::run_isolated([gradient_bytes] {
    const sim::Topology topology(demo_cluster());
    const auto began = std::chrono::steady_clock::now();
    const std::clock_t cpu_began = std::clock();
    Engine engine(topology, 7);
    const int n = topology.hosts();
    const double edge_bytes = 2.0 * (n - 1) / n * gradient_bytes;
    sim::Nanos last = 0;
    for (int nic = 0; nic < topology.shape().rnics_per_host; ++nic)
      for (int h = 0; h < n; ++h)
        engine.start_transfer(topology.endpoint(h, nic), topology.endpoint((h + 1) % n, nic), edge_bytes,
                              [&last](sim::Nanos at) { last = std::max(last, at); });
    engine.run_until(10 * sim::kSecond);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    const double cpu = static_cast<double>(std::clock() - cpu_began) / CLOCKS_PER_SEC;
    double events = 0, hops = 0;
    if constexpr (std::is_same_v<Engine, sim::PacketEngine>) {
      events = static_cast<double>(engine.events_executed());
      hops = static_cast<double>(engine.packet_hops());
    }
    std::ostringstream out;
    out << wall << ' ' << cpu << ' ' << events << ' ' << hops << ' ' << last;
    return out.str();
  });
  std::istringstream in(text);
  RingRun r;
  in >> r.wall_seconds >> r.cpu_seconds >> r.events >> r.hops >> r.finished_ns;
  return r;
}

void BM_packet_ring_allreduce(benchmark::State& state) {
  const double gradient = static_cast<double>(state.range(0)) * 1024;
  RingRun packet;
  for (auto _ : state) packet = run_ring<sim::PacketEngine>(gradient);
  state.counters["events_per_s"] = packet.events / packet.wall_seconds;
  state.counters["hops_per_s"] = packet.hops / packet.wall_seconds;
  state.counters["events_per_cpu_s"] = packet.events / packet.cpu_seconds;
  state.counters["hops_per_cpu_s"] = packet.hops / packet.cpu_seconds;
  state.counters["events"] = packet.events;
  state.counters["simulated_us"] = packet.finished_ns / 1e3;
}
BENCHMARK(BM_packet_ring_allreduce)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_flow_vs_packet_ring_allreduce(benchmark::State& state) {
  const double gradient = static_cast<double>(state.range(0)) * 1024;
  RingRun flow, packet;
  for (auto _ : state) {
    flow = run_ring<sim::FlowEngine>(gradient);
    packet = run_ring<sim::PacketEngine>(gradient);
  }
  state.counters["flow_wall_s"] = flow.wall_seconds;
  state.counters["packet_wall_s"] = packet.wall_seconds;
  state.counters["packet_over_flow"] = packet.wall_seconds / flow.wall_seconds;
  state.counters["packet_over_flow_cpu"] = packet.cpu_seconds / flow.cpu_seconds;
  state.counters["finish_ratio"] = packet.finished_ns / flow.finished_ns;  // simulated time, packet / flow
}
BENCHMARK(BM_flow_vs_packet_ring_allreduce)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace
}  // namespace gauntlet

BENCHMARK_MAIN();
