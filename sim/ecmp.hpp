#pragma once
// ECMP over spines: each connection (src, dst endpoint pair) hashes to one
// spine among those both leaves can reach. Rendezvous hashing keeps every
// connection on its spine unless that spine becomes unusable, as switch ECMP
// with resilient hashing does.
#include <cstdint>
#include <vector>

#include "sim/network_engine.hpp"
#include "sim/topology.hpp"

namespace gauntlet::sim {

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
  // Host link of src, fabric links (if any), host link of dst.
  std::vector<LinkId> route(EndpointId src, EndpointId dst) const;

 private:
  const Topology* topology_;
  std::uint64_t seed_;
  std::vector<char> usable_;  // per fabric link
};

}  // namespace gauntlet::sim
