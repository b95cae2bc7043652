#include "models/telemetry/traffic_ledger.hpp"

#include <algorithm>

namespace gauntlet::models {
namespace {

// The flow engine keeps a transfer on a down link alive at 1 B/s.
constexpr double kStalledBytesPerSecond = 1000.0;

// Bytes pushed at `t` by a piecewise-linear progress function.
double progress_at(const LedgerFlow& flow, sim::Nanos t) {
  const auto& p = flow.progress;
  if (p.empty() || t <= p.front().first) return p.empty() ? 0.0 : p.front().second;
  if (t >= p.back().first) return p.back().second;
  auto hi = std::lower_bound(p.begin(), p.end(), t, [](const auto& bp, sim::Nanos x) { return bp.first < x; });
  auto lo = hi - 1;
  const double span = static_cast<double>(hi->first - lo->first);
  return lo->second + (hi->second - lo->second) * static_cast<double>(t - lo->first) / span;
}

}  // namespace

bool FlowSegment::moving() const { return to > from && bytes / sim::to_seconds(to - from) > kStalledBytesPerSecond; }

TrafficLedger::TrafficLedger(sim::NetworkEngine& engine) : engine_(engine) {
  engine_.add_transfer_listener([this](const sim::TransferEvent& e) { on_event(e); });
}

void TrafficLedger::snapshot(sim::Nanos at) {
  if (at == last_snapshot_) return;
  last_snapshot_ = at;
  for (const auto& [id, index] : open_) {
    LedgerFlow& flow = flows_[index - dropped_];
    const double pushed = engine_.transfer_progress(id);
    if (flow.progress.back().first < at) flow.progress.emplace_back(at, std::max(pushed, flow.progress.back().second));
  }
}

void TrafficLedger::add_replayed(sim::EndpointId src, sim::EndpointId dst, sim::Nanos from, sim::Nanos to, double bytes,
                                 int sharing) {
  LedgerFlow flow;
  flow.src = src;
  flow.dst = dst;
  flow.directions = route_directions(src, dst);
  const sim::Topology& topology = engine_.topology();
  flow.demand = topology.link_bytes_per_second(topology.host_link(src)) * engine_.endpoint_state(src).bandwidth_factor /
                std::max(1, sharing);
  flow.progress = {{from, 0.0}, {std::max(to, from + 1), bytes}};
  flow.open = false;
  flows_.push_back(std::move(flow));
}

std::vector<int> TrafficLedger::route_directions(sim::EndpointId src, sim::EndpointId dst) const {
  std::vector<int> directions;
  const std::vector<sim::LinkId> route = engine_.route(src, dst);
  bool fabric_seen = false;
  for (std::size_t i = 0; i < route.size(); ++i) {
    bool upward;
    if (i == 0) {
      upward = true;
    } else if (i + 1 == route.size()) {
      upward = false;
    } else {
      upward = !fabric_seen;  // leaf to spine, then spine to leaf
      fabric_seen = true;
    }
    directions.push_back(directed_link(route[i], upward));
  }
  return directions;
}

void TrafficLedger::open_flow(const sim::TransferEvent& e, double already_pushed) {
  LedgerFlow flow;
  flow.src = e.src;
  flow.dst = e.dst;
  flow.directions = route_directions(e.src, e.dst);
  const sim::Topology& topology = engine_.topology();
  const int sharing = ++open_per_source_[e.src];
  const double egress =
      topology.link_bytes_per_second(topology.host_link(e.src)) * engine_.endpoint_state(e.src).bandwidth_factor;
  flow.demand = egress / sharing;
  flow.progress.emplace_back(e.at, already_pushed);
  open_[e.id] = flows_.size() + dropped_;
  flows_.push_back(std::move(flow));
}

void TrafficLedger::on_event(const sim::TransferEvent& e) {
  snapshot(e.at);
  if (e.kind == sim::TransferEvent::Kind::started) {
    open_flow(e, 0.0);
    return;
  }
  auto it = open_.find(e.id);
  if (it == open_.end()) return;
  LedgerFlow& flow = flows_[it->second - dropped_];
  const double pushed = e.kind == sim::TransferEvent::Kind::finished ? e.bytes : engine_.transfer_progress(e.id);
  if (flow.progress.back().first < e.at)
    flow.progress.emplace_back(e.at, pushed);
  else
    flow.progress.back().second = std::max(flow.progress.back().second, pushed);
  flow.open = false;
  open_.erase(it);
  --open_per_source_[e.src];
  // A rerouted transfer continues as a new flow on its new route.
  if (e.kind == sim::TransferEvent::Kind::rerouted) open_flow(e, pushed);
}

std::vector<FlowSegment> TrafficLedger::segments(sim::Nanos from, sim::Nanos to, sim::Nanos shift) const {
  std::vector<FlowSegment> out;
  const sim::Nanos a = from - shift, b = to - shift;
  for (const LedgerFlow& flow : flows_) {
    const auto& p = flow.progress;
    if (p.empty() || p.front().first >= b || (p.back().first <= a && !flow.open)) continue;
    for (std::size_t i = 0; i + 1 < p.size(); ++i) {
      const sim::Nanos s = std::max(a, p[i].first), e = std::min(b, p[i + 1].first);
      if (s >= e) continue;
      const double bytes = progress_at(flow, e) - progress_at(flow, s);
      out.push_back({&flow, s + shift, e + shift, bytes});
    }
  }
  return out;
}

void TrafficLedger::forget_before(sim::Nanos before) {
  while (!flows_.empty() && !flows_.front().open && flows_.front().progress.back().first < before) {
    flows_.pop_front();
    ++dropped_;
  }
}

}  // namespace gauntlet::models
