#pragma once
// Other tenants' traffic over one link, both ways: MTU frames entering each
// end's egress queue at a fixed fraction of the line rate and leaving the
// fabric at the far end. They share the queue with the job's packets, so
// they delay them, raise ECN marks on them and are held by PFC like them;
// a source whose queue is as deep as a PFC threshold holds back.
#include <ns3/event-id.h>
#include <ns3/ptr.h>

#include <array>

#include "sim/packet/roce_params.hpp"
#include "sim/packet/roce_port.hpp"

namespace gauntlet::sim::packet {

class BackgroundTraffic {
 public:
  BackgroundTraffic(RocePort& a, RocePort& b, double load, const RoceParams& params);
  ~BackgroundTraffic();
  BackgroundTraffic(const BackgroundTraffic&) = delete;
  BackgroundTraffic& operator=(const BackgroundTraffic&) = delete;

 private:
  void emit(int side);

  std::array<RocePort*, 2> ports_;
  double load_;
  const RoceParams& params_;
  std::array<ns3::EventId, 2> next_;
};

}  // namespace gauntlet::sim::packet
