#pragma once
// ECMP over spines: each flow hashes on its 5-tuple (the RNICs' addresses,
// UDP, destination port 4791 and the source port) to one spine among those
// both leaves can reach. Rendezvous hashing keeps every flow on its spine
// unless that spine becomes unusable, as switch ECMP with resilient hashing
// does. An RNIC gives all queue pairs toward one peer the connection's source
// port, so a connection's traffic crosses one spine; a probe may pick another
// port, and so another spine.
#include <cstdint>
#include <vector>

#include "sim/network_engine.hpp"
#include "sim/topology.hpp"

namespace gauntlet::sim {

// RoCEv2's UDP destination port (IANA) and protocol number (UDP).
inline constexpr std::uint16_t kRoceUdpPort = 4791;
inline constexpr std::uint8_t kUdpProtocol = 17;
// The UDP source port an RNIC gives the queue pairs of one connection: in
// the range 0xC000-0xFFFF mlx5 draws QP source ports from, a fixed function
// of the pair.
std::uint16_t connection_source_port(EndpointId src, EndpointId dst);

class EcmpRouter {
 public:
  EcmpRouter(const Topology& topology, std::uint64_t seed);

  // Routing's view of a fabric link; it lags the physical state by the
  // convergence delay, which the caller models.
  void set_fabric_link_usable(int leaf, int spine, bool usable);
  bool fabric_link_usable(int leaf, int spine) const;

  // The spine a connection between two leaves crosses, or -1 when both
  // endpoints share a leaf. When no spine is usable, the hash picks among all
  // (traffic then stalls on a down link, as it does before convergence).
  int spine_for(EndpointId src, EndpointId dst) const;
  // The same for a flow leaving from UDP source port `source_port`; the
  // connection's own port gives spine_for(src, dst).
  int spine_for(EndpointId src, EndpointId dst, std::uint16_t source_port) const;
  // Host link of src, fabric links (if any), host link of dst.
  std::vector<LinkId> route(EndpointId src, EndpointId dst) const;
  std::vector<LinkId> route(EndpointId src, EndpointId dst, std::uint16_t source_port) const;

 private:
  const Topology* topology_;
  std::uint64_t seed_;
  std::vector<char> usable_;  // per fabric link
};

}  // namespace gauntlet::sim
