#pragma once
// The one header every packet of the packet engine carries: what a RoCEv2
// frame's Ethernet/IP/UDP/BTH headers say that the model needs (addresses as
// endpoint ids, the QP's UDP source port for ECMP, PSN, ECN), or a PFC PAUSE
// frame's class and quanta. On the wire a packet also occupies the real
// header bytes (TransportParams::header_bytes), accounted by the sender.
#include <ns3/header.h>

#include <cstdint>

namespace gauntlet::sim::packet {

enum class FrameKind : std::uint8_t { data, ack, nak, cnp, pause };

class RoceHeader final : public ns3::Header {
 public:
  static ns3::TypeId GetTypeId();
  ns3::TypeId GetInstanceTypeId() const override;
  std::uint32_t GetSerializedSize() const override;
  void Serialize(ns3::Buffer::Iterator start) const override;
  std::uint32_t Deserialize(ns3::Buffer::Iterator start) override;
  void Print(std::ostream& os) const override;

  FrameKind kind = FrameKind::data;
  std::int32_t src = 0;         // sending endpoint (RNIC)
  std::int32_t dst = 0;         // receiving endpoint
  std::uint32_t qp = 0;         // queue pair number at the receiver
  std::uint16_t udp_sport = 0;  // per-QP entropy for ECMP
  std::uint32_t psn = 0;        // data: its PSN; ack/nak: the next PSN expected
  std::uint32_t payload = 0;    // data bytes carried
  bool ecn_ce = false;          // congestion experienced (set by a switch)
  bool last = false;            // data: the message's last packet
  std::uint8_t priority = 0;    // traffic class
  // PAUSE frames: the class paused and for how many 512-bit-time quanta
  // (0 resumes it at once, as XON).
  std::uint8_t pause_class = 0;
  std::uint16_t pause_quanta = 0;
};

}  // namespace gauntlet::sim::packet
