#include "models/collectives/flows.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace gauntlet::models {
namespace {

// Per engine: transfers started by start_flows and not yet delivered, the
// sets that started network transfers, and the end of the latest replay.
struct EngineTraffic {
  long open = 0;
  std::uint64_t launches = 0;
  sim::Nanos replay_end = std::numeric_limits<sim::Nanos>::min();
};

EngineTraffic& traffic_of(const sim::NetworkEngine& engine) {
  static std::unordered_map<const sim::NetworkEngine*, EngineTraffic> traffic;
  return traffic[&engine];
}

std::uint64_t bits(double value) { return std::bit_cast<std::uint64_t>(value); }

void push_state(std::vector<std::uint64_t>& key, const sim::PathState& state) {
  key.push_back(bits(state.bandwidth_factor));
  key.push_back(static_cast<std::uint64_t>(state.extra_latency));
  key.push_back(state.up ? 1 : 0);
}

// Everything a set's outcome on an idle network depends on: its flows, their
// routes and latencies, and the state of every link and endpoint they use.
std::vector<std::uint64_t> outcome_key(const sim::NetworkEngine& engine, const std::vector<Flow>& flows,
                                       int channels) {
  std::vector<std::uint64_t> key;
  key.reserve(flows.size() * 12 + 2);
  key.push_back(static_cast<std::uint64_t>(channels));
  key.push_back(flows.size());
  std::vector<sim::LinkId> links;
  std::vector<sim::EndpointId> endpoints;
  for (const Flow& f : flows) {
    for (int v : {f.from.host, f.to.host, f.from.endpoint, f.to.endpoint}) key.push_back(static_cast<std::uint64_t>(v));
    key.push_back(bits(f.bytes));
    if (f.from.host == f.to.host) continue;
    key.push_back(static_cast<std::uint64_t>(engine.route_latency(f.from.endpoint, f.to.endpoint)));
    if (f.bytes <= 0) continue;
    const std::vector<sim::LinkId> route = engine.route(f.from.endpoint, f.to.endpoint);
    key.push_back(route.size());
    for (sim::LinkId link : route) key.push_back(static_cast<std::uint64_t>(link));
    links.insert(links.end(), route.begin(), route.end());
    endpoints.push_back(f.from.endpoint);
    endpoints.push_back(f.to.endpoint);
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  std::sort(endpoints.begin(), endpoints.end());
  endpoints.erase(std::unique(endpoints.begin(), endpoints.end()), endpoints.end());
  for (sim::LinkId link : links) push_state(key, engine.link_state(link));
  for (sim::EndpointId endpoint : endpoints) push_state(key, engine.endpoint_state(endpoint));
  return key;
}

// A simulated set whose outcome will be stored if nothing disturbed it.
struct Recording {
  FlowOutcomeCache* cache = nullptr;
  std::shared_ptr<FlowOutcomeCache::Entry> entry;
  sim::Nanos start = 0;
  std::uint64_t version = 0;   // the network's state version at the start
  std::uint64_t launches = 0;  // sets launched, this one included
};

}  // namespace

std::shared_ptr<const FlowOutcomeCache::Entry> FlowOutcomeCache::find(const std::vector<std::uint64_t>& key) const {
  for (const auto& entry : entries_)
    if (entry->key == key) return entry;
  return nullptr;
}

void FlowOutcomeCache::store(std::shared_ptr<const Entry> entry) {
  if (capacity_ == 0) return;
  if (entries_.size() >= capacity_) entries_.pop_front();
  entries_.push_back(std::move(entry));
}

sim::Nanos nvlink_time(double bytes) {
  return static_cast<sim::Nanos>(std::llround(bytes / kNvlinkBytesPerSecond * 1e9)) + kNvlinkStepLatency;
}

sim::Nanos flow_latency(const sim::NetworkEngine& engine, const Flow& flow) {
  if (flow.from.host == flow.to.host) return kNvlinkStepLatency;
  return engine.route_latency(flow.from.endpoint, flow.to.endpoint);
}

void start_flows(sim::NetworkEngine& engine, const std::vector<Flow>& flows, int channels,
                 std::function<void(std::size_t, sim::Nanos)> on_flow, std::function<void()> on_all,
                 std::shared_ptr<long> in_flight, const FlowReuse& reuse) {
  struct State {
    std::size_t pending = 0;
    std::vector<int> parts_left;
    std::function<void(std::size_t, sim::Nanos)> on_flow;
    std::function<void()> on_all;
    std::shared_ptr<long> in_flight;
    std::shared_ptr<Recording> recording;
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
  if (state->in_flight) *state->in_flight += static_cast<long>(flows.size());
  const sim::Nanos start = engine.now();
  EngineTraffic& traffic = traffic_of(engine);

  // A set on an idle network with a cached outcome: replay it, all at its
  // last arrival, where the simulated set would call on_all too.
  if (reuse.cache && traffic.open == 0 && start >= traffic.replay_end) {
    std::vector<std::uint64_t> key = outcome_key(engine, flows, channels);
    std::shared_ptr<const FlowOutcomeCache::Entry> cached = reuse.cache->find(key);
    const sim::Nanos quiet = std::min(reuse.quiet_until, engine.next_internal_change());
    if (!cached) reuse.cache->count(false);
    if (cached && start + cached->span < quiet) {
      reuse.cache->count(true);
      traffic.replay_end = start + cached->span;
      engine.schedule_at(start + cached->span, [state, cached, start] {
        for (std::uint32_t i : cached->order) {
          if (state->in_flight) --*state->in_flight;
          state->on_flow(i, start + cached->offsets[i]);
        }
        state->on_all();
      });
      return;
    }
    if (!cached) {
      auto recording = std::make_shared<Recording>();
      recording->cache = reuse.cache;
      recording->entry = std::make_shared<FlowOutcomeCache::Entry>();
      recording->entry->key = std::move(key);
      recording->entry->offsets.assign(flows.size(), 0);
      recording->entry->order.reserve(flows.size());
      recording->start = start;
      recording->version = engine.state_version();
      recording->launches = traffic.launches + 1;
      state->recording = std::move(recording);
    }
  }

  sim::NetworkEngine* engine_key = &engine;
  auto part_done = [state, engine_key](std::size_t i, sim::Nanos at) {
    if (--state->parts_left[i] > 0) return;
    if (state->in_flight) --*state->in_flight;
    if (Recording* r = state->recording.get()) {
      r->entry->offsets[i] = at - r->start;
      r->entry->order.push_back(static_cast<std::uint32_t>(i));
    }
    state->on_flow(i, at);
    if (--state->pending > 0) return;
    // Stored only if the network neither changed nor carried another set
    // meanwhile: then the outcome is this set's alone.
    if (Recording* r = state->recording.get();
        r && r->launches == traffic_of(*engine_key).launches && r->version == engine_key->state_version()) {
      r->entry->span = at - r->start;
      r->cache->store(r->entry);
    }
    state->on_all();
  };
  bool network = false;
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
      network = true;
      state->parts_left[i] = channels;
      for (int c = 0; c < channels; ++c) {
        ++traffic.open;
        engine.start_transfer(f.from.endpoint, f.to.endpoint, f.bytes / channels,
                              [part_done, i, engine_key](sim::Nanos at) {
                                --traffic_of(*engine_key).open;
                                part_done(i, at);
                              });
      }
    }
  }
  if (network) ++traffic.launches;
}

}  // namespace gauntlet::models
