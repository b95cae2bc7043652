#pragma once
// Where each rank of a job runs and which communicators it belongs to.
// Ranks are laid out tensor-parallel innermost (inside a host, over NVLink),
// then data-parallel, then pipeline stages, as Megatron-style launchers do.
// The job's hosts are slots 0..hosts_used-1; which physical host fills each
// slot changes when the job is re-placed (spares, reconfiguration).
#include <optional>
#include <string>
#include <vector>

#include "models/job_spec.hpp"
#include "sim/network_engine.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

struct RankPlace {
  int host = 0;
  int gpu = 0;                   // GPU index within the host
  sim::EndpointId endpoint = 0;  // the RNIC this GPU uses (GPU-RNIC affinity)
  int tp = 0, dp = 0, pp = 0;    // coordinates in the parallel grid
};

// A communicator: its name and its global ranks in ring order.
struct DpGroup {
  std::string communicator;  // "dp.pp<j>.tp<k>", "tp.pp<j>.dp<i>", "ep.pp<j>.tp<k>.g<e>"
  std::vector<int> ranks;
};

// Adjacent pipeline stages of one (dp, tp) column: activations go from
// `sender` (stage j) to `receiver` (stage j+1), gradients come back.
struct PipelineEdge {
  std::string communicator;  // "pp.dp<i>.tp<k>"
  int stage = 0;             // j
  int sender = 0, receiver = 0;
};

class Placement {
 public:
  // Throws std::invalid_argument when the job does not fit the cluster.
  // The job fills hosts 0..hosts_used-1.
  Placement(const JobSpec& job, const sim::Topology& topology);
  // The job's host slots filled by these physical hosts (one per slot).
  Placement(const JobSpec& job, const sim::Topology& topology, const std::vector<int>& hosts);

  int ranks() const { return static_cast<int>(ranks_.size()); }
  const RankPlace& rank(int r) const { return ranks_[static_cast<std::size_t>(r)]; }
  const std::vector<DpGroup>& dp_groups() const { return dp_groups_; }
  const std::vector<DpGroup>& tp_groups() const { return tp_groups_; }
  const std::vector<DpGroup>& ep_groups() const { return ep_groups_; }
  const std::vector<PipelineEdge>& pipeline_edges() const { return pipeline_edges_; }
  std::string worker_name(int r) const;  // h<N>.gpu<K>
  int hosts_used() const { return static_cast<int>(hosts_.size()); }
  const std::vector<int>& hosts() const { return hosts_; }  // physical host per slot
  bool uses_host(int host) const;

  // Slots a job of this shape needs on this cluster.
  static int hosts_needed(const JobSpec& job, const sim::Topology& topology);

 private:
  std::vector<RankPlace> ranks_;
  std::vector<DpGroup> dp_groups_, tp_groups_, ep_groups_;
  std::vector<PipelineEdge> pipeline_edges_;
  std::vector<int> hosts_;
};

// NCCL's choice when RNIC `failed_nic` of a host with `rnics_per_host` RNICs
// goes down: nic0's GPUs move to nic1, every other RNIC's to nic0. Returns
// nullopt when the host has no other RNIC to fall back to. A rule of where
// ranks' traffic may go, not fault state: a policy may ask it (it is inline,
// in the placement every job shows) without linking the job model.
constexpr std::optional<int> nccl_fallback_rnic(int failed_nic, int rnics_per_host) {
  if (failed_nic != 0) return 0;
  if (rnics_per_host > 1) return 1;
  return std::nullopt;
}

}  // namespace gauntlet::models
