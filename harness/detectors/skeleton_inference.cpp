#include "harness/detectors/skeleton_inference.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

// Fitted onsets may miss the true ones by up to one sampling interval (the
// counters say which second a burst began in, not when in it); a little
// more allows for the flows' own jitter.
constexpr double kOnsetSlack = 1.25;
constexpr double kPhaseTolerance = 1.5;  // intervals
constexpr double kMinPeriod = 2.0;       // intervals: closer bursts merge into one
constexpr double kVolumeRatio = 1.25;    // bytes per burst of one signature
// A refit this close to a member's previous signature cannot regroup it.
constexpr double kSignatureDrift = 0.25;  // intervals, of period or phase
constexpr double kVolumeDrift = 1.05;

double period_tolerance(double period) { return std::max(1.0, 0.02 * period); }

std::size_t find_root(std::vector<std::size_t>& parent, std::size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

int SkeletonInference::endpoint_of(const std::string& name, bool table) {
  auto it = endpoints_.find(name);
  if (it != endpoints_.end()) return it->second;
  int endpoint = -1;
  auto id = sim::ComponentId::parse(name);
  const auto kind = table ? sim::ComponentKind::flow_table : sim::ComponentKind::nic;
  if (id && id->kind == kind && topology_->contains(*id)) endpoint = topology_->endpoint(id->host, id->index);
  endpoints_.emplace(name, endpoint);
  return endpoint;
}

SkeletonInference::FlowEvidence* SkeletonInference::evidence_of(const std::string& table, const std::string& peer) {
  const int src = endpoint_of(table, true), dst = endpoint_of(peer, false);
  if (src < 0 || dst < 0) return nullptr;
  FlowEvidence& e = evidence_[{src, dst}];
  e.src = src;
  e.dst = dst;
  return &e;
}

void SkeletonInference::note_new_flow(const FlowEvidence& e, Interval interval) {
  // A sender that stopped within an iteration (its flow's period) of the new
  // flow's start, or a few intervals when it has none yet, handed its peer over.
  constexpr Interval kHandover = 5;
  const int host = topology_->host_of(e.src);
  for (int nic = 0; nic < topology_->shape().rnics_per_host; ++nic) {
    const sim::EndpointId sibling = topology_->endpoint(host, nic);
    if (sibling == e.src) continue;
    auto old = evidence_.find({sibling, e.dst});
    if (old == evidence_.end() || !old->second.seen) continue;
    const Interval window = std::max(kHandover, static_cast<Interval>(std::ceil(1.5 * old->second.period)));
    if (old->second.last_seen <= interval && old->second.last_seen + window >= interval)
      taken_over_[sibling] = std::max(taken_over_[sibling], interval);
  }
}

bool SkeletonInference::failed_over(sim::EndpointId endpoint) const {
  auto taken = taken_over_.find(endpoint);
  if (taken == taken_over_.end()) return false;
  const Interval sent = last_sent_[static_cast<std::size_t>(endpoint)];
  return sent == kNeverSent || sent <= taken->second;
}

void SkeletonInference::add_interval(FlowEvidence& e, Interval interval, double bytes) {
  if (!e.seen) {
    e.seen = true;
    note_new_flow(e, interval);
  }
  Interval& sent = last_sent_[static_cast<std::size_t>(e.src)];
  sent = std::max(sent == kNeverSent ? 0 : sent, interval);
  e.changed = true;
  e.last_seen = std::max(e.last_seen, interval);
  newest_ = std::max(newest_, interval);
  std::deque<Burst>& bursts = e.bursts;
  if (bursts.empty() || interval > bursts.back().last + 1) {
    bursts.push_back({interval, interval, bytes});
    if (bursts.size() > kKeptBursts) bursts.pop_front();
    return;
  }
  // Usually the latest burst goes on; otherwise (a stretch's repeats out of
  // order with single samples) the interval joins or splits in where it falls.
  auto it =
      std::upper_bound(bursts.begin(), bursts.end(), interval, [](Interval i, const Burst& b) { return i < b.first; });
  if (it != bursts.begin() && std::prev(it)->last + 1 >= interval) {
    auto prev = std::prev(it);
    prev->last = std::max(prev->last, interval);
    prev->bytes += bytes;
    if (it != bursts.end() && prev->last + 1 >= it->first) {
      prev->last = std::max(prev->last, it->last);
      prev->bytes += it->bytes;
      bursts.erase(it);
    }
    return;
  }
  if (it != bursts.end() && interval + 1 >= it->first) {
    it->first = std::min(it->first, interval);
    it->bytes += bytes;
    return;
  }
  if (it == bursts.begin() && bursts.size() >= kKeptBursts) return;  // older than all kept
  bursts.insert(it, {interval, interval, bytes});
  if (bursts.size() > kKeptBursts) bursts.pop_front();
}

void SkeletonInference::add(const telemetry::FlowTableSample& sample) {
  const Interval interval = sample.time_ns() / interval_;
  for (const telemetry::FlowTableEntry& entry : sample.entries()) {
    if (entry.bytes() < kMinBurstBytes) continue;
    if (FlowEvidence* e = evidence_of(sample.table(), entry.peer()))
      add_interval(*e, interval, static_cast<double>(entry.bytes()));
  }
}

void SkeletonInference::add(const telemetry::FlowTableRun& run) {
  if (run.repeats() == 0 || run.period_ns() <= 0) return;
  // Only the latest repeats can stay among the kept bursts.
  const std::uint64_t skip = run.repeats() > kKeptBursts ? run.repeats() - kKeptBursts : 0;
  std::vector<FlowEvidence*> flows;  // per burst, looked up once
  flows.reserve(static_cast<std::size_t>(run.bursts_size()));
  for (const telemetry::FlowBurst& burst : run.bursts())
    flows.push_back(burst.bytes() >= kMinBurstBytes ? evidence_of(burst.table(), burst.peer()) : nullptr);
  // A flow new in this stretch started at its first repeat, skipped or not.
  for (int k = 0; k < run.bursts_size(); ++k) {
    FlowEvidence* e = flows[static_cast<std::size_t>(k)];
    if (!e || e->seen) continue;
    e->seen = true;
    note_new_flow(*e, run.bursts(k).from_ns() / interval_ + 1);
  }
  for (std::uint64_t i = skip; i < run.repeats(); ++i) {
    const sim::Nanos shift = static_cast<sim::Nanos>(i) * run.period_ns();
    for (int k = 0; k < run.bursts_size(); ++k) {
      FlowEvidence* e = flows[static_cast<std::size_t>(k)];
      if (!e) continue;
      const telemetry::FlowBurst& burst = run.bursts(k);
      const sim::Nanos from = burst.from_ns() + shift, to = burst.to_ns() + shift;
      const Interval first = from / interval_ + 1, last = to > from ? (to - 1) / interval_ + 1 : first;
      // Only the burst's total matters: all of it goes to its first interval.
      for (Interval j = first; j <= last; ++j)
        add_interval(*e, j, j == first ? static_cast<double>(burst.bytes()) : 0.0);
    }
  }
}

void SkeletonInference::container_stopped(const telemetry::ContainerEvent& event) {
  if (event.kind() != telemetry::ContainerEvent::STOP) return;
  for (const telemetry::VirtualFunction& vf : event.vfs()) {
    const int endpoint = endpoint_of(vf.rnic(), false);
    if (endpoint < 0) continue;
    // A burst in the interval the stop falls in may be its last traffic.
    Interval& at = stopped_[endpoint];
    at = std::max<Interval>(at, event.time_ns() / interval_ + 1);
  }
}

bool SkeletonInference::fit(const FlowEvidence& e, Fit* out) const {
  const auto& b = e.bursts;
  const std::size_t n = b.size();
  const auto needed = static_cast<std::size_t>(std::max(2, min_repeats_));
  if (n < needed) return false;
  // The longest run of latest onsets that fits one period.
  for (std::size_t j = 0; j + needed <= n; ++j) {
    const double period = static_cast<double>(b[n - 1].first - b[j].first) / static_cast<double>(n - 1 - j);
    if (period < kMinPeriod) continue;
    bool fits = true;
    double onset = 0;  // the latest onset as the mean of every onset's projection
    for (std::size_t k = j; k < n && fits; ++k) {
      const double expected = static_cast<double>(b[j].first) + static_cast<double>(k - j) * period;
      fits = std::abs(static_cast<double>(b[k].first) - expected) <= kOnsetSlack;
      onset += static_cast<double>(b[k].first) + static_cast<double>(n - 1 - k) * period;
    }
    if (!fits) continue;
    out->period = period;
    out->onset = onset / static_cast<double>(n - j);
    // Bytes per burst: the median of the fitted bursts but the latest, which
    // may still be going on.
    std::vector<double> volumes;
    for (std::size_t k = j; k + 1 < n; ++k) volumes.push_back(b[k].bytes);
    std::nth_element(volumes.begin(), volumes.begin() + static_cast<long>(volumes.size() / 2), volumes.end());
    out->volume = volumes[volumes.size() / 2];
    return true;
  }
  return false;
}

void SkeletonInference::group(const std::vector<std::pair<FlowKey, const FlowEvidence*>>& members,
                              std::vector<std::vector<sim::EndpointId>>* groups) const {
  // Signatures: members sorted by period, split where consecutive periods
  // part by more than the tolerance; each such cluster by phase.
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return members[a].second->period < members[b].second->period; });
  std::vector<std::vector<std::size_t>> signatures;
  for (std::size_t lo = 0; lo < order.size();) {
    std::size_t hi = lo + 1;
    while (hi < order.size() && members[order[hi]].second->period - members[order[hi - 1]].second->period <=
                                    period_tolerance(members[order[hi - 1]].second->period))
      ++hi;
    double period = 0, latest = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      period += members[order[i]].second->period;
      latest = std::max(latest, members[order[i]].second->onset);
    }
    period /= static_cast<double>(hi - lo);
    // Phase: how long before the cluster's latest onset each flow's fell,
    // modulo the period (both recent, so the period's error hardly adds up).
    std::vector<std::pair<double, std::size_t>> phases;
    for (std::size_t i = lo; i < hi; ++i)
      phases.push_back({std::fmod(latest - members[order[i]].second->onset, period), order[i]});
    std::stable_sort(phases.begin(), phases.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::vector<std::size_t>> clusters;
    for (std::size_t i = 0; i < phases.size(); ++i) {
      if (i == 0 || phases[i].first - phases[i - 1].first > kPhaseTolerance) clusters.emplace_back();
      clusters.back().push_back(phases[i].second);
    }
    // The phase circle closes: the last cluster may join the first.
    if (clusters.size() > 1 && phases.front().first + period - phases.back().first <= kPhaseTolerance) {
      clusters.front().insert(clusters.front().end(), clusters.back().begin(), clusters.back().end());
      clusters.pop_back();
    }
    // Each phase cluster by bytes per burst.
    for (std::vector<std::size_t>& c : clusters) {
      std::stable_sort(c.begin(), c.end(), [&](std::size_t a, std::size_t b) {
        return members[a].second->volume < members[b].second->volume;
      });
      for (std::size_t i = 0; i < c.size(); ++i) {
        if (i == 0 || members[c[i]].second->volume > kVolumeRatio * members[c[i - 1]].second->volume)
          signatures.emplace_back();
        signatures.back().push_back(c[i]);
      }
    }
    lo = hi;
  }
  // Connected components of each signature's flows.
  for (const std::vector<std::size_t>& signature : signatures) {
    std::vector<sim::EndpointId> ends;
    for (std::size_t i : signature) {
      ends.push_back(members[i].first.first);
      ends.push_back(members[i].first.second);
    }
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    auto index = [&ends](sim::EndpointId e) {
      return static_cast<std::size_t>(std::lower_bound(ends.begin(), ends.end(), e) - ends.begin());
    };
    std::vector<std::size_t> parent(ends.size());
    std::iota(parent.begin(), parent.end(), 0);
    for (std::size_t i : signature)
      parent[find_root(parent, index(members[i].first.first))] = find_root(parent, index(members[i].first.second));
    std::map<std::size_t, std::vector<sim::EndpointId>> components;
    for (std::size_t k = 0; k < ends.size(); ++k) components[find_root(parent, k)].push_back(ends[k]);
    for (auto& [root, component] : components) groups->push_back(std::move(component));
  }
}

bool SkeletonInference::refresh(sim::Nanos now) {
  (void)now;           // age is counted on the evidence's clock (see the header)
  bool moved = false;  // a member's signature moved: its group may split or merge
  std::vector<std::pair<FlowKey, const FlowEvidence*>> members;
  for (auto it = evidence_.begin(); it != evidence_.end();) {
    FlowEvidence& e = it->second;
    auto stopped = [&](sim::EndpointId endpoint) {
      auto s = stopped_.find(endpoint);
      return s != stopped_.end() && e.last_seen <= s->second;
    };
    if ((newest_ - e.last_seen) * interval_ > stale_after_ || stopped(it->first.first) || stopped(it->first.second)) {
      members_changed_ |= e.member;
      it = evidence_.erase(it);  // its container stopped or moved
      continue;
    }
    if (e.changed) {
      Fit f;
      if (fit(e, &f)) {
        if (e.member) {
          const double drift = f.onset - e.onset, shift = drift - std::round(drift / f.period) * f.period;
          moved |= std::abs(f.period - e.period) > kSignatureDrift || std::abs(shift) > kSignatureDrift ||
                   std::max(f.volume, e.volume) > kVolumeDrift * std::min(f.volume, e.volume);
        }
        members_changed_ |= !e.member;
        e.member = true;
        e.period = f.period;
        e.onset = f.onset;
        e.volume = f.volume;
      }
      e.changed = false;
    }
    if (e.member) members.push_back({it->first, &e});
    ++it;
  }
  // Stops older than any flow could still be kept are of no more use.
  std::erase_if(stopped_, [this](const auto& s) { return (newest_ - s.second) * interval_ > stale_after_; });
  // Same members with the same signatures: the same skeleton.
  if (members.empty() || (!members_changed_ && !moved)) return false;
  members_changed_ = false;
  std::set<std::pair<sim::EndpointId, sim::EndpointId>> edges;
  for (const auto& m : members) edges.insert(edges.end(), m.first);  // members come in key order
  std::vector<std::vector<sim::EndpointId>> groups;
  group(members, &groups);
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  if (edges == edges_ && groups == groups_) return false;
  groups_ = std::move(groups);
  edges_ = std::move(edges);
  ++version_;
  return true;
}

}  // namespace gauntlet::harness
