#include "harness/detectors/skeleton_detector.hpp"

#include <algorithm>

#include "harness/detectors/skeleton_localize.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

std::pair<int, int> unordered(int a, int b) { return {std::min(a, b), std::max(a, b)}; }

std::string flow_table_of(const sim::Topology& t, int endpoint) {
  return sim::ComponentId::make_flow_table(t.host_of(endpoint), t.nic_of(endpoint)).str();
}

std::string nic_of(const sim::Topology& t, int endpoint) {
  return sim::ComponentId::make_nic(t.host_of(endpoint), t.nic_of(endpoint)).str();
}

}  // namespace

DetectorInfo SkeletonDetector::info() {
  using K = DetectorParamKind;
  DetectorInfo skeleton;
  skeleton.name = "skeleton";
  skeleton.summary =
      "SkeletonHunter: probes the traffic skeleton inferred from periodic RNIC flow table bursts plus "
      "identifiability pairs; localizes overlay first, then underlay, then the RNIC boundary; tells a silent "
      "agent from a network fault";
  skeleton.params = {
      declare_param("round", K::duration, "30s", "interval between probe rounds", 0.001),
      declare_param("budget", K::integer, "256", "probes per round", 1.0),
      declare_param("rtt_factor", K::number, "2",
                    "RTT over the healthy baseline times this (and over the margin) is anomalous", 1.0),
      declare_param("rtt_margin", K::duration, "50us",
                    "RTT over the healthy baseline plus this (and over the factor) is anomalous", 0.0),
      declare_param("heartbeat", K::duration, "10s", "the agents' heartbeat interval", 0.001),
      declare_param("missed_heartbeats", K::integer, "3", "heartbeat intervals of silence that make an agent silent",
                    1.0),
      declare_param("min_repeats", K::integer, "3", "bursts at one period a flow needs to join the skeleton", 2.0),
      declare_param("stale_after", K::duration, "2m",
                    "silence (while other flows burst) after which a flow leaves the skeleton", 0.001),
      declare_param("tie_probes", K::integer, "4", "identifying probes per suspect tied on top", 1.0),
      declare_param("tie_rounds", K::integer, "2", "times a tie is probed apart before it is alerted as a tie", 0.0),
      declare_param(
          "congestion_margin", K::duration, "150ns",
          "a probe this much over its best RTT, over a fabric link whose queue grew by as much wait, is congestion",
          0.0),
  };
  skeleton.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    SkeletonDetector::Config config = SkeletonDetector::config_from(ctx.params);
    if (!ctx.name.empty()) config.name = ctx.name;
    return std::make_unique<SkeletonDetector>(std::move(config), ctx.topology);
  };
  return skeleton;
}

SkeletonDetector::Config SkeletonDetector::config_from(const DetectorParams& params) {
  Config c;
  c.round = params.duration("round");
  c.budget = params.integer("budget");
  c.rtt_factor = params.number("rtt_factor");
  c.rtt_margin = params.duration("rtt_margin");
  c.heartbeat = params.duration("heartbeat");
  c.missed_heartbeats = static_cast<int>(params.integer("missed_heartbeats"));
  c.min_repeats = static_cast<int>(params.integer("min_repeats"));
  c.stale_after = params.duration("stale_after");
  c.tie_probes = static_cast<int>(params.integer("tie_probes"));
  c.tie_rounds = static_cast<int>(params.integer("tie_rounds"));
  c.congestion_margin = params.duration("congestion_margin");
  return c;
}

SkeletonDetector::SkeletonDetector(Config config, const sim::Topology* topology)
    : config_(std::move(config)),
      topology_(topology),
      inference_(topology, config_.min_repeats, config_.stale_after),
      last_heartbeat_(static_cast<std::size_t>(topology->hosts()), 0),
      queues_(topology) {}

void SkeletonDetector::observe(const telemetry::Batch& batch) {
  // The skeleton's evidence: the flow tables' counters, nothing of the job's own.
  for (const telemetry::FlowTableRun& run : batch.flow_table_runs()) inference_.add(run);
  for (const telemetry::Record& r : batch.records()) {
    if (r.has_port()) {
      queues_.add(r.port());
    } else if (r.has_flow_table()) {
      inference_.add(r.flow_table());
    } else if (r.has_container()) {
      inference_.container_stopped(r.container());
    } else if (r.has_heartbeat()) {
      auto id = sim::ComponentId::parse(r.heartbeat().agent());
      if (id && id->kind == sim::ComponentKind::agent && id->host >= 0 && id->host < topology_->hosts())
        last_heartbeat_[static_cast<std::size_t>(id->host)] = r.heartbeat().time_ns();
    } else if (r.has_probe() && r.probe().detector() == config_.name) {
      window_.push_back(r.probe());
      const telemetry::ProbeResult& p = r.probe();
      const int src = endpoint_of_nic(*topology_, p.src()), dst = endpoint_of_nic(*topology_, p.dst());
      std::vector<int> links;
      for (const std::string& c : p.path())
        if (auto id = sim::ComponentId::parse(c))
          if (auto link = topology_->link_of(*id)) links.push_back(*link);
      if (src >= 0 && dst >= 0 && !links.empty()) learned_routes_[{src, dst}] = std::move(links);
      if (!p.overlay()) awaited_.erase({src, dst});
      note_reachability(p);
    }
  }
  const sim::Nanos now = batch.until_ns();
  check_heartbeats(now);
  if (next_round_ >= 0 && now < next_round_) {
    // The underlay checks are back: judge the held anomalies now, not a round later.
    if (checks_pending_ && awaited_.empty()) {
      checks_pending_ = false;
      analyze(now);
      issue_checks();
    }
    return;
  }
  checks_pending_ = false;
  awaited_.clear();
  analyze(now);
  if (inference_.refresh(now)) {
    replan();
    // Flows that moved queue where they now run (ECMP collisions of their
    // own): that is no other traffic's congestion.
    queues_.forget_floors();
  }
  if (list_.empty()) return;  // no skeleton yet: nothing of the job's to protect
  issue_round(now);
  next_round_ = now + config_.round;
}

void SkeletonDetector::check_heartbeats(sim::Nanos now) {
  const sim::Nanos limit = config_.missed_heartbeats * config_.heartbeat;
  for (int host = 0; host < topology_->hosts(); ++host) {
    const bool silent = now - last_heartbeat_[static_cast<std::size_t>(host)] > limit;
    if (!silent) {
      silent_.erase(host);
      continue;
    }
    if (!silent_.insert(host).second) continue;
    check_reachability(host);
  }
  // Verdicts on silent hosts whose reachability probes are all back.
  for (auto it = reach_pending_.begin(); it != reach_pending_.end();) {
    if (!it->second.empty()) {
      ++it;
      continue;
    }
    const int host = it->first;
    Alert a;
    a.time_s = sim::to_seconds(now);
    if (reach_answered_[host]) {
      a.kind = "monitor";
      a.suspects = {{sim::ComponentId::make_agent(host).str(), 1.0}};
    } else {
      a.kind = "fail_stop";
      a.suspects = {{sim::ComponentId::make_host(host).str(), 1.0}};
    }
    raise(std::move(a));
    reach_answered_.erase(host);
    it = reach_pending_.erase(it);
  }
}

void SkeletonDetector::check_reachability(int host) {
  // From the nearest peers: another host's RNIC under the same leaf, so a
  // lost answer is the host's (or its host link's) and no fabric link's.
  const sim::Topology& t = *topology_;
  auto& pending = reach_pending_[host];
  reach_answered_[host] = false;
  for (int nic = 0; nic < t.shape().rnics_per_host; ++nic) {
    const int target = t.endpoint(host, nic);
    for (int peer = 0; peer < t.endpoints(); ++peer) {
      if (t.leaf_of(peer) != t.leaf_of(target) || silent_.count(t.host_of(peer))) continue;
      pending.insert({peer, target});
      request_probe({nic_of(t, peer), nic_of(t, target), false});
      break;
    }
  }
  // No peer to ask: the silence is all there is to go on.
  if (pending.empty()) reach_answered_[host] = true;
}

void SkeletonDetector::note_reachability(const telemetry::ProbeResult& r) {
  if (r.overlay()) return;
  const int src = endpoint_of_nic(*topology_, r.src()), dst = endpoint_of_nic(*topology_, r.dst());
  if (src < 0 || dst < 0) return;
  auto it = reach_pending_.find(topology_->host_of(dst));
  if (it == reach_pending_.end() || !it->second.erase({src, dst})) return;
  if (!r.lost()) reach_answered_[it->first] = true;
}

void SkeletonDetector::replan() {
  // The operator does not know ECMP: a pair's links are those its probes
  // reported, else just its two host links (enough to tell a flow table from
  // its host link, the split the overlay/underlay step needs).
  const sim::Topology& t = *topology_;
  RouteFn route = [this, &t](sim::EndpointId a, sim::EndpointId b) {
    auto it = learned_routes_.find({a, b});
    if (it != learned_routes_.end()) return it->second;
    return std::vector<sim::LinkId>{t.host_link(a), t.host_link(b)};
  };
  list_ = skeleton_probe_list(t, inference_.groups(), route);
  cursor_ = 0;
}

void SkeletonDetector::issue_round(sim::Nanos now) {
  (void)now;
  issue_checks();
  const std::size_t n = std::min<std::size_t>(list_.size(), static_cast<std::size_t>(std::max(1LL, config_.budget)));
  for (std::size_t i = 0; i < n; ++i) send(list_[(cursor_ + i) % list_.size()]);
  cursor_ = (cursor_ + n) % list_.size();
}

void SkeletonDetector::send(PlannedProbe p) {
  // A silent agent sends nothing; its RNIC still answers, so the peer sends.
  if (silent_.count(topology_->host_of(p.src)) && !silent_.count(topology_->host_of(p.dst))) std::swap(p.src, p.dst);
  if (!p.overlay) awaited_.insert({p.src, p.dst});
  request_probe({nic_of(*topology_, p.src), nic_of(*topology_, p.dst), p.overlay});
}

void SkeletonDetector::issue_checks() {
  for (const PlannedProbe& p : checks_) send(p);
  if (!checks_.empty()) checks_pending_ = true;
  checks_.clear();
}

bool SkeletonDetector::anomalous(const telemetry::ProbeResult& r) {
  if (r.lost()) return true;
  const int src = endpoint_of_nic(*topology_, r.src()), dst = endpoint_of_nic(*topology_, r.dst());
  // The healthy baseline: this probe's best RTT, unless the layer's typical
  // best is lower (a fault present since the first round inflates its own).
  sim::Nanos& own = baseline_.try_emplace({src, dst, r.overlay()}, r.rtt_ns()).first->second;
  sim::Nanos base = own;
  const sim::Nanos typical = layer_median_[r.overlay() ? 1 : 0];
  if (typical > 0) base = std::min(base, typical);
  own = std::min<sim::Nanos>(own, r.rtt_ns());
  const auto limit =
      std::max(static_cast<sim::Nanos>(static_cast<double>(base) * config_.rtt_factor), base + config_.rtt_margin);
  return r.rtt_ns() > limit;
}

bool SkeletonDetector::break_tie(const std::vector<Suspect>& links) {
  const std::vector<std::string> tied = top_tied(links);
  if (tied.size() < 2 || tie_attempts_ >= config_.tie_rounds || common_host(tied)) return false;
  for (const std::string& id : tied)
    if (alerted_.count(id)) return false;  // this incident is alerted already
  const std::vector<PlannedProbe> probes = identifying_probes(*topology_, tied, learned_routes_, config_.tie_probes);
  if (probes.empty()) return false;
  ++tie_attempts_;
  checks_.insert(checks_.end(), probes.begin(), probes.end());
  return true;
}

std::vector<Suspect> SkeletonDetector::explain_links(std::vector<Suspect> links) const {
  const std::vector<std::string> tied = top_tied(links);
  const double best = links.front().score;
  if (auto host = common_host(tied)) {
    links.insert(links.begin(), {sim::ComponentId::make_host(*host).str(), best});
    for (std::size_t i = 1; i < links.size(); ++i) links[i].score *= 0.9;
    return links;
  }
  // A dark host link whose RNIC's flows moved to a sibling: the RNIC failed.
  for (const std::string& id : tied) {
    auto c = sim::ComponentId::parse(id);
    if (!c || c->kind != sim::ComponentKind::host_link) continue;
    const int endpoint = topology_->endpoint(c->host, c->index);
    if (!inference_.failed_over(endpoint)) continue;
    for (Suspect& s : links) s.score *= 0.9;
    links.insert(links.begin(), {nic_of(*topology_, endpoint), best});
    return links;
  }
  return links;
}

void SkeletonDetector::alert(sim::Nanos now, std::vector<Suspect> suspects) {
  if (auto a = network_alert_once(sim::to_seconds(now), std::move(suspects), alerted_)) raise(std::move(*a));
}

// This window's results, less those a silent host explains (a dead one
// loses them all).
std::vector<telemetry::ProbeResult> SkeletonDetector::take_window() {
  std::vector<telemetry::ProbeResult> results = std::exchange(window_, {});
  std::erase_if(results, [this](const telemetry::ProbeResult& r) {
    const int src = endpoint_of_nic(*topology_, r.src()), dst = endpoint_of_nic(*topology_, r.dst());
    return (src >= 0 && silent_.count(topology_->host_of(src))) || (dst >= 0 && silent_.count(topology_->host_of(dst)));
  });
  return results;
}

// Each layer's typical best RTT, once per window.
void SkeletonDetector::update_layer_medians() {
  for (int overlay = 0; overlay < 2; ++overlay) {
    std::vector<sim::Nanos> layer;
    for (const auto& [key, rtt] : baseline_)
      if (std::get<2>(key) == (overlay == 1)) layer.push_back(rtt);
    if (layer.empty()) continue;
    std::nth_element(layer.begin(), layer.begin() + static_cast<long>(layer.size() / 2), layer.end());
    layer_median_[overlay] = layer[layer.size() / 2];
  }
}

SkeletonDetector::Judgement SkeletonDetector::judge(const std::vector<telemetry::ProbeResult>& results) {
  Judgement j;
  for (const telemetry::ProbeResult& r : results) {
    const ProbeKey key{endpoint_of_nic(*topology_, r.src()), endpoint_of_nic(*topology_, r.dst()), r.overlay()};
    const bool known = baseline_.count(key) > 0;  // a first RTT is its own best
    const bool bad = anomalous(r);
    if (known && !r.lost()) j.judged.push_back({&r, r.rtt_ns() - baseline_.at(key) > config_.congestion_margin});
    (bad ? j.failed : j.healthy).push_back(&r);
    if (bad && r.overlay()) j.failed_overlay.push_back(&r);
    if (!r.overlay()) {
      const int src = endpoint_of_nic(*topology_, r.src()), dst = endpoint_of_nic(*topology_, r.dst());
      underlay_[unordered(src, dst)] = {r.sent_ns(), !bad};
    }
  }
  return j;
}

// Kept for the next windows' underlay step (failures the overlay step
// explains are not accusations of links). Returns how many earlier
// windows' results the history holds.
std::size_t SkeletonDetector::remember(sim::Nanos now, const Judgement& j) {
  std::erase_if(history_, [&](const auto& h) { return h.first.sent_ns() < now - 2 * config_.round; });
  const std::size_t earlier = history_.size();
  for (const telemetry::ProbeResult* r : j.healthy) history_.push_back({*r, false});
  for (const telemetry::ProbeResult* r : j.failed)
    if (!r->overlay()) history_.push_back({*r, true});
  return earlier;
}

std::pair<int, int> SkeletonDetector::ends(const telemetry::ProbeResult& r) const {
  return {endpoint_of_nic(*topology_, r.src()), endpoint_of_nic(*topology_, r.dst())};
}

// Results sent since `since` wait for the next analysis (judged again with
// the answers of probes sent meanwhile); older ones age out.
void SkeletonDetector::requeue(const std::vector<telemetry::ProbeResult>& results, sim::Nanos since) {
  for (const telemetry::ProbeResult& r : results)
    if (r.sent_ns() >= since) window_.push_back(r);
}

void SkeletonDetector::analyze(sim::Nanos now) {
  const std::vector<telemetry::ProbeResult> results = take_window();
  update_layer_medians();
  const Judgement j = judge(results);
  const std::size_t earlier = remember(now, j);
  const bool loss_seen = !j.failed.empty() || !alerted_.empty() ||
                         std::any_of(history_.begin(), history_.end(), [](const auto& h) { return h.second; });
  analyze_congestion(now, j.judged, loss_seen);
  if (j.failed.empty()) {
    // Healthy for two full windows: a recurrence is a new incident. (One
    // window may hold only a few probes that miss the faulty component.)
    if (!results.empty() && ++healthy_windows_ >= 2) {
      alerted_.clear();
      tie_attempts_ = 0;
    }
    return;
  }
  healthy_windows_ = 0;
  const sim::Nanos recent = now - 2 * config_.round;
  std::vector<const telemetry::ProbeResult*> unexplained;   // failures the overlay step leaves to the underlay
  std::vector<const telemetry::ProbeResult*> overlay_only;  // overlay failures over a healthy underlay
  for (const telemetry::ProbeResult* r : j.failed)
    if (!r->overlay()) unexplained.push_back(r);
  if (!j.failed_overlay.empty() && !overlay_step(now, j, recent, unexplained, overlay_only)) {
    requeue(results, recent);  // judged again with the checks' answers
    return;
  }
  if (unexplained.empty() && overlay_only.empty()) return;

  // 2. Underlay, assuming the overlay healthy. The previous windows' verdicts
  // count too: one window may hold a single failed probe and nothing to
  // clear its host links.
  std::vector<const telemetry::ProbeResult*> accused = unexplained, cleared = j.healthy;
  for (std::size_t i = 0; i < earlier; ++i) (history_[i].second ? accused : cleared).push_back(&history_[i].first);
  std::vector<Suspect> links;
  if (!unexplained.empty()) links = rank_underlay_suspects(*topology_, accused, cleared);
  if (!links.empty()) {
    if (break_tie(links)) {
      // Judge again with the identifying probes' answers, this window's
      // results still in hand (and not twice in the history).
      history_.resize(earlier);
      requeue(results, recent);
      return;
    }
    tie_attempts_ = 0;
    alert(now, explain_links(std::move(links)));
    return;
  }
  // 3. Neither layer explains it: the RNIC boundary the failures share most.
  unexplained.insert(unexplained.end(), overlay_only.begin(), overlay_only.end());
  blame_rnic_boundary(now, unexplained);
}

// 1. Overlay, assuming the underlay healthy: an alert on the flow tables
// every failed overlay probe shares, or the failures sorted between the
// underlay step (`unexplained`) and the RNIC boundary (`overlay_only`).
// False when the underlay between the failures' ends is not known lately:
// checks are queued, and the window waits for their answers.
bool SkeletonDetector::overlay_step(sim::Nanos now, const Judgement& j, sim::Nanos recent,
                                    std::vector<const telemetry::ProbeResult*>& unexplained,
                                    std::vector<const telemetry::ProbeResult*>& overlay_only) {
  std::map<int, int> touching;
  for (const telemetry::ProbeResult* r : j.failed_overlay) {
    auto [a, b] = ends(*r);
    ++touching[a];
    ++touching[b];
  }
  std::set<int> cleared;  // ends of healthy overlay probes
  for (const telemetry::ProbeResult* r : j.healthy)
    if (r->overlay()) {
      auto [a, b] = ends(*r);
      cleared.insert(a);
      cleared.insert(b);
    }
  std::vector<int> common;
  for (const auto& [e, n] : touching)
    if (n == static_cast<int>(j.failed_overlay.size()) && !cleared.count(e)) common.push_back(e);
  bool underlay_fine = true, underlay_known = true;
  for (const telemetry::ProbeResult* r : j.failed_overlay) {
    auto [a, b] = ends(*r);
    auto it = underlay_.find(unordered(a, b));
    if (it == underlay_.end() || it->second.first < recent) {
      underlay_known = false;
      checks_.push_back({a, b, false});  // same orientation, so the same ECMP path
    } else if (!it->second.second) {
      underlay_fine = false;
    }
  }
  if (!underlay_known) return false;
  if (!common.empty() && underlay_fine) {
    std::vector<Suspect> suspects;
    for (int e : common) suspects.push_back({flow_table_of(*topology_, e), 1.0 / static_cast<double>(common.size())});
    alert(now, std::move(suspects));
    return true;
  }
  // An overlay failure is the underlay's only if the underlay between the
  // same ends fails too; otherwise it is left for the RNIC boundary.
  for (const telemetry::ProbeResult* r : j.failed_overlay) {
    auto [a, b] = ends(*r);
    (underlay_[unordered(a, b)].second ? overlay_only : unexplained).push_back(r);
  }
  return true;
}

// 3. The endpoint most of the failures share, its flow table first; scattered
// failures wait for more evidence.
void SkeletonDetector::blame_rnic_boundary(sim::Nanos now, const std::vector<const telemetry::ProbeResult*>& failures) {
  std::map<int, int> touching;
  for (const telemetry::ProbeResult* r : failures) {
    auto [a, b] = ends(*r);
    ++touching[a];
    ++touching[b];
  }
  auto best = std::max_element(touching.begin(), touching.end(),
                               [](const auto& x, const auto& y) { return x.second < y.second; });
  if (failures.size() < 2 || 2 * best->second < static_cast<int>(failures.size())) return;
  alert(now, {{flow_table_of(*topology_, best->first), 1.0}, {nic_of(*topology_, best->first), 0.5}});
}

void SkeletonDetector::analyze_congestion(sim::Nanos now,
                                          const std::vector<std::pair<const telemetry::ProbeResult*, bool>>& judged,
                                          bool loss_seen) {
  std::erase_if(congestion_history_, [&](const auto& h) { return h.first.sent_ns() < now - 2 * config_.round; });
  bool moved = false;  // an RNIC's flows went to a sibling, and their queues with them
  for (int e = 0; e < topology_->endpoints() && !moved; ++e) moved = inference_.failed_over(e);
  if (loss_seen || moved) {
    // Lost or far-late probes are the steps above's; a reroute around a
    // failed link or RNIC also moves traffic, and queues, onto its neighbours.
    congestion_history_.clear();
    congestion_seen_.clear();
    held_ = true;
    return;
  }
  if (std::exchange(held_, false)) queues_.forget_floors();  // the traffic may not be back where it ran before
  for (const auto& [r, inflated] : judged) congestion_history_.push_back({*r, inflated});
  std::vector<const telemetry::ProbeResult*> inflated, clear;
  for (const auto& [r, late] : congestion_history_) (late ? inflated : clear).push_back(&r);
  // The incident lasts while a link it named still queues past the margin.
  if (std::none_of(congested_.begin(), congested_.end(),
                   [this](int link) { return queues_.added_wait(link) > config_.congestion_margin; })) {
    congested_.clear();
    congestion_alerted_.clear();
  }
  // Two late probes at least: one may have met a queue the next second drains.
  std::vector<Suspect> links;
  if (!inflated.empty())
    links = rank_congested_links(*topology_, inflated, clear, queues_, config_.congestion_margin, 2);
  // Seen in two analyses in a row: a failure's first lost probes may come a
  // round after the traffic it moved has queued elsewhere.
  const std::string seen = links.empty() ? std::string() : links.front().id;
  const bool again = !seen.empty() && seen == congestion_seen_;
  congestion_seen_ = seen;
  if (!again) {
    if (links.empty()) congestion_ties_ = 0;
    return;
  }
  const std::vector<std::string> tied = top_tied(links);
  const bool told = std::any_of(tied.begin(), tied.end(),
                                [this](const std::string& id) { return congestion_alerted_.count(id) > 0; });
  if (tied.size() >= 2 && !told && congestion_ties_ < config_.tie_rounds) {
    const std::vector<PlannedProbe> probes = identifying_probes(*topology_, tied, learned_routes_, config_.tie_probes);
    if (!probes.empty()) {
      ++congestion_ties_;
      checks_.insert(checks_.end(), probes.begin(), probes.end());
      return;
    }
  }
  congestion_ties_ = 0;
  auto a = network_alert_once(sim::to_seconds(now), std::move(links), congestion_alerted_);
  if (!a) return;
  for (const Suspect& s : a->suspects)
    if (auto id = sim::ComponentId::parse(s.id))
      if (auto link = topology_->link_of(*id)) congested_.insert(*link);
  raise(std::move(*a));
}

}  // namespace gauntlet::harness
