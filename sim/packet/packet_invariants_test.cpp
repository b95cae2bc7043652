// The packet layer's invariants report a broken state instead of simulating
// on with it (sim/contract.hpp): each test breaks one on purpose.
#include <gtest/gtest.h>
#include <ns3/packet.h>

#include "sim/contract.hpp"
#include "sim/packet/background_traffic.hpp"
#include "sim/packet/roce_header.hpp"
#include "sim/packet/roce_port.hpp"

namespace gauntlet::sim::packet {
namespace {

TEST(PacketInvariants, APortWithoutALineRateIsABug) {
  auto port = ns3::CreateObject<RocePort>();
  EXPECT_THROW(port->configure(0, 3, Rng(1)), ContractViolation);  // a frame would take forever
  port->configure(50e9, 3, Rng(1));
  port->Dispose();
}

TEST(PacketInvariants, AHeaderReadsBackOnlyAsASenderWroteIt) {
  RoceHeader written;
  written.priority = 3;
  auto frame = ns3::Create<ns3::Packet>(64);
  frame->AddHeader(written);
  RoceHeader read;
  EXPECT_EQ(frame->PeekHeader(read), read.GetSerializedSize());
  EXPECT_EQ(read.priority, 3);

  RoceHeader unknown;
  unknown.kind = static_cast<FrameKind>(9);
  auto broken = ns3::Create<ns3::Packet>(64);
  broken->AddHeader(unknown);
  EXPECT_THROW(broken->PeekHeader(read), ContractViolation);
}

TEST(PacketInvariants, BackgroundTrafficWithNoLoadIsABug) {
  auto a = ns3::CreateObject<RocePort>(), b = ns3::CreateObject<RocePort>();
  a->configure(50e9, 3, Rng(1));
  b->configure(50e9, 3, Rng(2));
  const RoceParams params;
  // It would wait forever between frames.
  EXPECT_THROW({ BackgroundTraffic traffic(*a, *b, 0.0, params); }, ContractViolation);
  a->Dispose();
  b->Dispose();
}

}  // namespace
}  // namespace gauntlet::sim::packet
