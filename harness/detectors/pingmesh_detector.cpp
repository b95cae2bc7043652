#include "harness/detectors/pingmesh_detector.hpp"

#include <algorithm>
#include <set>
#include <string_view>

#include "harness/detectors/skeleton_localize.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {

DetectorInfo PingmeshDetector::info() {
  using K = DetectorParamKind;
  DetectorInfo pingmesh;
  pingmesh.name = "pingmesh";
  pingmesh.summary =
      "Pingmesh: underlay probes, full mesh under each ToR plus sampled inter-ToR pairs, fixed RTT and loss "
      "thresholds; blames an RNIC many peers cannot reach, else the links failures follow";
  pingmesh.params = {
      declare_param("round", K::duration, "30s", "interval between probe rounds", 0.001),
      declare_param("inter_tor_sample", K::integer, "64", "inter-ToR pairs drawn per round", 0.0),
      declare_param("rtt_threshold", K::duration, "100us", "RTT above which a probe fails", 0.0),
      declare_param("rnic_fraction", K::number, "0.5",
                    "fraction of an RNIC's probed peers failing that blames the RNIC", 0.0, 1.0),
      declare_param("seed", K::integer, "1", "seed of the inter-ToR sample", 0.0),
  };
  pingmesh.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    PingmeshDetector::Config config = PingmeshDetector::config_from(ctx.params);
    if (!ctx.name.empty()) config.name = ctx.name;
    return std::make_unique<PingmeshDetector>(std::move(config), ctx.topology);
  };
  return pingmesh;
}

PingmeshDetector::Config PingmeshDetector::config_from(const DetectorParams& params) {
  Config c;
  c.round = params.duration("round");
  c.inter_tor_sample = params.integer("inter_tor_sample");
  c.rtt_threshold = params.duration("rtt_threshold");
  c.rnic_fraction = params.number("rnic_fraction");
  c.seed = static_cast<std::uint64_t>(params.integer("seed"));
  return c;
}

PingmeshDetector::PingmeshDetector(Config config, const sim::Topology* topology)
    : config_(std::move(config)), topology_(topology), rng_(sim::RngStreams(config_.seed).stream("pingmesh")) {}

std::vector<std::pair<int, int>> PingmeshDetector::round_pairs() {
  const sim::Topology& t = *topology_;
  std::vector<std::vector<int>> on_leaf(static_cast<std::size_t>(t.leaves()));
  for (int e = 0; e < t.endpoints(); ++e) on_leaf[static_cast<std::size_t>(t.leaf_of(e))].push_back(e);
  std::vector<std::pair<int, int>> pairs;
  // Each ToR pair once per round; the sending end alternates across rounds
  // so both agents' views are sampled.
  const bool flip = round_index_ % 2 == 1;
  for (const auto& members : on_leaf)
    for (std::size_t i = 0; i < members.size(); ++i)
      for (std::size_t j = i + 1; j < members.size(); ++j)
        pairs.push_back(flip ? std::pair{members[j], members[i]} : std::pair{members[i], members[j]});
  if (t.leaves() > 1)
    for (long long k = 0; k < config_.inter_tor_sample; ++k) {
      const int a = static_cast<int>(rng_.below(static_cast<std::uint64_t>(t.endpoints())));
      const int b = static_cast<int>(rng_.below(static_cast<std::uint64_t>(t.endpoints())));
      if (t.leaf_of(a) != t.leaf_of(b)) pairs.push_back({a, b});
    }
  ++round_index_;
  return pairs;
}

NameTable::Id PingmeshDetector::intern(FieldStream& field, const std::string& name) {
  if (field.last != kNoId && field.last < field.next.size()) {
    const NameTable::Id predicted = field.next[field.last];
    if (predicted != kNoId && names_.name(predicted) == name) return field.last = predicted;
  }
  const NameTable::Id id = names_.intern(name);
  if (field.last != kNoId) {
    if (field.next.size() <= field.last) field.next.resize(names_.size(), kNoId);
    field.next[field.last] = id;
  }
  return field.last = id;
}

void PingmeshDetector::keep(const telemetry::ProbeResult& r) {
  const std::size_t fields = 2 + static_cast<std::size_t>(r.path_size());
  if (fields_.size() < fields) fields_.resize(fields);
  WindowProbe p;
  p.src = intern(fields_[0], r.src());
  p.dst = intern(fields_[1], r.dst());
  p.path_begin = static_cast<std::uint32_t>(window_paths_.size());
  for (int k = 0; k < r.path_size(); ++k)
    window_paths_.push_back(intern(fields_[2 + static_cast<std::size_t>(k)], r.path(k)));
  p.path_end = static_cast<std::uint32_t>(window_paths_.size());
  p.lost = r.lost();
  p.rtt_ns = r.rtt_ns();
  window_.push_back(p);
}

std::vector<telemetry::ProbeResult> PingmeshDetector::take_window() {
  std::vector<telemetry::ProbeResult> out;
  out.reserve(window_.size());
  for (const WindowProbe& p : window_) {
    telemetry::ProbeResult& r = out.emplace_back();
    r.set_src(names_.name(p.src));
    r.set_dst(names_.name(p.dst));
    for (std::uint32_t i = p.path_begin; i < p.path_end; ++i) r.add_path(names_.name(window_paths_[i]));
    r.set_lost(p.lost);
    r.set_rtt_ns(p.rtt_ns);
  }
  window_.clear();
  window_paths_.clear();
  return out;
}

void PingmeshDetector::observe(const telemetry::Batch& batch) {
  for (const telemetry::Record& r : batch.records())
    if (r.has_probe() && r.probe().detector() == config_.name) keep(r.probe());
  const sim::Nanos now = batch.until_ns();
  if (now < next_round_) return;
  analyze(now);
  if (nic_names_.empty())
    for (int e = 0; e < topology_->endpoints(); ++e)
      nic_names_.push_back(sim::ComponentId::make_nic(topology_->host_of(e), topology_->nic_of(e)).str());
  for (const auto& [a, b] : round_pairs())
    request_probe({nic_names_[static_cast<std::size_t>(a)], nic_names_[static_cast<std::size_t>(b)], false});
  next_round_ = now + config_.round;
}

PingmeshDetector::PeerCounts PingmeshDetector::peer_counts(const std::vector<telemetry::ProbeResult>& results,
                                                           const std::string& nic) const {
  // Only a round with failures asks, and only of a few RNICs: a pass over the
  // round beats indexing a quarter of a million probes by both ends each round.
  std::set<std::string_view> probed, failing;
  for (const telemetry::ProbeResult& r : results) {
    const bool src = r.src() == nic;
    if (!src && r.dst() != nic) continue;
    const std::string_view other = src ? r.dst() : r.src();
    probed.insert(other);
    if (r.lost() || r.rtt_ns() > config_.rtt_threshold) failing.insert(other);
  }
  return {probed.size(), failing.size()};
}

void PingmeshDetector::analyze(sim::Nanos now) {
  const bool any_failed = std::any_of(window_.begin(), window_.end(), [this](const WindowProbe& p) {
    return p.lost || p.rtt_ns > config_.rtt_threshold;
  });
  if (!any_failed) {
    // Healthy for three rounds: a recurrence is a new incident (a lossy link
    // leaves some rounds without a failure).
    if (!window_.empty() && ++healthy_rounds_ >= 3) alerted_.clear();
    window_.clear();
    window_paths_.clear();
    return;
  }
  const std::vector<telemetry::ProbeResult> results = take_window();
  std::vector<const telemetry::ProbeResult*> failed, healthy;
  for (const telemetry::ProbeResult& r : results) {
    const bool bad = r.lost() || r.rtt_ns() > config_.rtt_threshold;
    (bad ? failed : healthy).push_back(&r);
  }
  healthy_rounds_ = 0;
  std::vector<Suspect> suspects = rank_underlay_suspects(*topology_, failed, healthy);
  if (suspects.empty()) return;
  // The best suspect a host link, and every probe to each of its host's
  // RNICs failed (two RNICs probed at least): the server is unreachable, not
  // one of its links.
  auto top = sim::ComponentId::parse(suspects.front().id);
  if (top && top->kind == sim::ComponentKind::host_link) {
    int probed_rnics = 0;
    bool all_failed = true;
    for (int k = 0; k < topology_->shape().rnics_per_host; ++k) {
      const PeerCounts counts = peer_counts(results, sim::ComponentId::make_nic(top->host, k).str());
      if (counts.probed == 0) continue;
      ++probed_rnics;
      all_failed = all_failed && counts.failed == counts.probed;
    }
    if (probed_rnics >= 2 && all_failed) {
      const double best = suspects.front().score;
      for (Suspect& s : suspects) s.score *= 0.9;
      suspects.insert(suspects.begin(), {sim::ComponentId::make_host(top->host).str(), best});
      if (auto a = network_alert_once(sim::to_seconds(now), std::move(suspects), alerted_)) raise(std::move(*a));
      return;
    }
  }
  // Many peers failing to reach one RNIC whose own link is the best suspect:
  // the RNIC itself (a NIC fault and its host link look alike from outside).
  auto id = sim::ComponentId::parse(suspects.front().id);
  if (id && id->kind == sim::ComponentKind::host_link) {
    const std::string nic = sim::ComponentId::make_nic(id->host, id->index).str();
    const PeerCounts counts = peer_counts(results, nic);
    if (counts.probed > 0 &&
        static_cast<double>(counts.failed) >= config_.rnic_fraction * static_cast<double>(counts.probed))
      suspects.insert(suspects.begin(), {nic, suspects.front().score});
  }
  if (auto a = network_alert_once(sim::to_seconds(now), std::move(suspects), alerted_)) raise(std::move(*a));
}

}  // namespace gauntlet::harness
