#pragma once
// The traffic skeleton a SkeletonHunter-style prober infers without the
// tenant's parallelism config: the RNIC endpoints of each communication group
// whose traffic repeats every iteration.
//
// Evidence. The paper groups RNICs whose counters show the same periodic
// bursts. Simulated runs publish no NicCounters and burst grouping from them
// is not implemented here; the groups are taken from what the collective
// library reports instead (a documented fallback): each ring edge of a
// CollectiveRecord (`worker` -> `peer`) is a flow from the worker's RNIC to
// the peer's RNIC (GPU K uses RNIC nic_of_gpu(K)). Only edges that recur in
// at least `min_repeats` iterations count, so a one-off transfer (a debug
// send, a checkpoint copy) does not enter the skeleton. Edges inside one host
// ride NVLink and carry no RNIC traffic.
//
// Versions. Edges not seen for `stale_after` drop out; when the set of
// talking endpoints changes (containers re-placed after a restart) the
// skeleton gets a new version. While nothing talks (the job is down) the last
// skeleton stays.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"
#include "sim/network_engine.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

class SkeletonInference {
 public:
  SkeletonInference(const sim::Topology* topology, int min_repeats, sim::Nanos stale_after)
      : topology_(topology), min_repeats_(min_repeats), stale_after_(stale_after) {}

  // One collective record seen at `at`; `repeats` > 1 for a steady run's
  // record standing for that many iterations, the last at `last_at`.
  void add(const telemetry::CollectiveRecord& record, sim::Nanos at, long long repeats = 1, sim::Nanos last_at = -1);

  // Recomputes the skeleton as of `now`; true when its version changed.
  bool refresh(sim::Nanos now);

  int version() const { return version_; }
  // Groups of RNIC endpoints, each sorted, in communicator-name order.
  const std::vector<std::vector<sim::EndpointId>>& groups() const { return groups_; }
  // Directed endpoint pairs of the recurring ring edges.
  const std::set<std::pair<sim::EndpointId, sim::EndpointId>>& edges() const { return edges_; }

 private:
  struct EdgeEvidence {
    std::set<unsigned long long> iterations;  // sequence numbers seen singly (capped)
    long long steady_iterations = 0;          // iterations stood for by steady runs
    sim::Nanos last_seen = 0;
  };
  using EdgeKey = std::pair<std::string, std::pair<sim::EndpointId, sim::EndpointId>>;  // communicator, src, dst

  const sim::Topology* topology_;
  int min_repeats_;
  sim::Nanos stale_after_;
  std::map<EdgeKey, EdgeEvidence> evidence_;
  int version_ = 0;
  std::vector<std::vector<sim::EndpointId>> groups_;
  std::set<std::pair<sim::EndpointId, sim::EndpointId>> edges_;
};

}  // namespace gauntlet::harness
