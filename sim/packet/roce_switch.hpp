#pragma once
// A shared-buffer Ethernet switch for RoCE: forwards each frame to the
// egress port routing picks (the engine's ECMP), marks ECN at the egress
// queue (DCQCN's Kmin/Kmax/Pmax), and runs PFC per ingress port and
// priority: when an ingress queue's share of the buffer passes the dynamic
// threshold it pauses the upstream port, and resumes it once drained.
// With the PFC watchdog on, each port's lossless egress queue is watched
// (pfc_watchdog.hpp): a stormed queue drops its lossless frames both ways,
// or sends them regardless of pauses, until the pauses stop.
#include <ns3/event-id.h>
#include <ns3/ptr.h>

#include <array>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "sim/packet/pfc_watchdog.hpp"
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
  // The watchdog of a port's lossless egress queue.
  const PfcWatchdog& watchdog(int port) const { return watch_[static_cast<std::size_t>(port)].dog; }

 private:
  struct IngressQueue {
    double bytes = 0;
    bool pausing = false;  // its upstream is paused
    double threshold = 0;  // the threshold that paused it
    ns3::EventId renew;
  };
  struct Watch {
    explicit Watch(const PfcWatchdogParams& params) : dog(params) {}
    PfcWatchdog dog;
    ns3::EventId check;
    ns3::EventId restore;
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
  bool watchdog_drops(int ingress, int egress, int priority);
  void on_pause_frame(int port, int priority, int quanta);
  void watchdog_check(int port);
  void arm_restore(int port);
  void watchdog_restore(int port);

  const RoceParams& params_;
  Rng rng_;
  std::vector<ns3::Ptr<RocePort>> ports_;
  std::vector<std::array<IngressQueue, kPriorities>> ingress_;
  std::unordered_map<std::uint64_t, Held> held_;  // by packet uid: where each buffered frame came in
  std::vector<ns3::EventId> storms_;
  std::vector<Watch> watch_;
  double used_ = 0;
  Forwarding forwarding_;
};

}  // namespace gauntlet::sim::packet
