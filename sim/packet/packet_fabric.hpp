#pragma once
// The ns-3 objects of a spine-leaf RoCE cluster, wired from a Topology: a
// node, port and RNIC per endpoint, a node and switch per leaf and spine,
// and a cable per link. Forwarding asks the ECMP router for the spine of each
// connection, so packets follow the route the engine reports.
//
// A fabric may be built on part of the cluster only (a footprint: the links
// some transfers cross, with the RNICs, leaves and spines at their ends);
// components keep the whole cluster's numbering, and each port draws the
// random stream it would draw in the whole fabric.
#include <ns3/node.h>
#include <ns3/ptr.h>

#include <memory>
#include <vector>

#include "sim/ecmp.hpp"
#include "sim/packet/rnic.hpp"
#include "sim/packet/roce_port.hpp"
#include "sim/packet/roce_switch.hpp"
#include "sim/topology.hpp"

namespace gauntlet::sim::packet {

class PacketFabric {
 public:
  // `footprint`: per link, whether to build it (empty: every link).
  PacketFabric(const Topology& topology, const EcmpRouter& router, const RoceParams& params, std::uint64_t seed,
               const std::vector<char>& footprint = {});
  PacketFabric(const PacketFabric&) = delete;
  PacketFabric& operator=(const PacketFabric&) = delete;
  ~PacketFabric();

  Rnic& rnic(int endpoint) { return *rnics_[static_cast<std::size_t>(endpoint)]; }
  const Rnic& rnic(int endpoint) const { return *rnics_[static_cast<std::size_t>(endpoint)]; }
  RoceSwitch& leaf(int index) { return *leaves_[static_cast<std::size_t>(index)]; }
  // The two ends of a link: lower (RNIC, or leaf on a fabric link) and upper
  // (leaf, or spine).
  RocePort& lower_port(int link) const { return *ends_[static_cast<std::size_t>(link)].lower; }
  RocePort& upper_port(int link) const { return *ends_[static_cast<std::size_t>(link)].upper; }
  RoceCable& cable(int link) const { return *ends_[static_cast<std::size_t>(link)].cable; }
  // The leaf's port index of a fabric link (for storms).
  int leaf_port_of_link(int link) const { return ends_[static_cast<std::size_t>(link)].lower_switch_port; }
  int leaf_port_of_endpoint(int endpoint) const { return leaf_port_of_endpoint_[static_cast<std::size_t>(endpoint)]; }
  int links() const { return static_cast<int>(ends_.size()); }
  // Whether the link (for a host link: also its RNIC) was built.
  bool built(int link) const { return ends_[static_cast<std::size_t>(link)].lower != nullptr; }

 private:
  struct LinkEnds {
    ns3::Ptr<RocePort> lower;
    ns3::Ptr<RocePort> upper;
    ns3::Ptr<RoceCable> cable;
    int lower_switch_port = -1;  // fabric links: the leaf's port index
  };
  struct SwitchNodes {
    std::vector<ns3::Ptr<ns3::Node>> leaves, spines;  // null where not built
  };
  // Switch port indices of the fabric links: uplink[leaf][spine] and
  // downlink[spine][leaf] (-1 where the link was not built).
  struct SwitchPorts {
    std::vector<std::vector<int>> uplink, downlink;
  };
  bool wanted(int link) const;
  SwitchNodes build_switches();
  void build_host_links(const SwitchNodes& switches);
  SwitchPorts build_fabric_links(const SwitchNodes& switches);
  void set_forwarding(const EcmpRouter& router, const SwitchPorts& ports);
  ns3::Ptr<RocePort> make_port(ns3::Ptr<ns3::Node> node, double bytes_per_second, std::uint64_t stream);

  const Topology& topology_;
  const RoceParams& params_;
  std::uint64_t seed_;
  std::vector<char> footprint_;  // per link, whether it is built (empty: every link)
  std::vector<ns3::Ptr<ns3::Node>> nodes_;
  std::vector<std::unique_ptr<Rnic>> rnics_;
  std::vector<std::unique_ptr<RoceSwitch>> leaves_;
  std::vector<std::unique_ptr<RoceSwitch>> spines_;
  std::vector<LinkEnds> ends_;
  std::vector<int> leaf_port_of_endpoint_;
};

}  // namespace gauntlet::sim::packet
