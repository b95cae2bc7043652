#include "harness/detectors/skeleton_congestion.hpp"

#include <algorithm>
#include <map>

#include "harness/detectors/skeleton_localize.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {

void LinkQueues::add(const telemetry::PortCounters& port) {
  auto id = sim::ComponentId::parse(port.link());
  if (!id) return;
  auto link = topology_->link_of(*id);
  if (!link) return;
  Port& p = ports_[{*link, port.upward()}];
  p.now = port.queue_depth();
  // An idle port's empty queue says nothing of what traffic leaves queued.
  if (port.tx_bytes() > 0 && (p.floor < 0 || p.now < p.floor)) p.floor = p.now;
}

sim::Nanos LinkQueues::added_wait(int link) const {
  double bytes = 0;
  for (bool up : {true, false}) {
    auto it = ports_.find({link, up});
    if (it != ports_.end()) bytes = std::max(bytes, it->second.now - std::max(0.0, it->second.floor));
  }
  return static_cast<sim::Nanos>(bytes / topology_->link_bytes_per_second(link) * 1e9);
}

void LinkQueues::forget_floors() {
  // Ports publish only changes: what each holds now is the new traffic's
  // first measure.
  for (auto& [key, port] : ports_) port.floor = port.now;
}

std::vector<Suspect> rank_congested_links(const sim::Topology& topology,
                                          const std::vector<const telemetry::ProbeResult*>& inflated,
                                          const std::vector<const telemetry::ProbeResult*>& clear,
                                          const LinkQueues& queues, sim::Nanos margin, int min_probes) {
  // Crossings per fabric link on known paths: inflated, clear. A guessed
  // path names no fabric link for sure, so it neither accuses nor clears one.
  std::map<int, std::pair<int, int>> crossings;
  auto count = [&](const telemetry::ProbeResult* p, bool bad) {
    const ProbeLinks links = probe_links(topology, *p);
    if (!links.known) return;
    for (const std::string& name : links.links) {
      auto id = sim::ComponentId::parse(name);
      if (!id || id->kind != sim::ComponentKind::fabric_link) continue;
      if (auto link = topology.link_of(*id)) {
        if (bad)
          ++crossings[*link].first;
        else if (auto it = crossings.find(*link); it != crossings.end())
          ++it->second.second;
      }
    }
  };
  for (const telemetry::ProbeResult* p : inflated) count(p, true);
  for (const telemetry::ProbeResult* p : clear) count(p, false);

  std::vector<Suspect> out;
  std::map<int, std::vector<sim::Nanos>> by_spine;  // kept links' waits per spine
  for (const auto& [link, n] : crossings) {
    const auto [bad, good] = n;
    const sim::Nanos wait = queues.added_wait(link);
    if (bad < min_probes || bad < good || wait <= margin) continue;
    const double share = static_cast<double>(bad) / static_cast<double>(bad + good);
    out.push_back({topology.link_name(link), share * static_cast<double>(bad) / static_cast<double>(inflated.size())});
    by_spine[topology.link_component(link).spine].push_back(wait);
  }
  std::stable_sort(out.begin(), out.end(), [](const Suspect& a, const Suspect& b) { return a.score > b.score; });
  if (out.empty()) return out;
  // A congested spine loads each of its ports alike, so their queues are
  // alike; one congested link slows the flows crossing it, and what they
  // queue at their other ends is the smaller part (half or less, measured).
  for (auto& [spine, waits] : by_spine) {
    if (waits.size() < 2) continue;
    std::sort(waits.rbegin(), waits.rend());
    if (3 * waits[1] < 2 * waits[0]) continue;
    const double best = out.front().score;
    for (Suspect& s : out) s.score *= 0.9;
    out.insert(out.begin(), {sim::ComponentId::make_spine(spine).str(), best});
    break;
  }
  return out;
}

}  // namespace gauntlet::harness
