#include "models/ring_allreduce.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models {
namespace {

sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 4;
  s.leaves = 16;
  s.hosts = 32;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  s.rail_optimized = true;
  s.host_link_gbps = 400;
  s.fabric_link_gbps = 400;
  s.link_latency = 2 * sim::kMicrosecond;
  return s;
}

// Allreduce duration over hosts 0..n-1 (GPU 0, rail 0), from a fresh engine.
std::pair<double, double> measure(int n, double bytes, int host_stride) {
  std::string out = sim::run_isolated([&] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 1);
    std::vector<sim::EndpointId> ring;
    for (int i = 0; i < n; ++i) ring.push_back(topology.endpoint(i * host_stride, 0));
    sim::Nanos alpha = 0;
    for (int i = 0; i < n; ++i) alpha = std::max(alpha, engine.route_latency(ring[i], ring[(i + 1) % n]));
    RingResult result;
    start_ring_allreduce(engine, ring, bytes, [&](const RingResult& r) { result = r; });
    engine.run_until(100 * sim::kSecond);
    std::ostringstream o;
    o << result.end - result.start << " " << alpha;
    return o.str();
  });
  std::istringstream in(out);
  double duration, alpha;
  in >> duration >> alpha;
  return {duration, alpha};
}

class RingAllreduceOnIdleFabric : public ::testing::TestWithParam<std::tuple<int, double, int>> {};

TEST_P(RingAllreduceOnIdleFabric, MatchesTheAnalyticalFormula) {
  const auto [n, bytes, stride] = GetParam();
  const double bandwidth = 400e9 / 8;
  const auto [duration, alpha] = measure(n, bytes, stride);
  const double expected_ns = (2.0 * (n - 1) / n * bytes / bandwidth) * 1e9 + 2.0 * (n - 1) * alpha;
  EXPECT_NEAR(duration, expected_ns, 0.02 * expected_ns) << "n=" << n << " bytes=" << bytes;
}

// Stride 1 keeps a ring inside one pod (leaf only); stride 5 crosses pods and
// spines, where ECMP collisions could slow an edge: on an idle fabric with
// one flow per endpoint they must not exceed a link's capacity.
INSTANTIATE_TEST_SUITE_P(SizesAndSpans, RingAllreduceOnIdleFabric,
                         ::testing::Values(std::tuple{2, 64e6, 1}, std::tuple{4, 1e9, 1}, std::tuple{8, 2e9, 1},
                                           std::tuple{16, 1e9, 1}, std::tuple{4, 256e6, 5},
                                           std::tuple{6, 4e9, 5}));

TEST(RingAllreduce, EdgeBytesFollowTheRingVolume) {
  EXPECT_DOUBLE_EQ(ring_edge_bytes(1000, 4), 1500);
  EXPECT_DOUBLE_EQ(ring_edge_bytes(1000, 1), 0);
}

}  // namespace
}  // namespace gauntlet::models
