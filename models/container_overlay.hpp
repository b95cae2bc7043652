#pragma once
// The overlay as the probers see it: which virtual function (VF) of an RNIC
// a live container holds, and which vSwitch rules that RNIC's offloaded
// flow table (h<N>.nic<K>.ft) carries. Kept apart from the container model
// so the probe service needs no training-job code to consult it.
#include <cstdint>
#include <optional>
#include <string>

#include "sim/network_engine.hpp"

namespace gauntlet::models {

// A VF carved out of one RNIC for one container: the container's interface
// on the overlay through that RNIC.
struct VirtualFunction {
  sim::EndpointId rnic = 0;
  int index = 0;                      // VF number on that RNIC
  std::uint32_t overlay_address = 0;  // IPv4, host byte order
};

// One vSwitch rule of a container: traffic from its VF on `rnic` to the
// overlay address of a peer is encapsulated toward the peer's underlay
// endpoint (the peer container's RNIC).
struct VSwitchRule {
  sim::EndpointId rnic = 0;
  std::uint32_t peer_address = 0;
  sim::EndpointId underlay = 0;

  auto operator<=>(const VSwitchRule&) const = default;
};

// Dotted quad (also the flow records' addresses; header-only so the
// telemetry models need not link the container model).
inline std::string overlay_address_text(std::uint32_t address) {
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 0xff) + "." +
         std::to_string((address >> 8) & 0xff) + "." + std::to_string(address & 0xff);
}

class OverlayDirectory {
 public:
  virtual ~OverlayDirectory() = default;
  // The VF a live container holds on this RNIC, or null when none does.
  virtual const VirtualFunction* attached_vf(sim::EndpointId rnic) const = 0;
  // Where the vSwitch of `rnic` sends `address`, when one of its rules
  // names it.
  virtual std::optional<sim::EndpointId> rule(sim::EndpointId rnic, std::uint32_t address) const = 0;
};

}  // namespace gauntlet::models
