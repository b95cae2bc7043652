#pragma once
// A full-duplex RoCE Ethernet port (an ns-3 NetDevice) and the cable between
// two of them (an ns-3 Channel). The port transmits one frame at a time at
// its line rate from per-priority egress queues, strict priority, skipping
// classes a received PFC PAUSE has stopped; the cable adds propagation
// delay, and a lossy cable corrupts frames, which the receiving port counts
// as CRC errors and drops. A down port sends nothing and flushes its queues.
#include <ns3/channel.h>
#include <ns3/drop-tail-queue.h>
#include <ns3/event-id.h>
#include <ns3/net-device.h>
#include <ns3/node.h>
#include <ns3/nstime.h>
#include <ns3/packet.h>

#include <array>
#include <cstdint>
#include <functional>

#include "sim/packet/roce_header.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace gauntlet::sim::packet {

inline constexpr int kPriorities = 8;

// What a port has counted since it was created; samplers take differences.
struct PortCounters {
  std::uint64_t tx_bytes = 0;
  std::uint64_t tx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t rx_packets = 0;
  std::uint64_t ecn_marked = 0;      // data frames this port's egress marked CE
  std::uint64_t pause_sent = 0;      // PAUSE frames (XOFF and XON) sent
  std::uint64_t pause_received = 0;  // PAUSE frames received
  std::uint64_t drops = 0;           // frames dropped at egress (port down, buffer full)
  std::uint64_t crc_errors = 0;      // corrupted frames received and dropped
  double queue_byte_ns = 0;          // integral of queued bytes over time
  Nanos paused_ns = 0;               // time the data class spent paused by the peer
  // The switch's PFC watchdog on this port's lossless queue (SONiC's
  // PFC_WD_QUEUE_STATS_*): storms detected and restored, lossless frames it
  // dropped bound out of the port and received on it.
  std::uint64_t pfcwd_detected = 0;
  std::uint64_t pfcwd_restored = 0;
  std::uint64_t pfcwd_tx_dropped = 0;
  std::uint64_t pfcwd_rx_dropped = 0;
};

class RoceCable;

class RocePort final : public ns3::NetDevice {
 public:
  // Frames received intact (not PAUSE, which the port handles itself).
  using ReceiveHandler = std::function<void(ns3::Ptr<ns3::Packet>, const RoceHeader&, RocePort& ingress)>;
  // A frame left an egress queue (its transmission starts).
  using DequeueHandler = std::function<void(ns3::Ptr<ns3::Packet>, const RoceHeader&)>;
  // A PAUSE frame arrived (quanta 0: resume), after the port acted on it.
  using PauseHandler = std::function<void(int priority, int quanta)>;

  static ns3::TypeId GetTypeId();
  RocePort();

  void configure(double bytes_per_second, int data_priority, Rng rng);
  void set_handlers(ReceiveHandler on_receive, DequeueHandler on_dequeue);
  void set_pause_handler(PauseHandler on_pause) { on_pause_ = std::move(on_pause); }
  void attach(ns3::Ptr<RoceCable> cable);
  RocePort* peer() const;

  // Queues a frame for transmission (header already added), or drops it when
  // the port is down.
  void enqueue(ns3::Ptr<ns3::Packet> packet, const RoceHeader& header);
  // Sends a PAUSE (quanta > 0) or resume (quanta 0) for one class to the
  // peer, ahead of everything queued.
  void send_pause(int priority, int quanta);
  double queued_bytes(int priority) const;
  double queued_bytes() const;
  bool paused(int priority) const;
  // Since when the class has been paused without a break; -1 if it is not.
  Nanos paused_since(int priority) const;
  // A PFC watchdog's override: the port stops honouring PAUSE frames for
  // the class (it still counts and reports them) until told otherwise.
  void set_ignore_pause(int priority, bool ignore);
  bool ignores_pause(int priority) const { return ignore_pause_[static_cast<std::size_t>(priority)]; }
  // Drops every frame queued in one class, each freed through the dequeue
  // handler (as a flush does); returns how many.
  std::uint64_t drop_queued(int priority);
  double bytes_per_second() const { return rate_; }

  // Fault state: a down port drops its queue and everything offered to it;
  // the rate factor slows transmission; loss corrupts received frames.
  void set_down(bool down);
  bool down() const { return down_; }
  void set_rate_factor(double factor);
  // Corruption by frame length: a frame of `reference_bytes` (a full data
  // frame on the wire) is lost with `reference_loss`, any other by the
  // codewords it touches when the link runs RS-FEC, else by its bits (see
  // frame_loss_by_length in sim/fec.hpp).
  void set_receive_loss(double reference_loss, double reference_bytes, bool rs_fec);
  // The probability that a received frame of `bytes` fails its FCS check.
  double frame_loss(double bytes) const;
  void count_ecn_mark() { ++counters_.ecn_marked; }
  void count_drop() { ++counters_.drops; }
  void count_pfcwd_detected() { ++counters_.pfcwd_detected; }
  void count_pfcwd_restored() { ++counters_.pfcwd_restored; }
  void count_pfcwd_tx_dropped(std::uint64_t frames = 1) { counters_.pfcwd_tx_dropped += frames; }
  void count_pfcwd_rx_dropped() { ++counters_.pfcwd_rx_dropped; }
  const PortCounters& counters() const;

  // Called by the cable: a frame arrives from the peer.
  void receive_from_cable(ns3::Ptr<ns3::Packet> packet);

  // ns3::NetDevice
  void SetIfIndex(const uint32_t index) override { if_index_ = index; }
  uint32_t GetIfIndex() const override { return if_index_; }
  ns3::Ptr<ns3::Channel> GetChannel() const override;
  void SetAddress(ns3::Address address) override { address_ = address; }
  ns3::Address GetAddress() const override { return address_; }
  bool SetMtu(const uint16_t mtu) override;
  uint16_t GetMtu() const override { return mtu_; }
  bool IsLinkUp() const override { return !down_; }
  void AddLinkChangeCallback(ns3::Callback<void> callback) override { (void)callback; }
  bool IsBroadcast() const override { return false; }
  ns3::Address GetBroadcast() const override { return {}; }
  bool IsMulticast() const override { return false; }
  ns3::Address GetMulticast(ns3::Ipv4Address group) const override;
  ns3::Address GetMulticast(ns3::Ipv6Address group) const override;
  bool IsBridge() const override { return false; }
  bool IsPointToPoint() const override { return true; }
  bool Send(ns3::Ptr<ns3::Packet> packet, const ns3::Address& dest, uint16_t protocol) override;
  bool SendFrom(ns3::Ptr<ns3::Packet> packet, const ns3::Address& source, const ns3::Address& dest,
                uint16_t protocol) override;
  ns3::Ptr<ns3::Node> GetNode() const override { return node_; }
  void SetNode(ns3::Ptr<ns3::Node> node) override { node_ = node; }
  bool NeedsArp() const override { return false; }
  void SetReceiveCallback(ReceiveCallback cb) override { (void)cb; }
  void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override { (void)cb; }
  bool SupportsSendFrom() const override { return false; }

 protected:
  void DoDispose() override;

 private:
  void try_transmit();
  void finish_transmit();
  void account_queue();
  void flush();
  void apply_pause(int priority, int quanta);
  void check_queued_total() const;

  double rate_ = 0;  // bytes per second, nominal
  double rate_factor_ = 1.0;
  double carry_ns_ = 0;  // fraction of a nanosecond owed by earlier frames
  int data_priority_ = 3;
  bool down_ = false;
  bool busy_ = false;
  // ln(delivered) per unit of corruption_exposure: 0 on a clean cable.
  double log_delivered_per_exposure_ = 0;
  bool rs_fec_ = false;
  Rng rng_{0};
  std::array<ns3::Ptr<ns3::DropTailQueue<ns3::Packet>>, kPriorities> queues_;
  // Bytes in queues_, kept as frames come and go: the queue integral reads
  // it on every frame, and summing eight queues there was a tenth of a batch.
  std::uint64_t queued_total_ = 0;
  ns3::Ptr<ns3::DropTailQueue<ns3::Packet>> pause_frames_;  // sent before any class
  std::array<Nanos, kPriorities> paused_until_{};
  std::array<Nanos, kPriorities> paused_from_{};  // start of the current pause, while paused
  std::array<bool, kPriorities> ignore_pause_{};
  std::array<ns3::EventId, kPriorities> resume_events_;
  Nanos data_paused_since_ = -1;
  ns3::EventId transmit_done_;
  ns3::Ptr<ns3::Packet> in_transmission_;
  ns3::Ptr<RoceCable> cable_;
  ns3::Ptr<ns3::Node> node_;
  ns3::Address address_;
  uint32_t if_index_ = 0;
  uint16_t mtu_ = 4096;
  ReceiveHandler on_receive_;
  DequeueHandler on_dequeue_;
  PauseHandler on_pause_;
  mutable PortCounters counters_;
  Nanos accounted_at_ = 0;
};

// The cable: two ports, a propagation delay (nominal plus any fault's extra
// latency) and whether it carries anything at all.
class RoceCable final : public ns3::Channel {
 public:
  static ns3::TypeId GetTypeId();
  void connect(ns3::Ptr<RocePort> a, ns3::Ptr<RocePort> b, Nanos latency);
  void set_extra_latency(Nanos extra) { extra_latency_ = extra; }
  Nanos latency() const { return latency_ + extra_latency_; }
  RocePort* other(const RocePort* port) const;
  // Delivers a frame to the other end after the propagation delay; a cable
  // with a down end carries nothing.
  void carry(const RocePort* from, ns3::Ptr<ns3::Packet> packet);

  std::size_t GetNDevices() const override { return 2; }
  ns3::Ptr<ns3::NetDevice> GetDevice(std::size_t i) const override;

 protected:
  void DoDispose() override;

 private:
  std::array<ns3::Ptr<RocePort>, 2> ends_;
  Nanos latency_ = 0;
  Nanos extra_latency_ = 0;
};

}  // namespace gauntlet::sim::packet
