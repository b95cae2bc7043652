#pragma once
// Underlay localization from probe outcomes, shared by the skeleton and
// pingmesh detectors: the links on failed probe paths that lie on no healthy
// path (or, as loss spares some probes, whose probes fail at least twice as
// often as probes overall), ranked by how
// many failed paths share them (tomography without ECMP knowledge). A probe's links are those the prober reported in
// its `path`; when it reported none, the links it may have crossed: its two host links and, between leaves, every
// leaf~spine link of either leaf. Such a guessed path can accuse links but exonerates only its host links.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "harness/probe_plan/probe_list.hpp"
#include "sim/proto/telemetry.pb.h"
#include "sim/topology.hpp"

namespace gauntlet::harness {

struct ProbeLinks {
  std::vector<std::string> links;  // link component ids
  bool known = false;              // from the reported path, not guessed
};

ProbeLinks probe_links(const sim::Topology& topology, const telemetry::ProbeResult& probe);

// Suspects best first (score = share of its probes that failed x share of
// the failed probes crossing it);
// ties broken by name so the order is reproducible.
std::vector<Suspect> rank_underlay_suspects(const sim::Topology& topology,
                                            const std::vector<const telemetry::ProbeResult*>& failed,
                                            const std::vector<const telemetry::ProbeResult*>& healthy);

// The suspects sharing the best score (the list ranked best first).
std::vector<std::string> top_tied(const std::vector<Suspect>& ranked);

// Known probe routes: (src, dst) endpoints -> the link numbers a probe
// between them reported crossing.
using LearnedRoutes = std::map<std::pair<int, int>, std::vector<int>>;

// Probes that tell tied links apart: for each link, up to `per_link` probes
// whose paths cross it and none of the others, so that only the faulty one's
// probes keep failing. A host link is isolated by probing its RNIC from
// other hosts under the same leaf (the path is the two host links); a fabric
// link by pairs whose learned route crosses it and no other tied link, else
// by `spines` times as many pairs from its leaf to leaves no other tied link
// touches (ECMP spreads them over the spines; each reports its path). A link
// with no such probe gets none.
std::vector<PlannedProbe> identifying_probes(const sim::Topology& topology, const std::vector<std::string>& tied,
                                             const LearnedRoutes& routes, int per_link);

// The host whose RNICs' host links are all of `links` when they are the host
// links of at least two RNICs of one host: what they share is the host.
std::optional<int> common_host(const std::vector<std::string>& links);

// The endpoint number of an RNIC id (h<N>.nic<K>), or -1.
int endpoint_of_nic(const sim::Topology& topology, const std::string& nic);

// A network alert at `now` for suspects ranked best first, unless this
// incident already raised one: the best-scored suspects (ties included) are
// the alert's explanation, and `alerted` remembers them until the incident
// ends. Keeps the five best suspects.
std::optional<Alert> network_alert_once(double now_s, std::vector<Suspect> suspects, std::set<std::string>& alerted);

}  // namespace gauntlet::harness
