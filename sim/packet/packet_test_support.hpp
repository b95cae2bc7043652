#pragma once
// The small fabrics the packet engine's tests run on: `leaves` leaves of
// hosts with one 400 Gb/s RNIC each under two spines, 1 us per link.
#include "sim/topology.hpp"

namespace gauntlet::sim {

inline ClusterShape small_packet_fabric(int hosts = 4, int leaves = 2) {
  ClusterShape s;
  s.spines = 2;
  s.leaves = leaves;
  s.hosts = hosts;
  s.gpus_per_host = 1;
  s.rnics_per_host = 1;
  s.rail_optimized = false;
  s.host_link_gbps = 400;
  s.fabric_link_gbps = 400;
  s.link_latency = kMicrosecond;
  return s;
}

}  // namespace gauntlet::sim
