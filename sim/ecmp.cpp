#include "sim/ecmp.hpp"

#include "sim/rng.hpp"

namespace gauntlet::sim {

EcmpRouter::EcmpRouter(const Topology& topology, std::uint64_t seed)
    : topology_(&topology),
      seed_(mix_seed(seed, "ecmp")),
      usable_(static_cast<std::size_t>(topology.leaves() * topology.spines()), 1) {}

void EcmpRouter::set_fabric_link_usable(int leaf, int spine, bool usable) {
  usable_[static_cast<std::size_t>(leaf * topology_->spines() + spine)] = usable ? 1 : 0;
}

bool EcmpRouter::fabric_link_usable(int leaf, int spine) const {
  return usable_[static_cast<std::size_t>(leaf * topology_->spines() + spine)] != 0;
}

int EcmpRouter::spine_for(EndpointId src, EndpointId dst) const {
  const int src_leaf = topology_->leaf_of(src);
  const int dst_leaf = topology_->leaf_of(dst);
  if (src_leaf == dst_leaf) return -1;
  const std::uint64_t connection =
      splitmix64(seed_ ^ (static_cast<std::uint64_t>(src) << 32) ^ static_cast<std::uint64_t>(dst));
  int best = -1, fallback = -1;
  std::uint64_t best_weight = 0, fallback_weight = 0;
  for (int s = 0; s < topology_->spines(); ++s) {
    const std::uint64_t weight = splitmix64(connection + static_cast<std::uint64_t>(s));
    if (fallback < 0 || weight > fallback_weight) fallback = s, fallback_weight = weight;
    if (!fabric_link_usable(src_leaf, s) || !fabric_link_usable(dst_leaf, s)) continue;
    if (best < 0 || weight > best_weight) best = s, best_weight = weight;
  }
  return best >= 0 ? best : fallback;
}

std::vector<LinkId> EcmpRouter::route(EndpointId src, EndpointId dst) const {
  std::vector<LinkId> links{topology_->host_link(src)};
  if (int spine = spine_for(src, dst); spine >= 0) {
    links.push_back(topology_->fabric_link(topology_->leaf_of(src), spine));
    links.push_back(topology_->fabric_link(topology_->leaf_of(dst), spine));
  }
  links.push_back(topology_->host_link(dst));
  return links;
}

}  // namespace gauntlet::sim
