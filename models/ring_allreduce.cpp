#include "models/ring_allreduce.hpp"

#include <algorithm>

namespace gauntlet::models {

std::string_view ring_op_name(RingOp op) {
  switch (op) {
    case RingOp::allreduce: return "allreduce";
    case RingOp::reduce_scatter: return "reduce_scatter";
    case RingOp::allgather: return "allgather";
  }
  return "allreduce";
}

double ring_edge_bytes(double bytes, int n) { return ring_edge_bytes(RingOp::allreduce, bytes, n); }

double ring_edge_bytes(RingOp op, double bytes, int n) {
  if (n <= 1) return 0.0;
  const double share = static_cast<double>(n - 1) / n * bytes;
  return op == RingOp::allreduce ? 2.0 * share : share;
}

int ring_steps(RingOp op, int n) {
  if (n <= 1) return 0;
  return op == RingOp::allreduce ? 2 * (n - 1) : n - 1;
}

void start_ring(sim::NetworkEngine& engine, const std::vector<FlowEnd>& ring, RingOp op, double bytes, int channels,
                std::function<void(const RingResult&)> done, std::shared_ptr<long> in_flight) {
  const int n = static_cast<int>(ring.size());
  auto result = std::make_shared<RingResult>();
  result->start = engine.now();
  result->end = engine.now();
  result->rank_end.assign(static_cast<std::size_t>(n), engine.now());
  if (n <= 1) {
    engine.schedule_at(engine.now(), [result, done = std::move(done)] { done(*result); });
    return;
  }
  std::vector<Flow> flows;
  sim::Nanos step_latency = 0;  // the slowest edge's one-way latency
  const double edge_bytes = ring_edge_bytes(op, bytes, n);
  for (int i = 0; i < n; ++i) {
    Flow f{ring[static_cast<std::size_t>(i)], ring[static_cast<std::size_t>((i + 1) % n)], edge_bytes};
    step_latency = std::max(step_latency, flow_latency(engine, f));
    flows.push_back(f);
  }
  // The flows carry the first step's latency themselves; each further step
  // adds one more.
  const sim::Nanos extra_steps = (ring_steps(op, n) - 1) * step_latency;
  start_flows(
      engine, flows, channels,
      [result, n, extra_steps](std::size_t i, sim::Nanos at) {
        const sim::Nanos end = at + extra_steps;
        result->rank_end[(i + 1) % static_cast<std::size_t>(n)] = end;
        result->end = std::max(result->end, end);
      },
      [result, done = std::move(done)] { done(*result); }, std::move(in_flight));
}

void start_ring_allreduce(sim::NetworkEngine& engine, const std::vector<sim::EndpointId>& endpoints, double bytes,
                          std::function<void(const RingResult&)> done) {
  std::vector<FlowEnd> ring;
  for (sim::EndpointId e : endpoints) ring.push_back({engine.topology().host_of(e), e});
  start_ring(engine, ring, RingOp::allreduce, bytes, 1, std::move(done));
}

}  // namespace gauntlet::models
