#include "sim/topology.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace gauntlet::sim {

Topology::Topology(const ClusterShape& shape) : shape_(shape) {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument(message);
  };
  require(shape.spines >= 1 && shape.leaves >= 1 && shape.hosts >= 1,
          "cluster needs at least one spine, leaf and host");
  require(shape.gpus_per_host >= 1 && shape.rnics_per_host >= 1, "hosts need at least one GPU and one RNIC");
  require(shape.rnics_per_host <= shape.gpus_per_host, "rnics_per_host cannot exceed gpus_per_host");
  require(shape.host_link_gbps > 0 && shape.fabric_link_gbps > 0, "link bandwidths must be positive");
  require(shape.link_latency >= 0, "link latency cannot be negative");
  // Endpoints and links are numbered with int: the counts must fit one.
  const long long rnics = static_cast<long long>(shape.hosts) * shape.rnics_per_host;
  const long long fabric_links = static_cast<long long>(shape.leaves) * shape.spines;
  const long long gpus = static_cast<long long>(shape.hosts) * shape.gpus_per_host;
  require(rnics + fabric_links <= std::numeric_limits<int>::max() && gpus <= std::numeric_limits<int>::max(),
          "the cluster has more RNICs, links or GPUs than can be numbered (" + std::to_string(rnics) + " RNICs, " +
              std::to_string(fabric_links) + " fabric links, " + std::to_string(gpus) + " GPUs)");
  int groups;
  if (shape.rail_optimized) {
    require(shape.leaves % shape.rnics_per_host == 0,
            "rail_optimized needs leaves to be a multiple of rnics_per_host (one rail leaf per RNIC per pod)");
    groups = shape.leaves / shape.rnics_per_host;  // pods
  } else {
    groups = shape.leaves;
  }
  hosts_per_group_ = (shape.hosts + groups - 1) / groups;
  leaf_of_endpoint_.resize(static_cast<std::size_t>(endpoints()));
  for (int e = 0; e < endpoints(); ++e) {
    int group = host_of(e) / hosts_per_group_;
    leaf_of_endpoint_[static_cast<std::size_t>(e)] =
        shape.rail_optimized ? group * shape.rnics_per_host + nic_of(e) : group;
  }
}

double Topology::link_bytes_per_second(int link) const {
  double gbps = is_fabric_link(link) ? shape_.fabric_link_gbps : shape_.host_link_gbps;
  return gbps * 1e9 / 8.0;
}

ComponentId Topology::link_component(int link) const {
  if (!is_fabric_link(link)) return ComponentId::make_host_link(host_of(link), nic_of(link), leaf_of(link));
  return ComponentId::make_fabric_link(leaf_of_fabric_link(link), spine_of_fabric_link(link));
}

std::optional<int> Topology::link_of(const ComponentId& id) const {
  if (!contains(id)) return std::nullopt;
  if (id.kind == ComponentKind::host_link) return host_link(endpoint(id.host, id.index));
  if (id.kind == ComponentKind::fabric_link) return fabric_link(id.leaf, id.spine);
  return std::nullopt;
}

bool Topology::contains(const ComponentId& id) const {
  auto in = [](int v, int n) { return v >= 0 && v < n; };
  switch (id.kind) {
    case ComponentKind::host:
    case ComponentKind::cpu:
    case ComponentKind::agent:
      return in(id.host, shape_.hosts);
    case ComponentKind::gpu:
      return in(id.host, shape_.hosts) && in(id.index, shape_.gpus_per_host);
    case ComponentKind::nic:
    case ComponentKind::flow_table:
      return in(id.host, shape_.hosts) && in(id.index, shape_.rnics_per_host);
    case ComponentKind::leaf:
      return in(id.leaf, shape_.leaves);
    case ComponentKind::spine:
      return in(id.spine, shape_.spines);
    case ComponentKind::host_link:
      return in(id.host, shape_.hosts) && in(id.index, shape_.rnics_per_host) &&
             leaf_of(endpoint(id.host, id.index)) == id.leaf;
    case ComponentKind::fabric_link:
      return in(id.leaf, shape_.leaves) && in(id.spine, shape_.spines);
  }
  return false;
}

std::vector<std::string> Topology::component_names() const {
  std::vector<std::string> names;
  for (int h = 0; h < shape_.hosts; ++h) {
    names.push_back(ComponentId::make_host(h).str());
    names.push_back(ComponentId::make_cpu(h).str());
    names.push_back(ComponentId::make_agent(h).str());
    for (int k = 0; k < shape_.gpus_per_host; ++k) names.push_back(ComponentId::make_gpu(h, k).str());
    for (int k = 0; k < shape_.rnics_per_host; ++k) {
      names.push_back(ComponentId::make_nic(h, k).str());
      names.push_back(ComponentId::make_flow_table(h, k).str());
    }
  }
  for (int l = 0; l < shape_.leaves; ++l) names.push_back(ComponentId::make_leaf(l).str());
  for (int s = 0; s < shape_.spines; ++s) names.push_back(ComponentId::make_spine(s).str());
  for (int link = 0; link < links(); ++link) names.push_back(link_name(link));
  return names;
}

}  // namespace gauntlet::sim
