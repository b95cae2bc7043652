#include "models/collectives/flows.hpp"

#include <algorithm>
#include <cmath>

namespace gauntlet::models {

sim::Nanos nvlink_time(double bytes) {
  return static_cast<sim::Nanos>(std::llround(bytes / kNvlinkBytesPerSecond * 1e9)) + kNvlinkStepLatency;
}

sim::Nanos flow_latency(const sim::NetworkEngine& engine, const Flow& flow) {
  if (flow.from.host == flow.to.host) return kNvlinkStepLatency;
  return engine.route_latency(flow.from.endpoint, flow.to.endpoint);
}

void start_flows(sim::NetworkEngine& engine, const std::vector<Flow>& flows, int channels,
                 std::function<void(std::size_t, sim::Nanos)> on_flow, std::function<void()> on_all,
                 std::shared_ptr<long> in_flight) {
  struct State {
    std::size_t pending = 0;
    std::vector<int> parts_left;
    std::function<void(std::size_t, sim::Nanos)> on_flow;
    std::function<void()> on_all;
    std::shared_ptr<long> in_flight;
  };
  auto state = std::make_shared<State>();
  state->pending = flows.size();
  state->on_flow = std::move(on_flow);
  state->on_all = std::move(on_all);
  state->in_flight = std::move(in_flight);
  channels = std::max(1, channels);
  state->parts_left.assign(flows.size(), 0);
  if (flows.empty()) {
    engine.schedule_at(engine.now(), [state] { state->on_all(); });
    return;
  }
  auto part_done = [state](std::size_t i, sim::Nanos at) {
    if (--state->parts_left[i] > 0) return;
    if (state->in_flight) --*state->in_flight;
    state->on_flow(i, at);
    if (--state->pending == 0) state->on_all();
  };
  if (state->in_flight) *state->in_flight += static_cast<long>(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    if (f.from.host == f.to.host) {
      state->parts_left[i] = 1;
      const sim::Nanos at = engine.now() + nvlink_time(f.bytes);
      engine.schedule_at(at, [part_done, i, at] { part_done(i, at); });
    } else if (f.bytes <= 0) {
      state->parts_left[i] = 1;
      const sim::Nanos at = engine.now() + engine.route_latency(f.from.endpoint, f.to.endpoint);
      engine.schedule_at(at, [part_done, i, at] { part_done(i, at); });
    } else {
      state->parts_left[i] = channels;
      for (int c = 0; c < channels; ++c)
        engine.start_transfer(f.from.endpoint, f.to.endpoint, f.bytes / channels,
                              [part_done, i](sim::Nanos at) { part_done(i, at); });
    }
  }
}

}  // namespace gauntlet::models
