#pragma once
// The probes a skeleton prober runs and the components each one's path
// crosses: the part of probe planning a detector needs, over the operator's
// topology and routes alone (no cost model, no job).
#include <functional>
#include <string>
#include <vector>

#include "sim/network_engine.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

struct PlannedProbe {
  sim::EndpointId src = 0;
  sim::EndpointId dst = 0;
  bool overlay = false;
};

using RouteFn = std::function<std::vector<sim::LinkId>(sim::EndpointId, sim::EndpointId)>;

// Components of a path matrix: the topology's links, then one flow table per
// endpoint.
inline int flow_table_component(const sim::Topology& t, sim::EndpointId e) { return t.links() + e; }
inline int component_count(const sim::Topology& t) { return t.links() + t.endpoints(); }
std::string component_name(const sim::Topology& t, int component);
std::vector<int> probe_components(const sim::Topology& t, const PlannedProbe& probe, const RouteFn& route);

// Probes for `groups` as plan_skeleton builds them, with each probe's source
// chosen to balance load: the list a skeleton prober runs.
std::vector<PlannedProbe> skeleton_probe_list(const sim::Topology& t,
                                              const std::vector<std::vector<sim::EndpointId>>& groups,
                                              const RouteFn& route, int* unidentifiable = nullptr);

}  // namespace gauntlet::harness
