#pragma once
// The operator's view of a spine-leaf RoCE cluster: which RNIC attaches to
// which leaf, what links exist and what they are called. Plain data with no
// simulation state; detectors may read it, engines build platforms from it.
#include <optional>
#include <string>
#include <vector>

#include "sim/component_id.hpp"
#include "sim/time.hpp"

namespace gauntlet::sim {

struct ClusterShape {
  int spines = 1;
  int leaves = 1;
  int hosts = 1;
  int gpus_per_host = 8;
  int rnics_per_host = 1;
  bool rail_optimized = true;  // RNIC K of every host in a pod on rail leaf K
  double host_link_gbps = 400;
  double fabric_link_gbps = 400;
  Nanos link_latency = kMicrosecond;
};

// Endpoints are RNICs, numbered host * rnics_per_host + nic. Links are
// numbered host links first (one per endpoint, same number), then fabric
// links leaf * spines + spine.
class Topology {
 public:
  // Throws std::invalid_argument when the shape cannot be wired (for example
  // a rail-optimized fabric whose leaf count is not a multiple of the rails).
  explicit Topology(const ClusterShape& shape);

  const ClusterShape& shape() const { return shape_; }
  int hosts() const { return shape_.hosts; }
  int spines() const { return shape_.spines; }
  int leaves() const { return shape_.leaves; }
  int endpoints() const { return shape_.hosts * shape_.rnics_per_host; }
  int endpoint(int host, int nic) const { return host * shape_.rnics_per_host + nic; }
  int host_of(int endpoint) const { return endpoint / shape_.rnics_per_host; }
  int nic_of(int endpoint) const { return endpoint % shape_.rnics_per_host; }
  int leaf_of(int endpoint) const { return leaf_of_endpoint_[static_cast<std::size_t>(endpoint)]; }
  int pod_of_host(int host) const { return host / hosts_per_group_; }
  // GPU K of a host uses RNIC K * rnics / gpus (GPU-RNIC affinity).
  int nic_of_gpu(int gpu) const { return gpu * shape_.rnics_per_host / shape_.gpus_per_host; }

  int host_link(int endpoint) const { return endpoint; }
  int fabric_link(int leaf, int spine) const { return endpoints() + leaf * shape_.spines + spine; }
  // The ends of a fabric link, fabric_link's inverse.
  int leaf_of_fabric_link(int link) const { return (link - endpoints()) / shape_.spines; }
  int spine_of_fabric_link(int link) const { return (link - endpoints()) % shape_.spines; }
  int links() const { return endpoints() + shape_.leaves * shape_.spines; }
  bool is_fabric_link(int link) const { return link >= endpoints(); }
  double link_bytes_per_second(int link) const;
  ComponentId link_component(int link) const;
  std::string link_name(int link) const { return link_component(link).str(); }
  std::optional<int> link_of(const ComponentId& id) const;

  // Whether the id names a component that exists in this cluster.
  bool contains(const ComponentId& id) const;
  // Every component id, in a fixed order (hosts and their parts, then
  // switches, then links); the universe that target globs are matched against.
  std::vector<std::string> component_names() const;

 private:
  ClusterShape shape_;
  int hosts_per_group_ = 1;  // hosts per pod (rail) or per leaf (plain)
  std::vector<int> leaf_of_endpoint_;
};

}  // namespace gauntlet::sim
