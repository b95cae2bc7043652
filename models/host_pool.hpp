#pragma once
// The hosts a job may run on: the ones it uses, its spares, hosts it left
// while broken (they rejoin as spares once repaired) and hosts taken out of
// service by an isolation (back once their fault is repaired). A host is
// usable when it is neither broken nor isolated.
#include <optional>
#include <set>
#include <vector>

#include "models/cluster_state.hpp"
#include "models/job_spec.hpp"
#include "models/placement.hpp"

namespace gauntlet::models {

class HostPool {
 public:
  HostPool(std::vector<int> spares, const ClusterState& cluster, const sim::Topology& topology, SpareLayout layout);

  bool usable(int host) const { return !cluster_.host_broken(host) && !isolated_.count(host); }
  bool all_usable(const std::vector<int>& hosts) const;
  int spares_left() const;
  int spares_used() const { return spares_used_; }
  const std::set<int>& isolated() const { return isolated_; }

  // The hosts a restart runs on: `hosts` with a spare in place of each
  // unusable one, counted as used; nothing when some slot finds no spare.
  std::optional<std::vector<int>> restart_hosts(std::vector<int> hosts);
  // How many more usable hosts a placement on `hosts` needs than the pool
  // can give (0 when restart_hosts would find a spare for every slot).
  int hosts_short(const std::vector<int>& hosts) const;
  // Every host of `hosts` moved one place on within the pool (them and the
  // usable spares they do not already hold, in host order): a benign
  // re-placement. Shift a placement restart_hosts has made usable: a shift
  // first could move a slot onto the spare that later replaces a broken host.
  std::vector<int> shifted(const std::vector<int>& hosts) const;
  // The job now runs on `now` instead of `before`: spares it took leave the
  // pool, healthy hosts it left join it, broken ones rejoin once repaired.
  void moved(const std::vector<int>& before, const Placement& now);
  // Takes hosts out of service. The job cannot shrink: a host it uses
  // leaves only while a spare is left to take its place.
  void isolate(const std::set<int>& hosts, const Placement& placement);
  // A fault of `host` was repaired: once nothing is broken on it, it comes
  // back from isolation and rejoins the pool if the job left it.
  void repaired(int host, const Placement& placement);

 private:
  const ClusterState& cluster_;
  const sim::Topology& topology_;
  SpareLayout layout_;
  std::vector<int> spare_pool_;  // healthy hosts the job may move to, ascending
  std::set<int> isolated_;
  std::set<int> replaced_;  // hosts the job left while broken
  int spares_used_ = 0;
};

}  // namespace gauntlet::models
