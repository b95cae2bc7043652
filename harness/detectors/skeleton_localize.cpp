#include "harness/detectors/skeleton_localize.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "sim/component_id.hpp"

namespace gauntlet::harness {

int endpoint_of_nic(const sim::Topology& topology, const std::string& nic) {
  auto id = sim::ComponentId::parse(nic);
  if (!id || id->kind != sim::ComponentKind::nic || !topology.contains(*id)) return -1;
  return topology.endpoint(id->host, id->index);
}

ProbeLinks probe_links(const sim::Topology& topology, const telemetry::ProbeResult& probe) {
  ProbeLinks out;
  for (const std::string& c : probe.path()) {
    auto id = sim::ComponentId::parse(c);
    if (id && (id->kind == sim::ComponentKind::host_link || id->kind == sim::ComponentKind::fabric_link))
      out.links.push_back(c);
  }
  if (!out.links.empty()) {
    out.known = true;
    return out;
  }
  const int src = endpoint_of_nic(topology, probe.src());
  const int dst = endpoint_of_nic(topology, probe.dst());
  if (src < 0 || dst < 0) return out;
  out.links.push_back(topology.link_name(topology.host_link(src)));
  out.links.push_back(topology.link_name(topology.host_link(dst)));
  if (topology.leaf_of(src) != topology.leaf_of(dst))
    for (int spine = 0; spine < topology.spines(); ++spine) {
      out.links.push_back(topology.link_name(topology.fabric_link(topology.leaf_of(src), spine)));
      out.links.push_back(topology.link_name(topology.fabric_link(topology.leaf_of(dst), spine)));
    }
  return out;
}

std::vector<Suspect> rank_underlay_suspects(const sim::Topology& topology,
                                            const std::vector<const telemetry::ProbeResult*>& failed,
                                            const std::vector<const telemetry::ProbeResult*>& healthy) {
  // Crossings per link: failed, healthy. A guessed path vouches only for its host links.
  std::map<std::string, std::pair<int, int>> crossings;
  for (const telemetry::ProbeResult* p : failed)
    for (const std::string& link : probe_links(topology, *p).links) ++crossings[link].first;
  for (const telemetry::ProbeResult* p : healthy) {
    ProbeLinks links = probe_links(topology, *p);
    const std::size_t vouched = links.known ? links.links.size() : std::min<std::size_t>(2, links.links.size());
    for (std::size_t i = 0; i < vouched; ++i) {
      auto it = crossings.find(links.links[i]);
      if (it != crossings.end()) ++it->second.second;
    }
  }
  // A link that delays probes fails every probe crossing it; a lossy one
  // fails some ping trains and lets others through (a 1% loss link about a
  // third of them). A link stays a suspect while the probes crossing it fail
  // at least twice as often as probes overall.
  const double background = static_cast<double>(failed.size()) /
                            static_cast<double>(std::max<std::size_t>(1, failed.size() + healthy.size()));
  std::vector<Suspect> out;
  for (const auto& [link, n] : crossings) {
    const auto [bad, good] = n;
    const double failing = static_cast<double>(bad) / static_cast<double>(bad + good);
    if (failing < std::min(1.0, 2 * background)) continue;
    out.push_back({link, failing * static_cast<double>(bad) / static_cast<double>(failed.size())});
  }
  std::stable_sort(out.begin(), out.end(), [](const Suspect& a, const Suspect& b) { return a.score > b.score; });
  return out;
}

std::vector<std::string> top_tied(const std::vector<Suspect>& ranked) {
  std::vector<std::string> out;
  for (const Suspect& s : ranked)
    if (s.score >= ranked.front().score) out.push_back(s.id);
  return out;
}

std::vector<PlannedProbe> identifying_probes(const sim::Topology& topology, const std::vector<std::string>& tied,
                                             const LearnedRoutes& routes, int per_link) {
  std::set<int> tied_links;
  for (const std::string& name : tied)
    if (auto id = sim::ComponentId::parse(name))
      if (auto link = topology.link_of(*id)) tied_links.insert(*link);
  std::vector<PlannedProbe> out;
  for (const int link : tied_links) {
    int planned = 0;
    if (!topology.is_fabric_link(link)) {
      const int target = link;  // a host link's number is its endpoint's
      for (int peer = 0; peer < topology.endpoints() && planned < per_link; ++peer) {
        if (topology.leaf_of(peer) != topology.leaf_of(target) || topology.host_of(peer) == topology.host_of(target) ||
            tied_links.count(topology.host_link(peer)))
          continue;
        out.push_back({peer, target, false});
        ++planned;
      }
      continue;
    }
    for (const auto& [pair, route] : routes) {
      if (planned >= per_link) break;
      const bool crosses = std::find(route.begin(), route.end(), link) != route.end();
      const bool others =
          std::any_of(route.begin(), route.end(), [&](int l) { return l != link && tied_links.count(l) > 0; });
      if (crosses && !others) {
        out.push_back({pair.first, pair.second, false});
        ++planned;
      }
    }
    if (planned >= per_link) continue;
    // Too few known routes: pairs from this link's leaf to leaves no other
    // tied link touches. ECMP sends about one in `spines` of them over this
    // link, and each reports the path it took.
    const int leaf = topology.leaf_of_fabric_link(link);
    std::set<int> other_leaves{leaf};
    for (const int l : tied_links)
      if (topology.is_fabric_link(l)) other_leaves.insert(topology.leaf_of_fabric_link(l));
    std::vector<int> near, far;
    for (int e = 0; e < topology.endpoints(); ++e) {
      if (tied_links.count(topology.host_link(e))) continue;
      if (topology.leaf_of(e) == leaf)
        near.push_back(e);
      else if (!other_leaves.count(topology.leaf_of(e)))
        far.push_back(e);
    }
    if (near.empty() || far.empty()) continue;
    const std::size_t wanted = static_cast<std::size_t>((per_link - planned) * topology.spines());
    for (std::size_t i = 0; i < wanted && i < far.size(); ++i)
      out.push_back({near[i % near.size()], far[(i * 7919) % far.size()], false});
  }
  return out;
}

std::optional<int> common_host(const std::vector<std::string>& links) {
  std::set<int> hosts, rnics;
  for (const std::string& name : links) {
    auto id = sim::ComponentId::parse(name);
    if (!id || id->kind != sim::ComponentKind::host_link) return std::nullopt;
    hosts.insert(id->host);
    rnics.insert(id->index);
  }
  if (hosts.size() != 1 || rnics.size() < 2) return std::nullopt;
  return *hosts.begin();
}

std::optional<Alert> network_alert_once(double now_s, std::vector<Suspect> suspects, std::set<std::string>& alerted) {
  if (suspects.empty()) return std::nullopt;
  std::vector<std::string> best;
  for (const Suspect& s : suspects)
    if (s.score >= suspects.front().score) best.push_back(s.id);
  if (std::any_of(best.begin(), best.end(), [&alerted](const std::string& id) { return alerted.count(id) > 0; }))
    return std::nullopt;
  alerted.insert(best.begin(), best.end());
  if (suspects.size() > 5) suspects.resize(5);
  Alert a;
  a.time_s = now_s;
  a.kind = "network";
  a.suspects = std::move(suspects);
  return a;
}

}  // namespace gauntlet::harness
