#include "harness/detectors/flow_vote_detector.hpp"

#include <algorithm>

namespace gauntlet::harness {

DetectorInfo FlowVoteDetector::info() {
  using K = DetectorParamKind;
  DetectorInfo d;
  d.name = kName;
  d.summary =
      "007's vote over flow records: each flow that retransmitted votes 1/hops for every link on its path; the "
      "links with the most votes are blamed";
  d.params = {
      {"window", K::duration, "2m", "flow records that ended this long ago still vote"},
      {"min_votes", K::number, "1", "votes a link needs to be blamed (a flow gives 1/hops to each of its links)", 0.0},
  };
  d.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    return std::make_unique<FlowVoteDetector>(config_from(ctx.params));
  };
  return d;
}

FlowVoteConfig FlowVoteDetector::config_from(const DetectorParams& params) {
  FlowVoteConfig c;
  c.window = params.duration("window");
  c.min_votes = params.number("min_votes");
  return c;
}

void FlowVoteDetector::add(const telemetry::FlowRecord& flow) {
  if (flow.retransmitted_packets() == 0 || flow.path().empty()) return;
  Vote vote{flow.end_ns(), {flow.path().begin(), flow.path().end()}, 1.0 / flow.path_size()};
  for (const std::string& link : vote.links) tally_[link] += vote.each;
  votes_.push_back(std::move(vote));
}

void FlowVoteDetector::expire(sim::Nanos now) {
  const auto old = [&](const Vote& v) { return v.at < now - config_.window; };
  for (const Vote& v : votes_)
    if (old(v))
      for (const std::string& link : v.links)
        if ((tally_[link] -= v.each) <= 1e-9) tally_.erase(link);
  votes_.erase(std::remove_if(votes_.begin(), votes_.end(), old), votes_.end());
}

void FlowVoteDetector::observe(const telemetry::Batch& batch) {
  bool voted = false;
  for (const telemetry::Record& r : batch.records())
    if (r.has_flow()) {
      add(r.flow());
      voted = true;
    }
  const std::size_t before = votes_.size();
  expire(batch.until_ns());
  if (!voted && votes_.size() == before) return;  // the tally did not move
  std::vector<std::pair<std::string, double>> ranked(tally_.begin(), tally_.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::set<std::string> blamed;
  for (const auto& [link, votes] : ranked)
    if (votes >= config_.min_votes) blamed.insert(link);
  const auto fresh = [&](const std::string& link) { return blamed.count(link) && !blamed_.count(link); };
  if (std::any_of(blamed.begin(), blamed.end(), [&](const auto& l) { return !blamed_.count(l); })) {
    // The links that just crossed the threshold first (what changed), then
    // the others with at least half the top's votes.
    Alert alert{sim::to_seconds(batch.until_ns()), kName, "network", {}};
    for (const auto& [link, votes] : ranked)
      if (fresh(link) && alert.suspects.size() < kMaxSuspects) alert.suspects.push_back({link, votes});
    for (const auto& [link, votes] : ranked) {
      if (votes < ranked.front().second / 2 || alert.suspects.size() == kMaxSuspects) break;
      if (!fresh(link)) alert.suspects.push_back({link, votes});
    }
    raise(std::move(alert));
  }
  blamed_ = std::move(blamed);
}

}  // namespace gauntlet::harness
