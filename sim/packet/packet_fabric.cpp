#include "sim/packet/packet_fabric.hpp"

namespace gauntlet::sim::packet {

PacketFabric::PacketFabric(const Topology& topology, const EcmpRouter& router, const RoceParams& params,
                           std::uint64_t seed, const std::vector<char>& footprint)
    : topology_(topology), params_(params), seed_(seed) {
  const RngStreams streams(seed);
  const int endpoints = topology.endpoints();
  auto wanted = [&footprint](int link) { return footprint.empty() || footprint[static_cast<std::size_t>(link)] != 0; };
  // The switches at the ends of the links built.
  std::vector<char> leaf_used(static_cast<std::size_t>(topology.leaves()), 0),
      spine_used(static_cast<std::size_t>(topology.spines()), 0);
  for (int e = 0; e < endpoints; ++e)
    if (wanted(topology.host_link(e))) leaf_used[static_cast<std::size_t>(topology.leaf_of(e))] = 1;
  for (int l = 0; l < topology.leaves(); ++l)
    for (int s = 0; s < topology.spines(); ++s)
      if (wanted(topology.fabric_link(l, s)))
        leaf_used[static_cast<std::size_t>(l)] = spine_used[static_cast<std::size_t>(s)] = 1;
  ends_.resize(static_cast<std::size_t>(topology.links()));
  leaf_port_of_endpoint_.assign(static_cast<std::size_t>(endpoints), -1);
  std::vector<ns3::Ptr<ns3::Node>> leaf_nodes(static_cast<std::size_t>(topology.leaves())),
      spine_nodes(static_cast<std::size_t>(topology.spines()));
  leaves_.resize(static_cast<std::size_t>(topology.leaves()));
  spines_.resize(static_cast<std::size_t>(topology.spines()));
  for (int l = 0; l < topology.leaves(); ++l) {
    if (!leaf_used[static_cast<std::size_t>(l)]) continue;
    leaf_nodes[static_cast<std::size_t>(l)] = ns3::CreateObject<ns3::Node>();
    leaves_[static_cast<std::size_t>(l)] =
        std::make_unique<RoceSwitch>(params, streams.stream("packet/leaf", static_cast<std::uint64_t>(l)));
  }
  for (int s = 0; s < topology.spines(); ++s) {
    if (!spine_used[static_cast<std::size_t>(s)]) continue;
    spine_nodes[static_cast<std::size_t>(s)] = ns3::CreateObject<ns3::Node>();
    spines_[static_cast<std::size_t>(s)] =
        std::make_unique<RoceSwitch>(params, streams.stream("packet/spine", static_cast<std::uint64_t>(s)));
  }
  // Each link's two ports draw streams 2 * link and 2 * link + 1.
  rnics_.resize(static_cast<std::size_t>(endpoints));
  for (int e = 0; e < endpoints; ++e) {
    const int link = topology.host_link(e);
    if (!wanted(link)) continue;
    const double rate = topology.link_bytes_per_second(link);
    const auto stream = static_cast<std::uint64_t>(link) * 2;
    auto node = ns3::CreateObject<ns3::Node>();
    nodes_.push_back(node);
    LinkEnds& ends = ends_[static_cast<std::size_t>(link)];
    ends.lower = make_port(node, rate, stream);
    const int leaf = topology.leaf_of(e);
    ends.upper = make_port(leaf_nodes[static_cast<std::size_t>(leaf)], rate, stream + 1);
    leaf_port_of_endpoint_[static_cast<std::size_t>(e)] = leaves_[static_cast<std::size_t>(leaf)]->add_port(ends.upper);
    ends.cable = ns3::CreateObject<RoceCable>();
    ends.cable->connect(ends.lower, ends.upper, topology.shape().link_latency);
    rnics_[static_cast<std::size_t>(e)] = std::make_unique<Rnic>(e, params, ends.lower);
  }
  // uplink_[leaf][spine] and downlink_[spine][leaf]: switch port indices
  // (-1 where the link was not built).
  std::vector<std::vector<int>> uplink(static_cast<std::size_t>(topology.leaves()),
                                       std::vector<int>(static_cast<std::size_t>(topology.spines()), -1)),
      downlink(static_cast<std::size_t>(topology.spines()),
               std::vector<int>(static_cast<std::size_t>(topology.leaves()), -1));
  for (int l = 0; l < topology.leaves(); ++l)
    for (int s = 0; s < topology.spines(); ++s) {
      const int link = topology.fabric_link(l, s);
      if (!wanted(link)) continue;
      const double rate = topology.link_bytes_per_second(link);
      const auto stream = static_cast<std::uint64_t>(link) * 2;
      LinkEnds& ends = ends_[static_cast<std::size_t>(link)];
      ends.lower = make_port(leaf_nodes[static_cast<std::size_t>(l)], rate, stream);
      ends.upper = make_port(spine_nodes[static_cast<std::size_t>(s)], rate, stream + 1);
      ends.lower_switch_port = leaves_[static_cast<std::size_t>(l)]->add_port(ends.lower);
      uplink[static_cast<std::size_t>(l)][static_cast<std::size_t>(s)] = ends.lower_switch_port;
      downlink[static_cast<std::size_t>(s)][static_cast<std::size_t>(l)] =
          spines_[static_cast<std::size_t>(s)]->add_port(ends.upper);
      ends.cable = ns3::CreateObject<RoceCable>();
      ends.cable->connect(ends.lower, ends.upper, topology.shape().link_latency);
    }
  const Topology* t = &topology_;
  const EcmpRouter* r = &router;
  const std::vector<int>* by_endpoint = &leaf_port_of_endpoint_;
  for (int l = 0; l < topology.leaves(); ++l) {
    if (!leaves_[static_cast<std::size_t>(l)]) continue;
    leaves_[static_cast<std::size_t>(l)]->set_forwarding(
        [t, r, by_endpoint, l, up = uplink[static_cast<std::size_t>(l)]](const RoceHeader& h) {
          if (h.dst < 0 || h.dst >= t->endpoints()) return -1;
          if (t->leaf_of(h.dst) == l) return (*by_endpoint)[static_cast<std::size_t>(h.dst)];
          const int spine = r->spine_for(h.src, h.dst);
          return spine < 0 ? -1 : up[static_cast<std::size_t>(spine)];
        });
  }
  for (int s = 0; s < topology.spines(); ++s) {
    if (!spines_[static_cast<std::size_t>(s)]) continue;
    spines_[static_cast<std::size_t>(s)]->set_forwarding(
        [t, down = downlink[static_cast<std::size_t>(s)]](const RoceHeader& h) {
          if (h.dst < 0 || h.dst >= t->endpoints()) return -1;
          return down[static_cast<std::size_t>(t->leaf_of(h.dst))];
        });
  }
  for (auto& n : leaf_nodes)
    if (n) nodes_.push_back(n);
  for (auto& n : spine_nodes)
    if (n) nodes_.push_back(n);
}

PacketFabric::~PacketFabric() {
  rnics_.clear();
  leaves_.clear();
  spines_.clear();
  for (LinkEnds& ends : ends_) {
    if (!ends.lower) continue;
    ends.lower->Dispose();
    ends.upper->Dispose();
    ends.cable->Dispose();
  }
}

ns3::Ptr<RocePort> PacketFabric::make_port(ns3::Ptr<ns3::Node> node, double bytes_per_second, std::uint64_t stream) {
  auto port = ns3::CreateObject<RocePort>();
  port->configure(bytes_per_second, params_.data_priority, RngStreams(seed_).stream("packet/port", stream));
  node->AddDevice(port);
  return port;
}

}  // namespace gauntlet::sim::packet
