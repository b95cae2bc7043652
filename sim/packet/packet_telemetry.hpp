#pragma once
// Switch port and RNIC transport counters read off the packet engine (or
// the hybrid engine's packet batches): each
// sample reports what the packets did in the interval since the previous
// one (bytes, frames, mean queue depth, ECN marks, PFC frames, drops, CRC
// errors per port direction; retransmissions, NAKs, out-of-sequence
// packets, CNPs and timeouts per RNIC). A port or RNIC is published while it
// counts anything, plus one all-zero record when it falls quiet.
#include <cstdint>
#include <vector>

#include "sim/packet/packet_engine.hpp"
#include "sim/proto/telemetry.pb.h"

namespace gauntlet::sim {

class PacketTelemetry {
 public:
  explicit PacketTelemetry(const PacketCounterSource& engine);

  void sample(Nanos at, telemetry::Batch* out);
  // CNPs the RNIC handled as a sender per second, over the last interval.
  double cnp_rate(EndpointId endpoint) const;
  // Bytes per second the port direction sent over the last interval.
  double port_bytes_per_second(LinkId link, bool upward) const;
  // Changes whenever some RNIC's CNP rate or some port's byte rate changes.
  std::uint64_t version() const { return version_; }
  std::uint64_t published_bytes() const { return published_bytes_; }

 private:
  struct PortState {
    PacketPortCounters last;
    bool active = false;
    double bytes_per_second = 0;
  };
  struct RnicState {
    PacketRnicCounters last;
    bool active = false;
    double cnp_rate = 0;
  };

  const PacketCounterSource& engine_;
  std::vector<PortState> ports_;  // link * 2 + upward
  std::vector<RnicState> rnics_;
  Nanos last_at_ = 0;
  std::uint64_t published_bytes_ = 0;
  std::uint64_t version_ = 0;
};

}  // namespace gauntlet::sim
