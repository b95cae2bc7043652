#include "sim/packet/packet_fabric.hpp"

#include <string>

#include "sim/contract.hpp"

namespace gauntlet::sim::packet {

namespace {

std::size_t at(int index) { return static_cast<std::size_t>(index); }

}  // namespace

PacketFabric::PacketFabric(const Topology& topology, const EcmpRouter& router, const RoceParams& params,
                           std::uint64_t seed, const std::vector<char>& footprint)
    : topology_(topology), params_(params), seed_(seed), footprint_(footprint) {
  ends_.resize(at(topology.links()));
  leaf_port_of_endpoint_.assign(at(topology.endpoints()), -1);
  SwitchNodes switches = build_switches();
  build_host_links(switches);
  const SwitchPorts ports = build_fabric_links(switches);
  set_forwarding(router, ports);
  for (auto& n : switches.leaves)
    if (n) nodes_.push_back(n);
  for (auto& n : switches.spines)
    if (n) nodes_.push_back(n);
  // Every link built has both ends and its cable, and an RNIC on a host link.
  for (int link = 0; link < links(); ++link) {
    const LinkEnds& ends = ends_[at(link)];
    GAUNTLET_INVARIANT(!ends.lower == !ends.upper && !ends.lower == !ends.cable &&
                           (!ends.lower || topology.is_fabric_link(link) || rnics_[at(link)] != nullptr),
                       "link " + topology.link_name(link) + " half built");
  }
}

bool PacketFabric::wanted(int link) const { return footprint_.empty() || footprint_[at(link)] != 0; }

// The switches at the ends of the links built, each on a node of its own.
PacketFabric::SwitchNodes PacketFabric::build_switches() {
  const Topology& t = topology_;
  const RngStreams streams(seed_);
  std::vector<char> leaf_used(at(t.leaves()), 0), spine_used(at(t.spines()), 0);
  for (int e = 0; e < t.endpoints(); ++e)
    if (wanted(t.host_link(e))) leaf_used[at(t.leaf_of(e))] = 1;
  for (int l = 0; l < t.leaves(); ++l)
    for (int s = 0; s < t.spines(); ++s)
      if (wanted(t.fabric_link(l, s))) leaf_used[at(l)] = spine_used[at(s)] = 1;
  SwitchNodes nodes{std::vector<ns3::Ptr<ns3::Node>>(at(t.leaves())), std::vector<ns3::Ptr<ns3::Node>>(at(t.spines()))};
  leaves_.resize(at(t.leaves()));
  spines_.resize(at(t.spines()));
  for (int l = 0; l < t.leaves(); ++l) {
    if (!leaf_used[at(l)]) continue;
    nodes.leaves[at(l)] = ns3::CreateObject<ns3::Node>();
    leaves_[at(l)] =
        std::make_unique<RoceSwitch>(params_, streams.stream("packet/leaf", static_cast<std::uint64_t>(l)));
  }
  for (int s = 0; s < t.spines(); ++s) {
    if (!spine_used[at(s)]) continue;
    nodes.spines[at(s)] = ns3::CreateObject<ns3::Node>();
    spines_[at(s)] =
        std::make_unique<RoceSwitch>(params_, streams.stream("packet/spine", static_cast<std::uint64_t>(s)));
  }
  return nodes;
}

// Each link's two ports draw streams 2 * link and 2 * link + 1.
void PacketFabric::build_host_links(const SwitchNodes& switches) {
  const Topology& t = topology_;
  rnics_.resize(at(t.endpoints()));
  for (int e = 0; e < t.endpoints(); ++e) {
    const int link = t.host_link(e);
    if (!wanted(link)) continue;
    const double rate = t.link_bytes_per_second(link);
    const auto stream = static_cast<std::uint64_t>(link) * 2;
    auto node = ns3::CreateObject<ns3::Node>();
    nodes_.push_back(node);
    LinkEnds& ends = ends_[at(link)];
    ends.lower = make_port(node, rate, stream);
    const int leaf = t.leaf_of(e);
    GAUNTLET_INVARIANT(leaves_[at(leaf)] != nullptr, "leaf " + std::to_string(leaf) + " not built");
    ends.upper = make_port(switches.leaves[at(leaf)], rate, stream + 1);
    leaf_port_of_endpoint_[at(e)] = leaves_[at(leaf)]->add_port(ends.upper);
    ends.cable = ns3::CreateObject<RoceCable>();
    ends.cable->connect(ends.lower, ends.upper, t.shape().link_latency);
    rnics_[at(e)] = std::make_unique<Rnic>(e, params_, ends.lower);
  }
}

PacketFabric::SwitchPorts PacketFabric::build_fabric_links(const SwitchNodes& switches) {
  const Topology& t = topology_;
  SwitchPorts ports{std::vector<std::vector<int>>(at(t.leaves()), std::vector<int>(at(t.spines()), -1)),
                    std::vector<std::vector<int>>(at(t.spines()), std::vector<int>(at(t.leaves()), -1))};
  for (int l = 0; l < t.leaves(); ++l)
    for (int s = 0; s < t.spines(); ++s) {
      const int link = t.fabric_link(l, s);
      if (!wanted(link)) continue;
      const double rate = t.link_bytes_per_second(link);
      const auto stream = static_cast<std::uint64_t>(link) * 2;
      LinkEnds& ends = ends_[at(link)];
      ends.lower = make_port(switches.leaves[at(l)], rate, stream);
      ends.upper = make_port(switches.spines[at(s)], rate, stream + 1);
      ends.lower_switch_port = leaves_[at(l)]->add_port(ends.lower);
      ports.uplink[at(l)][at(s)] = ends.lower_switch_port;
      ports.downlink[at(s)][at(l)] = spines_[at(s)]->add_port(ends.upper);
      ends.cable = ns3::CreateObject<RoceCable>();
      ends.cable->connect(ends.lower, ends.upper, t.shape().link_latency);
    }
  return ports;
}

// Frames for no endpoint of the cluster (other tenants') leave the fabric; a
// route over a link not built (a batch's reroute) drops the frame.
void PacketFabric::set_forwarding(const EcmpRouter& router, const SwitchPorts& ports) {
  const Topology* t = &topology_;
  const EcmpRouter* r = &router;
  const std::vector<int>* by_endpoint = &leaf_port_of_endpoint_;
  for (int l = 0; l < t->leaves(); ++l) {
    if (!leaves_[at(l)]) continue;
    leaves_[at(l)]->set_forwarding([t, r, by_endpoint, l, up = ports.uplink[at(l)]](const RoceHeader& h) {
      if (h.dst < 0 || h.dst >= t->endpoints()) return -1;
      if (t->leaf_of(h.dst) == l) {
        // Frames go only to endpoints of transfers, whose RNICs were built.
        GAUNTLET_INVARIANT((*by_endpoint)[at(h.dst)] >= 0,
                           "a frame for endpoint " + std::to_string(h.dst) + ", which the fabric did not build");
        return (*by_endpoint)[at(h.dst)];
      }
      const int spine = r->spine_for(h.src, h.dst);
      return spine < 0 ? -1 : up[at(spine)];
    });
  }
  for (int s = 0; s < t->spines(); ++s) {
    if (!spines_[at(s)]) continue;
    spines_[at(s)]->set_forwarding([t, down = ports.downlink[at(s)]](const RoceHeader& h) {
      if (h.dst < 0 || h.dst >= t->endpoints()) return -1;
      return down[at(t->leaf_of(h.dst))];
    });
  }
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
