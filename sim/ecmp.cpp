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

std::uint16_t connection_source_port(EndpointId src, EndpointId dst) {
  return static_cast<std::uint16_t>(0xC000 | ((src * 131 + dst) & 0x3FFF));
}

int EcmpRouter::spine_for(EndpointId src, EndpointId dst) const {
  return spine_for(src, dst, connection_source_port(src, dst));
}

int EcmpRouter::spine_for(EndpointId src, EndpointId dst, std::uint16_t source_port) const {
  const int src_leaf = topology_->leaf_of(src);
  const int dst_leaf = topology_->leaf_of(dst);
  if (src_leaf == dst_leaf) return -1;
  std::uint64_t flow = splitmix64(seed_ ^ (static_cast<std::uint64_t>(src) << 32) ^ static_cast<std::uint64_t>(dst));
  // The hash of the 5-tuple: the pair's part, moved by the source port's
  // difference from the connection's (which leaves connections where they
  // always were).
  if (const std::uint16_t delta = source_port ^ connection_source_port(src, dst); delta != 0)
    flow = splitmix64(flow ^ (0x1'0000'0000ULL * delta));
  int best = -1, fallback = -1;
  std::uint64_t best_weight = 0, fallback_weight = 0;
  for (int s = 0; s < topology_->spines(); ++s) {
    const std::uint64_t weight = splitmix64(flow + static_cast<std::uint64_t>(s));
    if (fallback < 0 || weight > fallback_weight) fallback = s, fallback_weight = weight;
    if (!fabric_link_usable(src_leaf, s) || !fabric_link_usable(dst_leaf, s)) continue;
    if (best < 0 || weight > best_weight) best = s, best_weight = weight;
  }
  return best >= 0 ? best : fallback;
}

std::vector<LinkId> EcmpRouter::route(EndpointId src, EndpointId dst) const {
  return route(src, dst, connection_source_port(src, dst));
}

std::vector<LinkId> EcmpRouter::route(EndpointId src, EndpointId dst, std::uint16_t source_port) const {
  std::vector<LinkId> links{topology_->host_link(src)};
  if (int spine = spine_for(src, dst, source_port); spine >= 0) {
    links.push_back(topology_->fabric_link(topology_->leaf_of(src), spine));
    links.push_back(topology_->fabric_link(topology_->leaf_of(dst), spine));
  }
  links.push_back(topology_->host_link(dst));
  return links;
}

}  // namespace gauntlet::sim
