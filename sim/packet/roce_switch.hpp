#pragma once
// A shared-buffer Ethernet switch for RoCE: forwards each frame to the
// egress port routing picks (the engine's ECMP), marks ECN at the egress
// queue (DCQCN's Kmin/Kmax/Pmax), and runs PFC per ingress port and
// priority: when an ingress queue's share of the buffer passes the dynamic
// threshold it pauses the upstream port, and resumes it once drained.
#include <ns3/event-id.h>
#include <ns3/ptr.h>

#include <array>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "sim/packet/roce_params.hpp"
#include "sim/packet/roce_port.hpp"
#include "sim/rng.hpp"

namespace gauntlet::sim::packet {

class RoceSwitch {
 public:
  // The egress port (index into ports()) for a frame, or -1 to drop it.
  using Forwarding = std::function<int(const RoceHeader&)>;

  RoceSwitch(const RoceParams& params, Rng rng);
  RoceSwitch(const RoceSwitch&) = delete;
  RoceSwitch& operator=(const RoceSwitch&) = delete;
  ~RoceSwitch();

  int add_port(ns3::Ptr<RocePort> port);
  void set_forwarding(Forwarding forwarding) { forwarding_ = std::move(forwarding); }
  RocePort& port(int index) { return *ports_[static_cast<std::size_t>(index)]; }
  const RocePort& port(int index) const { return *ports_[static_cast<std::size_t>(index)]; }
  int ports() const { return static_cast<int>(ports_.size()); }
  double buffer_used() const { return used_; }
  // A switch port that keeps pausing its peer's data class until `until`
  // (a PFC storm from a stuck port).
  void storm_pause(int port, Nanos until);

 private:
  struct IngressQueue {
    double bytes = 0;
    bool pausing = false;  // its upstream is paused
    double threshold = 0;  // the threshold that paused it
    ns3::EventId renew;
  };
  struct Held {
    int ingress = 0;
    int priority = 0;
    double bytes = 0;
  };

  void on_receive(ns3::Ptr<ns3::Packet> packet, const RoceHeader& h, int ingress);
  void on_dequeue(ns3::Ptr<ns3::Packet> packet, int egress);
  bool ecn_mark(const RocePort& egress, int priority);
  void check_pause(int ingress, int priority);
  void check_resume(int ingress, int priority);
  void renew_pause(int ingress, int priority);
  void check_buffer() const;
  IngressQueue& queue(int ingress, int priority) {
    return ingress_[static_cast<std::size_t>(ingress)][static_cast<std::size_t>(priority)];
  }
  Nanos pause_renewal(int port) const;

  const RoceParams& params_;
  Rng rng_;
  std::vector<ns3::Ptr<RocePort>> ports_;
  std::vector<std::array<IngressQueue, kPriorities>> ingress_;
  std::unordered_map<std::uint64_t, Held> held_;  // by packet uid: where each buffered frame came in
  std::vector<ns3::EventId> storms_;
  double used_ = 0;
  Forwarding forwarding_;
};

}  // namespace gauntlet::sim::packet
