#pragma once
// Underlay localization from probe outcomes, shared by the skeleton and
// pingmesh detectors: the links on failed probe paths that lie on no healthy
// path (or, as loss spares some probes, whose probes fail at least twice as
// often as probes overall), ranked by how
// many failed paths share them (tomography without ECMP knowledge). A probe's links are those the prober reported in its `path`;
// when it reported none, the links it may have crossed: its two host links
// and, between leaves, every leaf~spine link of either leaf. Such a guessed
// path can accuse links but exonerates only its host links.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/detectors/alert.hpp"
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

// The endpoint number of an RNIC id (h<N>.nic<K>), or -1.
int endpoint_of_nic(const sim::Topology& topology, const std::string& nic);

// A network alert at `now` for suspects ranked best first, unless this
// incident already raised one: the best-scored suspects (ties included) are
// the alert's explanation, and `alerted` remembers them until the incident
// ends. Keeps the five best suspects.
std::optional<Alert> network_alert_once(double now_s, std::vector<Suspect> suspects, std::set<std::string>& alerted);

}  // namespace gauntlet::harness
