#include "models/collectives/flows.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>

#include "sim/contract.hpp"
#include "sim/transport_stalls.hpp"

namespace gauntlet::models {
namespace {

std::uint64_t bits(double value) { return std::bit_cast<std::uint64_t>(value); }

bool on_network(const Flow& f) { return f.from.host != f.to.host && f.bytes > 0; }

void push_state(std::vector<std::uint64_t>& key, const sim::PathState& state) {
  key.push_back(bits(state.bandwidth_factor));
  key.push_back(static_cast<std::uint64_t>(state.extra_latency));
  key.push_back(state.up ? 1 : 0);
}

// Everything a set's outcome on an idle network depends on: its flows, their
// routes and latencies, the state of every link and endpoint they use, and
// the engine's salt for anything else.
std::vector<std::uint64_t> outcome_key(const sim::NetworkEngine& engine, const std::vector<Flow>& flows, int channels) {
  std::vector<std::uint64_t> key;
  key.reserve(flows.size() * 12 + 2);
  key.push_back(static_cast<std::uint64_t>(channels));
  key.push_back(flows.size());
  key.push_back(engine.outcome_salt());
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
  std::uint64_t version = 0;  // the network's state version at the start
  std::uint64_t started = 0;  // transfers the engine had started once this set's were
};

// Each flow's last byte's arrival after the start, from the engine's
// simulation of the set apart (see FlowReuse), or nothing if it declines.
// NVLink edges and empty flows never reach the network: their times are
// known without it.
std::optional<std::vector<sim::Nanos>> simulate_apart(sim::NetworkEngine& engine, const std::vector<Flow>& flows,
                                                      int channels, sim::Nanos limit) {
  std::vector<sim::TransferRequest> transfers;
  std::vector<std::size_t> flow_of;  // per transfer
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (!on_network(flows[i])) continue;
    for (int c = 0; c < channels; ++c) {
      transfers.push_back({flows[i].from.endpoint, flows[i].to.endpoint, flows[i].bytes / channels});
      flow_of.push_back(i);
    }
  }
  const std::optional<std::vector<sim::Nanos>> arrivals = engine.simulate_apart(transfers, limit);
  if (!arrivals) return std::nullopt;
  GAUNTLET_INVARIANT(arrivals->size() == transfers.size());
  std::vector<sim::Nanos> offsets(flows.size(), 0);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    if (f.from.host == f.to.host)
      offsets[i] = nvlink_time(f.bytes);
    else if (f.bytes <= 0)
      offsets[i] = engine.route_latency(f.from.endpoint, f.to.endpoint);
  }
  // A flow is done when its last channel is.
  for (std::size_t t = 0; t < transfers.size(); ++t)
    offsets[flow_of[t]] = std::max(offsets[flow_of[t]], (*arrivals)[t]);
  return offsets;
}

// What the engine's replay observers are told of a replayed set: its
// network flows, each delivered at its recorded offset.
sim::ReplayedSet replayed_set(const std::vector<Flow>& flows, sim::Nanos start,
                              const FlowOutcomeCache::Entry& outcome) {
  sim::ReplayedSet set;
  set.start = start;
  set.end = start + outcome.span;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (!on_network(flows[i])) continue;
    set.transfers.push_back({flows[i].from.endpoint, flows[i].to.endpoint, flows[i].bytes});
    set.delivered.push_back(start + outcome.offsets[i]);
  }
  return set;
}

}  // namespace

std::shared_ptr<const FlowOutcomeCache::Entry> FlowOutcomeCache::find(const std::vector<std::uint64_t>& key) const {
  for (const auto& entry : entries_)
    if (entry->key == key) return entry;
  return nullptr;
}

void FlowOutcomeCache::store(std::shared_ptr<const Entry> entry) {
  // A stored outcome orders every flow of its set, each once.
  GAUNTLET_INVARIANT(
      entry->order.size() == entry->offsets.size() && entry->span >= 0,
      std::to_string(entry->order.size()) + " of " + std::to_string(entry->offsets.size()) + " flows ordered");
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

namespace {

// One started set: what is left of it and whom to tell.
struct FlowSetState {
  std::size_t pending = 0;      // flows not done
  std::vector<int> parts_left;  // per flow: channels not done
  std::function<void(std::size_t, sim::Nanos)> on_flow;
  std::function<void()> on_all;
  std::shared_ptr<long> in_flight;
  std::shared_ptr<Recording> recording;
  // Set when the engine draws retransmission-timeout stalls: each flow is
  // then told at its last byte's arrival plus its stall, all at the latest.
  sim::TransportStalls* stalls = nullptr;
  std::vector<sim::Nanos> arrivals;  // per flow, without stalls
};

// The engine that draws stalls, if it draws any now.
sim::TransportStalls* drawing_stalls(sim::NetworkEngine& engine) {
  auto* stalls = dynamic_cast<sim::TransportStalls*>(&engine);
  return stalls && stalls->draws_stalls() ? stalls : nullptr;
}

// The set's flows arrived at `arrivals` (their last bytes): each network
// flow draws the stalls of its channels' transfers (the slowest channel's
// is its own), and every flow is told at its arrival plus its stall, in
// that order, once the last is due, as a replayed set is.
void tell_stalled(sim::NetworkEngine& engine, const std::vector<Flow>& flows, int channels,
                  const std::shared_ptr<FlowSetState>& state) {
  std::vector<sim::Nanos> at = state->arrivals;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (!on_network(flows[i])) continue;
    sim::Nanos stall = 0;
    for (int c = 0; c < channels; ++c)
      stall = std::max(
          stall, state->stalls->draw_stall(flows[i].from.endpoint, flows[i].to.endpoint, flows[i].bytes / channels));
    at[i] += stall;
  }
  std::vector<std::size_t> order(flows.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return at[a] < at[b]; });
  const sim::Nanos last = std::max(engine.now(), at[order.back()]);
  engine.schedule_at(last, [state, at = std::move(at), order = std::move(order)] {
    for (std::size_t i : order) state->on_flow(i, at[i]);
    state->on_all();
  });
}

void flow_left(FlowSetState& state) {
  if (!state.in_flight) return;
  --*state.in_flight;
  GAUNTLET_INVARIANT(*state.in_flight >= 0);
}

// The set's outcome: cached, or computed apart by the engine (then cached);
// null if neither. `key` is the set's outcome key.
std::shared_ptr<const FlowOutcomeCache::Entry> known_outcome(sim::NetworkEngine& engine, const std::vector<Flow>& flows,
                                                             int channels, const FlowReuse& reuse,
                                                             const std::vector<std::uint64_t>& key, sim::Nanos start,
                                                             sim::Nanos quiet) {
  if (std::shared_ptr<const FlowOutcomeCache::Entry> cached = reuse.cache->find(key)) return cached;
  reuse.cache->count(false);
  const auto network_flows = static_cast<std::size_t>(std::count_if(flows.begin(), flows.end(), on_network));
  if (network_flows < reuse.apart_from || quiet <= start) return nullptr;
  std::optional<std::vector<sim::Nanos>> offsets;
  if (reuse.archive) offsets = reuse.archive->find(key, flows.size());
  if (!offsets) {
    offsets = simulate_apart(engine, flows, channels, quiet - start);
    if (offsets && reuse.archive) reuse.archive->store(key, *offsets);
  }
  if (!offsets) return nullptr;
  auto entry = std::make_shared<FlowOutcomeCache::Entry>();
  entry->key = key;
  entry->offsets = std::move(*offsets);
  entry->order.resize(flows.size());
  std::iota(entry->order.begin(), entry->order.end(), 0u);
  std::stable_sort(entry->order.begin(), entry->order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return entry->offsets[a] < entry->offsets[b]; });
  entry->span = entry->offsets[entry->order.back()];
  // Every flow arrives after the set starts (offsets sorted in `order`).
  GAUNTLET_INVARIANT(entry->offsets[entry->order.front()] >= 0, "a flow arrived before its set started");
  reuse.cache->store(entry);
  return entry;
}

// Every flow at its recorded offset, told all at the last arrival.
void replay(sim::NetworkEngine& engine, sim::ReplayLedger& ledger, const std::vector<Flow>& flows, int channels,
            std::shared_ptr<FlowSetState> state, std::shared_ptr<const FlowOutcomeCache::Entry> cached,
            const FlowReuse& reuse, sim::Nanos start) {
  // Equal keys hold equal flow lists, so the outcome fits this set.
  GAUNTLET_INVARIANT(cached->offsets.size() == flows.size() && cached->order.size() == flows.size());
  reuse.cache->count(true);
  ledger.record(replayed_set(flows, start, *cached));
  if (state->stalls) {
    sim::NetworkEngine* network_engine = &engine;
    engine.schedule_at(start + cached->span, [state, cached, start, network_engine, flows, channels] {
      for (std::size_t i = 0; i < flows.size(); ++i) {
        flow_left(*state);
        state->arrivals[i] = start + cached->offsets[i];
      }
      tell_stalled(*network_engine, flows, channels, state);
    });
    return;
  }
  engine.schedule_at(start + cached->span, [state, cached, start] {
    for (std::uint32_t i : cached->order) {
      flow_left(*state);
      state->on_flow(i, start + cached->offsets[i]);
    }
    state->on_all();
  });
}

std::shared_ptr<Recording> new_recording(FlowOutcomeCache* cache, std::vector<std::uint64_t> key, std::size_t flows,
                                         sim::Nanos start, std::uint64_t version) {
  auto recording = std::make_shared<Recording>();
  recording->cache = cache;
  recording->entry = std::make_shared<FlowOutcomeCache::Entry>();
  recording->entry->key = std::move(key);
  recording->entry->offsets.assign(flows, 0);
  recording->entry->order.reserve(flows);
  recording->start = start;
  recording->version = version;
  return recording;
}

// Each flow on NVLink, as a bare latency or over the network, in channels.
void simulate_flows(sim::NetworkEngine& engine, sim::ReplayLedger* ledger, const std::vector<Flow>& flows, int channels,
                    std::shared_ptr<FlowSetState> state) {
  sim::NetworkEngine* network_engine = &engine;
  // Only a set whose flows draw stalls keeps its flows to tell them later.
  std::shared_ptr<const std::vector<Flow>> kept =
      state->stalls ? std::make_shared<const std::vector<Flow>>(flows) : nullptr;
  auto part_done = [state, network_engine, ledger, kept, channels](std::size_t i, sim::Nanos at) {
    // A channel done twice would tell of its flow twice.
    GAUNTLET_INVARIANT(state->parts_left[i] > 0 && state->pending > 0, "flow " + std::to_string(i) + " done twice");
    if (--state->parts_left[i] > 0) return;
    flow_left(*state);
    if (Recording* r = state->recording.get()) {
      r->entry->offsets[i] = at - r->start;
      r->entry->order.push_back(static_cast<std::uint32_t>(i));
    }
    if (kept)
      state->arrivals[i] = at;
    else
      state->on_flow(i, at);
    if (--state->pending > 0) return;
    // Stored only if the network neither changed nor carried another
    // transfer meanwhile: then the outcome is this set's alone (the stalls,
    // drawn after, are not part of it).
    if (Recording* r = state->recording.get();
        r && r->started == ledger->transfers_started() && r->version == network_engine->state_version()) {
      r->entry->span = at - r->start;
      r->cache->store(r->entry);
    }
    if (kept)
      tell_stalled(*network_engine, *kept, channels, state);
    else
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
      for (int c = 0; c < channels; ++c)
        engine.start_transfer(f.from.endpoint, f.to.endpoint, f.bytes / channels,
                              [part_done, i](sim::Nanos at) { part_done(i, at); });
    }
  }
  // A set that never reached the network is not recorded: its outcome needs
  // no engine to replay.
  if (Recording* r = state->recording.get()) {
    if (network)
      r->started = ledger->transfers_started();
    else
      state->recording.reset();
  }
}

}  // namespace

void start_flows(sim::NetworkEngine& engine, const std::vector<Flow>& flows, int channels,
                 std::function<void(std::size_t, sim::Nanos)> on_flow, std::function<void()> on_all,
                 std::shared_ptr<long> in_flight, const FlowReuse& reuse) {
  auto state = std::make_shared<FlowSetState>();
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
  if ((state->stalls = drawing_stalls(engine))) state->arrivals.assign(flows.size(), start);

  // A set on an idle network with a cached outcome: replay it, all at its
  // last arrival, where the simulated set would call on_all too. Only an
  // engine that accounts for replayed sets lets a set replay.
  sim::ReplayLedger* ledger = engine.replays();
  if (reuse.cache && ledger && ledger->transfers_undelivered() == 0 && start >= ledger->busy_until()) {
    std::vector<std::uint64_t> key = outcome_key(engine, flows, channels);
    const sim::Nanos quiet = std::min(reuse.quiet_until, engine.next_internal_change());
    std::shared_ptr<const FlowOutcomeCache::Entry> cached =
        known_outcome(engine, flows, channels, reuse, key, start, quiet);
    if (cached && start + cached->span < quiet) {
      replay(engine, *ledger, flows, channels, state, std::move(cached), reuse, start);
      return;
    }
    if (!cached)
      state->recording = new_recording(reuse.cache, std::move(key), flows.size(), start, engine.state_version());
  }
  simulate_flows(engine, ledger, flows, channels, std::move(state));
}

}  // namespace gauntlet::models
