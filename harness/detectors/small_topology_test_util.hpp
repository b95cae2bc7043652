#pragma once
// The probing detectors' unit tests' cluster: 4 hosts x 2 GPUs x 2 RNICs,
// rail-optimized in two pods (leaf0 holds h0.nic0 and h1.nic0, leaf1 their
// nic1s, leaf2 and leaf3 the same for h2 and h3), two spines.
#include "sim/topology.hpp"

namespace gauntlet::harness {

inline sim::Topology small_two_pod_topology() {
  sim::ClusterShape shape;
  shape.spines = 2;
  shape.leaves = 4;
  shape.hosts = 4;
  shape.gpus_per_host = 2;
  shape.rnics_per_host = 2;
  shape.rail_optimized = true;
  return sim::Topology(shape);
}

}  // namespace gauntlet::harness
