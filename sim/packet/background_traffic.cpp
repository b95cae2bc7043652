#include "sim/packet/background_traffic.hpp"

#include <ns3/simulator.h>

#include <algorithm>
#include <string>

#include "sim/contract.hpp"

namespace gauntlet::sim::packet {
BackgroundTraffic::BackgroundTraffic(RocePort& a, RocePort& b, double load, const RoceParams& params)
    : ports_{&a, &b}, load_(std::clamp(load, 0.0, 1.0)), params_(params) {
  // A source with no load would wait forever between frames (emit divides by it).
  GAUNTLET_INVARIANT(load_ > 0, "background load " + std::to_string(load));
  emit(0);
  emit(1);
}

BackgroundTraffic::~BackgroundTraffic() {
  for (ns3::EventId& e : next_) ns3::Simulator::Cancel(e);
}

void BackgroundTraffic::emit(int side) {
  RocePort& port = *ports_[static_cast<std::size_t>(side)];
  const double frame = params_.transport.mtu_payload + params_.transport.header_bytes;
  // Beyond the backlog at which a switch would pause them, the other
  // tenants' senders hold back too.
  const double backlog = params_.pfc.dynamic_threshold * params_.pfc.buffer_bytes;
  if (port.queued_bytes(params_.data_priority) < backlog) {
    RoceHeader h;
    h.kind = FrameKind::data;
    h.src = -1;
    h.dst = -1;  // no endpoint of this cluster: the far end consumes it
    h.payload = static_cast<std::uint32_t>(params_.transport.mtu_payload);
    h.priority = static_cast<std::uint8_t>(params_.data_priority);
    auto packet = ns3::Create<ns3::Packet>(static_cast<std::uint32_t>(frame) - h.GetSerializedSize());
    packet->AddHeader(h);
    port.enqueue(packet, h);
  }
  const double gap_seconds = frame / (port.bytes_per_second() * load_);
  // At least a nanosecond between frames, or the source would emit forever at one instant.
  GAUNTLET_INVARIANT(gap_seconds * 1e9 >= 1, "a frame every " + std::to_string(gap_seconds) + " s");
  next_[static_cast<std::size_t>(side)] = ns3::Simulator::Schedule(
      ns3::NanoSeconds(static_cast<std::int64_t>(gap_seconds * 1e9)), [this, side] { emit(side); });
}

}  // namespace gauntlet::sim::packet
