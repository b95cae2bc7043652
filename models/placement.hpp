#pragma once
// Where each rank of a job runs and which communicators it belongs to.
// Ranks are laid out tensor-parallel innermost (inside a host, over NVLink),
// then data-parallel, then pipeline stages, as Megatron-style launchers do.
#include <string>
#include <vector>

#include "models/job_spec.hpp"
#include "sim/network_engine.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

struct RankPlace {
  int host = 0;
  int gpu = 0;                  // GPU index within the host
  sim::EndpointId endpoint = 0;  // the RNIC this GPU uses (GPU-RNIC affinity)
  int tp = 0, dp = 0, pp = 0;   // coordinates in the parallel grid
};

// One data-parallel ring: the ranks sharing a (pp stage, tp index).
struct DpGroup {
  std::string communicator;  // "dp.pp<j>.tp<k>"
  std::vector<int> ranks;    // global ranks in ring order
};

class Placement {
 public:
  // Throws std::invalid_argument when the job does not fit the cluster.
  Placement(const JobSpec& job, const sim::Topology& topology);

  int ranks() const { return static_cast<int>(ranks_.size()); }
  const RankPlace& rank(int r) const { return ranks_[static_cast<std::size_t>(r)]; }
  const std::vector<DpGroup>& dp_groups() const { return dp_groups_; }
  std::string worker_name(int r) const;  // h<N>.gpu<K>
  int hosts_used() const { return hosts_used_; }

 private:
  std::vector<RankPlace> ranks_;
  std::vector<DpGroup> dp_groups_;
  int hosts_used_ = 0;
};

}  // namespace gauntlet::models
