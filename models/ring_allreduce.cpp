#include "models/ring_allreduce.hpp"

#include <algorithm>
#include <memory>

namespace gauntlet::models {

double ring_edge_bytes(double bytes, int n) { return n <= 1 ? 0.0 : 2.0 * (n - 1) / n * bytes; }

void start_ring_allreduce(sim::NetworkEngine& engine, const std::vector<sim::EndpointId>& endpoints, double bytes,
                          std::function<void(const RingResult&)> done) {
  const int n = static_cast<int>(endpoints.size());
  struct State {
    RingResult result;
    int pending = 0;
    sim::Nanos step_latency = 0;  // the slowest edge's one-way latency
    std::function<void(const RingResult&)> done;
  };
  auto state = std::make_shared<State>();
  state->result.start = engine.now();
  state->result.rank_end.assign(static_cast<std::size_t>(n), engine.now());
  state->done = std::move(done);
  const double edge_bytes = ring_edge_bytes(bytes, n);
  for (int i = 0; i < n; ++i) {
    const sim::EndpointId from = endpoints[static_cast<std::size_t>(i)];
    const sim::EndpointId to = endpoints[static_cast<std::size_t>((i + 1) % n)];
    if (n > 1 && from != to) state->step_latency = std::max(state->step_latency, engine.route_latency(from, to));
  }
  // The flows carry the first step's latency themselves; the remaining
  // 2(n-1)-1 steps each add one more.
  const sim::Nanos extra_steps = n > 1 ? (2 * (n - 1) - 1) * state->step_latency : 0;
  auto finish_rank = [state, extra_steps](int position, sim::Nanos at) {
    state->result.rank_end[static_cast<std::size_t>(position)] = at + extra_steps;
    state->result.end = std::max(state->result.end, at + extra_steps);
    if (--state->pending == 0) state->done(state->result);
  };
  state->pending = n;
  for (int i = 0; i < n; ++i) {
    const sim::EndpointId from = endpoints[static_cast<std::size_t>(i)];
    const sim::EndpointId to = endpoints[static_cast<std::size_t>((i + 1) % n)];
    const int receiver = (i + 1) % n;
    if (n <= 1 || from == to) {
      engine.schedule_at(engine.now(), [finish_rank, receiver, &engine] { finish_rank(receiver, engine.now()); });
    } else {
      engine.start_transfer(from, to, edge_bytes, [finish_rank, receiver](sim::Nanos at) { finish_rank(receiver, at); });
    }
  }
}

}  // namespace gauntlet::models
