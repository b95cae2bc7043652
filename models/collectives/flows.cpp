#include "models/collectives/flows.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models {
namespace {

// Per engine: transfers started by start_flows and not yet delivered, the
// sets that started network transfers, and the end of the latest replay.
struct EngineTraffic {
  long open = 0;
  std::uint64_t launches = 0;
  sim::Nanos replay_end = std::numeric_limits<sim::Nanos>::min();
  ReplayObserver replay_observer;
};

EngineTraffic& traffic_of(const sim::NetworkEngine& engine) {
  static std::unordered_map<const sim::NetworkEngine*, EngineTraffic> traffic;
  return traffic[&engine];
}

std::uint64_t bits(double value) { return std::bit_cast<std::uint64_t>(value); }

}  // namespace

void set_replay_observer(const sim::NetworkEngine& engine, ReplayObserver observer) {
  traffic_of(engine).replay_observer = std::move(observer);
}

namespace {

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

std::size_t find_root(std::vector<std::size_t>& parent, std::size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// The flows' groups: flows sharing a link direction or a flow table
// direction are in one group, transitively. Groups are listed by their
// first flow; flows that never touch the network are left out.
std::vector<std::vector<std::size_t>> sharing_groups(const sim::NetworkEngine& engine, const std::vector<Flow>& flows) {
  const sim::Topology& t = engine.topology();
  const auto links = static_cast<std::size_t>(t.links());
  std::vector<std::size_t> parent(flows.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::unordered_map<std::size_t, std::size_t> holder;  // resource -> a flow using it
  auto use = [&](std::size_t resource, std::size_t flow) {
    auto [it, fresh] = holder.emplace(resource, flow);
    if (!fresh) parent[find_root(parent, flow)] = find_root(parent, it->second);
  };
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    if (f.from.host == f.to.host || f.bytes <= 0) continue;
    const std::vector<sim::LinkId> route = engine.route(f.from.endpoint, f.to.endpoint);
    // The first half of a route climbs (RNIC to leaf to spine), the rest descends.
    for (std::size_t k = 0; k < route.size(); ++k)
      use(static_cast<std::size_t>(route[k]) * 2 + (2 * k < route.size() ? 1 : 0), i);
    use(2 * links + static_cast<std::size_t>(f.from.endpoint) * 2 + 1, i);
    use(2 * links + static_cast<std::size_t>(f.to.endpoint) * 2, i);
  }
  std::vector<std::vector<std::size_t>> groups;
  std::unordered_map<std::size_t, std::size_t> group_of_root;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    if (f.from.host == f.to.host || f.bytes <= 0) continue;
    auto [it, fresh] = group_of_root.emplace(find_root(parent, i), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

// Simulates the set group by group in a forked copy of the engine (see
// FlowReuse); nothing if a group is not done within `limit` of its start.
std::optional<std::vector<sim::Nanos>> simulate_apart(sim::FlowEngine& engine, const std::vector<Flow>& flows,
                                                      int channels, sim::Nanos limit) {
  const std::vector<std::vector<std::size_t>> groups = sharing_groups(engine, flows);
  std::string text;
  try {
    text = sim::run_isolated([&]() -> std::string {
      engine.drop_timers();
      std::vector<sim::Nanos> offsets(flows.size(), 0);
      for (std::size_t i = 0; i < flows.size(); ++i) {
        const Flow& f = flows[i];
        if (f.from.host == f.to.host) offsets[i] = nvlink_time(f.bytes);
        else if (f.bytes <= 0) offsets[i] = engine.route_latency(f.from.endpoint, f.to.endpoint);
      }
      std::vector<int> parts_left(flows.size(), channels);
      for (const std::vector<std::size_t>& group : groups) {
        const sim::Nanos begin = engine.now();
        std::size_t left = group.size();
        for (std::size_t i : group)
          for (int c = 0; c < channels; ++c)
            engine.start_transfer(flows[i].from.endpoint, flows[i].to.endpoint, flows[i].bytes / channels,
                                  [&, i, begin](sim::Nanos at) {
                                    if (--parts_left[i] > 0) return;
                                    offsets[i] = at - begin;
                                    --left;
                                  });
        for (sim::Nanos step = sim::kMillisecond; left > 0; step = std::min(2 * step, sim::kDay)) {
          if (engine.now() - begin > limit) return "unfinished";
          engine.run_until(engine.now() + step);
        }
      }
      std::ostringstream o;
      o << "done";
      for (sim::Nanos offset : offsets) o << " " << offset;
      return o.str();
    });
  } catch (const std::exception&) {
    return std::nullopt;  // the set is then simulated in place
  }
  std::istringstream in(text);
  std::string status;
  in >> status;
  if (status != "done") return std::nullopt;
  std::vector<sim::Nanos> offsets(flows.size(), 0);
  for (sim::Nanos& offset : offsets) in >> offset;
  if (!in) return std::nullopt;
  return offsets;
}

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
    const auto network_flows = static_cast<std::size_t>(std::count_if(
        flows.begin(), flows.end(), [](const Flow& f) { return f.from.host != f.to.host && f.bytes > 0; }));
    auto* flow_engine = dynamic_cast<sim::FlowEngine*>(&engine);
    if (!cached && flow_engine && network_flows >= reuse.apart_from && quiet > start) {
      if (auto offsets = simulate_apart(*flow_engine, flows, channels, quiet - start)) {
        auto entry = std::make_shared<FlowOutcomeCache::Entry>();
        entry->key = std::move(key);
        entry->offsets = std::move(*offsets);
        entry->order.resize(flows.size());
        std::iota(entry->order.begin(), entry->order.end(), 0u);
        std::stable_sort(entry->order.begin(), entry->order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return entry->offsets[a] < entry->offsets[b]; });
        entry->span = entry->offsets[entry->order.back()];
        reuse.cache->store(entry);
        cached = entry;
        key = entry->key;
      }
    }
    if (cached && start + cached->span < quiet) {
      reuse.cache->count(true);
      traffic.replay_end = start + cached->span;
      if (traffic.replay_observer) traffic.replay_observer(flows, channels, start, cached->offsets);
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
