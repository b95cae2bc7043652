#include "models/ring_allreduce.hpp"

#include <algorithm>

namespace gauntlet::models {

std::string_view ring_op_name(RingOp op) {
  switch (op) {
    case RingOp::allreduce:
      return "allreduce";
    case RingOp::reduce_scatter:
      return "reduce_scatter";
    case RingOp::allgather:
      return "allgather";
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

void start_rings(sim::NetworkEngine& engine, const std::vector<std::vector<FlowEnd>>& rings, RingOp op, double bytes,
                 int channels, std::function<void(std::size_t, const RingResult&)> done,
                 std::shared_ptr<long> in_flight, const FlowReuse& reuse) {
  struct Ring {
    RingResult result;
    std::size_t first_flow = 0;
    std::size_t edges_left = 0;
    sim::Nanos extra_steps = 0;
  };
  auto state = std::make_shared<std::vector<Ring>>(rings.size());
  auto finish = std::make_shared<std::function<void(std::size_t, const RingResult&)>>(std::move(done));
  std::vector<Flow> flows;
  std::vector<std::size_t> ring_of;  // per flow
  for (std::size_t k = 0; k < rings.size(); ++k) {
    const std::vector<FlowEnd>& ring = rings[k];
    const int n = static_cast<int>(ring.size());
    Ring& r = (*state)[k];
    r.result.start = r.result.end = engine.now();
    r.result.rank_end.assign(ring.size(), engine.now());
    r.first_flow = flows.size();
    if (n <= 1) {
      engine.schedule_at(engine.now(), [state, finish, k] { (*finish)(k, (*state)[k].result); });
      continue;
    }
    sim::Nanos step_latency = 0;  // the slowest edge's one-way latency
    const double edge_bytes = ring_edge_bytes(op, bytes, n);
    for (int i = 0; i < n; ++i) {
      Flow f{ring[static_cast<std::size_t>(i)], ring[static_cast<std::size_t>((i + 1) % n)], edge_bytes};
      step_latency = std::max(step_latency, flow_latency(engine, f));
      flows.push_back(f);
      ring_of.push_back(k);
    }
    // The flows carry the first step's latency themselves; each further step
    // adds one more.
    r.extra_steps = (ring_steps(op, n) - 1) * step_latency;
    r.edges_left = static_cast<std::size_t>(n);
  }
  if (flows.empty()) return;
  start_flows(
      engine, flows, channels,
      [state, finish, ring_of = std::move(ring_of)](std::size_t i, sim::Nanos at) {
        const std::size_t k = ring_of[i];
        Ring& r = (*state)[k];
        const std::size_t n = r.result.rank_end.size();
        const sim::Nanos end = at + r.extra_steps;
        r.result.rank_end[(i - r.first_flow + 1) % n] = end;
        r.result.end = std::max(r.result.end, end);
        if (--r.edges_left == 0) (*finish)(k, r.result);
      },
      [] {}, std::move(in_flight), reuse);
}

void start_ring(sim::NetworkEngine& engine, const std::vector<FlowEnd>& ring, RingOp op, double bytes, int channels,
                std::function<void(const RingResult&)> done, std::shared_ptr<long> in_flight) {
  start_rings(
      engine, {ring}, op, bytes, channels, [done = std::move(done)](std::size_t, const RingResult& r) { done(r); },
      std::move(in_flight));
}

void start_ring_stepwise(sim::NetworkEngine& engine, const std::vector<FlowEnd>& ring, RingOp op, double bytes,
                         int channels, std::function<void(const RingResult&)> done) {
  struct Steps {
    RingResult result;
    int left = 0;
    std::vector<Flow> flows;
    int channels = 1;
    std::function<void(const RingResult&)> done;
    std::function<void()> next;
  };
  const int n = static_cast<int>(ring.size());
  auto steps = std::make_shared<Steps>();
  steps->result.start = steps->result.end = engine.now();
  steps->result.rank_end.assign(ring.size(), engine.now());
  steps->left = ring_steps(op, n);
  steps->channels = channels;
  steps->done = std::move(done);
  if (steps->left == 0) {
    engine.schedule_at(engine.now(), [steps] { steps->done(steps->result); });
    return;
  }
  const double chunk = bytes / n;
  for (int i = 0; i < n; ++i)
    steps->flows.push_back({ring[static_cast<std::size_t>(i)], ring[static_cast<std::size_t>((i + 1) % n)], chunk});
  sim::NetworkEngine* e = &engine;
  // Each step holds the one after it; the chain is broken at the last step.
  steps->next = [steps, e, n] {
    const bool last = --steps->left == 0;
    start_flows(
        *e, steps->flows, steps->channels,
        [steps, last, n](std::size_t i, sim::Nanos at) {
          if (!last) return;
          steps->result.rank_end[(i + 1) % static_cast<std::size_t>(n)] = at;
          steps->result.end = std::max(steps->result.end, at);
        },
        [steps, last] {
          if (!last) {
            steps->next();
            return;
          }
          steps->next = nullptr;
          steps->done(steps->result);
        });
  };
  steps->next();
}

void start_ring_allreduce(sim::NetworkEngine& engine, const std::vector<sim::EndpointId>& endpoints, double bytes,
                          std::function<void(const RingResult&)> done) {
  std::vector<FlowEnd> ring;
  for (sim::EndpointId e : endpoints) ring.push_back({engine.topology().host_of(e), e});
  start_ring(engine, ring, RingOp::allreduce, bytes, 1, std::move(done));
}

}  // namespace gauntlet::models
