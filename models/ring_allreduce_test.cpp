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
                                           std::tuple{16, 1e9, 1}, std::tuple{4, 256e6, 5}, std::tuple{6, 4e9, 5}));

// The ring run step by step costs 2(n-1) steps of S/n at line rate, each
// with its latency; the concurrent-edge form must agree with it (they move
// the same bytes over the same edges), which is what lets runs use the
// cheaper one.
TEST(RingAllreduce, StepwiseRingMatchesItsFormulaAndTheConcurrentForm) {
  const int n = 6;
  const double bytes = 1e9;
  const double bandwidth = 400e9 / 8;
  const std::string out = sim::run_isolated([&] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 1);
    std::vector<FlowEnd> ring;
    for (int i = 0; i < n; ++i) ring.push_back({i * 5, topology.endpoint(i * 5, 0)});  // crosses pods
    sim::Nanos alpha = 0;
    for (int i = 0; i < n; ++i)
      alpha = std::max(alpha, engine.route_latency(ring[i].endpoint, ring[(i + 1) % n].endpoint));
    RingResult concurrent, stepwise;
    start_ring(engine, ring, RingOp::allreduce, bytes, 1, [&](const RingResult& r) { concurrent = r; });
    engine.run_until(10 * sim::kSecond);
    start_ring_stepwise(engine, ring, RingOp::allreduce, bytes, 1, [&](const RingResult& r) { stepwise = r; });
    engine.run_until(20 * sim::kSecond);
    std::ostringstream o;
    o << concurrent.end - concurrent.start << " " << stepwise.end - stepwise.start << " " << alpha << " "
      << stepwise.rank_end.size();
    return o.str();
  });
  std::istringstream in(out);
  double concurrent, stepwise, alpha;
  std::size_t ranks = 0;
  in >> concurrent >> stepwise >> alpha >> ranks;
  const double steps = 2.0 * (n - 1);
  const double expected = steps * (bytes / n / bandwidth * 1e9 + alpha);
  EXPECT_EQ(ranks, static_cast<std::size_t>(n));
  EXPECT_NEAR(stepwise, expected, 0.01 * expected);
  EXPECT_NEAR(concurrent, stepwise, 0.03 * stepwise);
}

TEST(RingAllreduce, EdgeBytesFollowTheRingVolume) {
  EXPECT_DOUBLE_EQ(ring_edge_bytes(1000, 4), 1500);
  EXPECT_DOUBLE_EQ(ring_edge_bytes(1000, 1), 0);
}

}  // namespace
}  // namespace gauntlet::models
