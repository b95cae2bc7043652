#include "sim/packet/roce_header.hpp"

#include <ostream>
#include <string>

#include "sim/contract.hpp"

namespace gauntlet::sim::packet {
namespace {
constexpr std::uint32_t kSerializedBytes = 1 + 4 + 4 + 4 + 2 + 4 + 4 + 1 + 1 + 1 + 2;
constexpr std::uint8_t kEcnBit = 1;
constexpr std::uint8_t kLastBit = 2;
}  // namespace

ns3::TypeId RoceHeader::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("gauntlet::RoceHeader")
                               .SetParent<ns3::Header>()
                               .SetGroupName("gauntlet")
                               .AddConstructor<RoceHeader>();
  return tid;
}

ns3::TypeId RoceHeader::GetInstanceTypeId() const { return GetTypeId(); }
std::uint32_t RoceHeader::GetSerializedSize() const { return kSerializedBytes; }

void RoceHeader::Serialize(ns3::Buffer::Iterator i) const {
  i.WriteU8(static_cast<std::uint8_t>(kind));
  i.WriteHtonU32(static_cast<std::uint32_t>(src));
  i.WriteHtonU32(static_cast<std::uint32_t>(dst));
  i.WriteHtonU32(qp);
  i.WriteHtonU16(udp_sport);
  i.WriteHtonU32(psn);
  i.WriteHtonU32(payload);
  i.WriteU8(static_cast<std::uint8_t>((ecn_ce ? kEcnBit : 0) | (last ? kLastBit : 0)));
  i.WriteU8(priority);
  i.WriteU8(pause_class);
  i.WriteHtonU16(pause_quanta);
}

std::uint32_t RoceHeader::Deserialize(ns3::Buffer::Iterator i) {
  kind = static_cast<FrameKind>(i.ReadU8());
  src = static_cast<std::int32_t>(i.ReadNtohU32());
  dst = static_cast<std::int32_t>(i.ReadNtohU32());
  qp = i.ReadNtohU32();
  udp_sport = i.ReadNtohU16();
  psn = i.ReadNtohU32();
  payload = i.ReadNtohU32();
  const std::uint8_t flags = i.ReadU8();
  ecn_ce = flags & kEcnBit;
  last = flags & kLastBit;
  priority = i.ReadU8();
  pause_class = i.ReadU8();
  pause_quanta = i.ReadNtohU16();
  // A header reads back as some sender wrote it: a known kind, one of the
  // eight 802.1Qbb classes.
  GAUNTLET_INVARIANT(kind <= FrameKind::pause && priority < 8 && pause_class < 8,
                     "kind " + std::to_string(static_cast<int>(kind)) + ", class " + std::to_string(priority));
  return kSerializedBytes;
}

void RoceHeader::Print(std::ostream& os) const {
  os << "kind=" << static_cast<int>(kind) << " " << src << "->" << dst << " qp=" << qp << " psn=" << psn
     << " payload=" << payload << (ecn_ce ? " CE" : "") << (last ? " last" : "");
}

}  // namespace gauntlet::sim::packet
