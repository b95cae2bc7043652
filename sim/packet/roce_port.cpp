#include "sim/packet/roce_port.hpp"

#include <ns3/queue-size.h>
#include <ns3/simulator.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/contract.hpp"
#include "sim/fec.hpp"
#include "sim/packet/roce_params.hpp"

namespace gauntlet::sim::packet {
namespace {

Nanos sim_now() { return ns3::Simulator::Now().GetNanoSeconds(); }

ns3::Ptr<ns3::DropTailQueue<ns3::Packet>> unbounded_queue() {
  auto queue = ns3::CreateObject<ns3::DropTailQueue<ns3::Packet>>();
  // Admission is the switch's shared-buffer decision, not the queue's.
  queue->SetMaxSize(ns3::QueueSize(ns3::QueueSizeUnit::BYTES, 1u << 31));
  return queue;
}

// One PAUSE quantum is 512 bit times at the port's line rate.
Nanos pause_duration(int quanta, double bytes_per_second) {
  return static_cast<Nanos>(std::ceil(quanta * 64.0 / bytes_per_second * 1e9));
}

}  // namespace

ns3::TypeId RocePort::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("gauntlet::RocePort").SetParent<ns3::NetDevice>().SetGroupName("gauntlet").AddConstructor<RocePort>();
  return tid;
}

RocePort::RocePort() {
  for (auto& q : queues_) q = unbounded_queue();
  pause_frames_ = unbounded_queue();
}

void RocePort::configure(double bytes_per_second, int data_priority, Rng rng) {
  // A frame's transmission and a PAUSE quantum both last bytes / rate.
  GAUNTLET_INVARIANT(bytes_per_second > 0, "line rate " + std::to_string(bytes_per_second));
  GAUNTLET_INVARIANT(data_priority >= 0 && data_priority < kPriorities);
  rate_ = bytes_per_second;
  data_priority_ = data_priority;
  rng_ = rng;
}

void RocePort::set_handlers(ReceiveHandler on_receive, DequeueHandler on_dequeue) {
  on_receive_ = std::move(on_receive);
  on_dequeue_ = std::move(on_dequeue);
}

void RocePort::attach(ns3::Ptr<RoceCable> cable) { cable_ = cable; }
RocePort* RocePort::peer() const { return cable_ ? cable_->other(this) : nullptr; }
ns3::Ptr<ns3::Channel> RocePort::GetChannel() const { return cable_; }

double RocePort::queued_bytes(int priority) const { return queues_[static_cast<std::size_t>(priority)]->GetNBytes(); }

double RocePort::queued_bytes() const { return static_cast<double>(queued_total_); }

// The running count against the queues it stands for (eight queues summed:
// what the running count exists to avoid on every frame).
void RocePort::check_queued_total() const {
  GAUNTLET_DEBUG_INVARIANT(
      [this] {
        std::uint64_t sum = 0;
        for (const auto& q : queues_) sum += q->GetNBytes();
        return sum == queued_total_;
      }(),
      "the port counts " + std::to_string(queued_total_) + " bytes queued");
}

bool RocePort::paused(int priority) const { return paused_until_[static_cast<std::size_t>(priority)] > sim_now(); }

Nanos RocePort::paused_since(int priority) const {
  return paused(priority) ? paused_from_[static_cast<std::size_t>(priority)] : -1;
}

void RocePort::set_ignore_pause(int priority, bool ignore) {
  const auto p = static_cast<std::size_t>(priority % kPriorities);
  ignore_pause_[p] = ignore;
  if (!ignore || !paused(static_cast<int>(p))) return;
  // The pause in force is lifted at once, as a resume would.
  account_queue();
  ns3::Simulator::Cancel(resume_events_[p]);
  paused_until_[p] = sim_now();
  if (static_cast<int>(p) == data_priority_) data_paused_since_ = -1;
  try_transmit();
}

std::uint64_t RocePort::drop_queued(int priority) {
  account_queue();
  auto& q = queues_[static_cast<std::size_t>(priority % kPriorities)];
  std::uint64_t dropped = 0;
  while (!q->IsEmpty()) {
    ns3::Ptr<ns3::Packet> frame = q->Dequeue();
    queued_total_ -= frame->GetSize();
    RoceHeader h;
    frame->PeekHeader(h);
    if (on_dequeue_) on_dequeue_(frame, h);  // frees its buffer
    ++dropped;
  }
  check_queued_total();
  return dropped;
}

const PortCounters& RocePort::counters() const {
  const_cast<RocePort*>(this)->account_queue();
  return counters_;
}

// Keeps the integral of queued bytes and the paused time up to now.
void RocePort::account_queue() {
  const Nanos now = sim_now();
  // The integrals only grow: a clock running back would shrink them.
  GAUNTLET_INVARIANT(now >= accounted_at_ && data_paused_since_ <= now);
  counters_.queue_byte_ns += queued_bytes() * static_cast<double>(now - accounted_at_);
  if (data_paused_since_ >= 0) {
    counters_.paused_ns += now - std::max(data_paused_since_, accounted_at_);
    data_paused_since_ = paused(data_priority_) ? now : -1;
  }
  accounted_at_ = now;
}

void RocePort::enqueue(ns3::Ptr<ns3::Packet> packet, const RoceHeader& header) {
  if (down_) {
    ++counters_.drops;
    return;
  }
  account_queue();
  // Admission is the switch's decision (its shared buffer) or the sender's:
  // a queue refusing a frame would lose it uncounted.
  const bool queued = queues_[header.priority % kPriorities]->Enqueue(packet);
  GAUNTLET_INVARIANT(queued, "an egress queue refused a frame of " + std::to_string(packet->GetSize()) + " bytes");
  queued_total_ += packet->GetSize();
  check_queued_total();
  try_transmit();
}

void RocePort::send_pause(int priority, int quanta) {
  if (down_) return;
  RoceHeader h;
  h.kind = FrameKind::pause;
  h.pause_class = static_cast<std::uint8_t>(priority);
  h.pause_quanta = static_cast<std::uint16_t>(quanta);
  auto frame = ns3::Create<ns3::Packet>(PfcParams{}.pause_frame_bytes - h.GetSerializedSize());
  frame->AddHeader(h);
  pause_frames_->Enqueue(frame);
  ++counters_.pause_sent;
  try_transmit();
}

void RocePort::try_transmit() {
  if (busy_ || down_ || !cable_) return;
  ns3::Ptr<ns3::Packet> next;
  if (!pause_frames_->IsEmpty()) next = pause_frames_->Dequeue();
  bool dequeued_data = false;
  for (int p = kPriorities - 1; !next && p >= 0; --p) {
    auto& q = queues_[static_cast<std::size_t>(p)];
    if (q->IsEmpty() || paused(p)) continue;
    account_queue();
    next = q->Dequeue();
    GAUNTLET_INVARIANT(queued_total_ >= next->GetSize(), "the port counts fewer bytes queued than one frame");
    queued_total_ -= next->GetSize();
    check_queued_total();
    dequeued_data = true;
  }
  if (!next) return;
  busy_ = true;
  in_transmission_ = next;
  // Whole nanoseconds per frame, the fractions carried to the next frame so
  // the line rate is exact over many.
  const double exact = next->GetSize() / (rate_ * rate_factor_) * 1e9 + carry_ns_;
  const double whole = std::floor(exact);
  carry_ns_ = exact - whole;
  transmit_done_ =
      ns3::Simulator::Schedule(ns3::NanoSeconds(static_cast<std::int64_t>(whole)), &RocePort::finish_transmit, this);
  // Told last, with the port already busy: the handler may queue more.
  if (dequeued_data && on_dequeue_) {
    RoceHeader h;
    next->PeekHeader(h);
    on_dequeue_(next, h);
  }
}

void RocePort::finish_transmit() {
  // One frame on the wire at a time, and this one is it.
  GAUNTLET_INVARIANT(busy_ && in_transmission_, "a transmission ended that never started");
  busy_ = false;
  ns3::Ptr<ns3::Packet> sent = in_transmission_;
  in_transmission_ = nullptr;
  ++counters_.tx_packets;
  counters_.tx_bytes += sent->GetSize();
  cable_->carry(this, sent);
  try_transmit();
}

void RocePort::receive_from_cable(ns3::Ptr<ns3::Packet> packet) {
  if (down_) return;
  if (log_delivered_per_exposure_ < 0 && rng_.uniform() < frame_loss(packet->GetSize())) {
    ++counters_.crc_errors;  // a corrupted frame fails its FCS check here
    return;
  }
  ++counters_.rx_packets;
  counters_.rx_bytes += packet->GetSize();
  RoceHeader h;
  packet->PeekHeader(h);
  if (h.kind == FrameKind::pause) {
    ++counters_.pause_received;
    apply_pause(h.pause_class, h.pause_quanta);
    return;
  }
  if (on_receive_) on_receive_(packet, h, *this);
}

void RocePort::set_receive_loss(double reference_loss, double reference_bytes, bool rs_fec) {
  GAUNTLET_INVARIANT(reference_loss >= 0 && reference_loss < 1 && reference_bytes > 0,
                     "frame loss " + std::to_string(reference_loss) + " at " + std::to_string(reference_bytes) + " B");
  rs_fec_ = rs_fec;
  log_delivered_per_exposure_ = std::log1p(-reference_loss) / corruption_exposure(reference_bytes, rs_fec);
}

double RocePort::frame_loss(double bytes) const {
  return -std::expm1(log_delivered_per_exposure_ * corruption_exposure(bytes, rs_fec_));
}

void RocePort::apply_pause(int priority, int quanta) {
  const auto p = static_cast<std::size_t>(priority % kPriorities);
  if (ignore_pause_[p]) {
    if (on_pause_) on_pause_(static_cast<int>(p), quanta);
    return;
  }
  account_queue();
  const Nanos now = sim_now();
  ns3::Simulator::Cancel(resume_events_[p]);
  if (quanta == 0) {
    paused_until_[p] = now;
  } else {
    const Nanos duration = pause_duration(quanta, rate_);
    if (!paused(static_cast<int>(p))) paused_from_[p] = now;
    paused_until_[p] = now + duration;
    if (static_cast<int>(p) == data_priority_ && data_paused_since_ < 0) data_paused_since_ = now;
    resume_events_[p] = ns3::Simulator::Schedule(ns3::NanoSeconds(duration), [this] {
      account_queue();
      try_transmit();
    });
  }
  if (!paused(data_priority_)) data_paused_since_ = -1;
  // A PAUSE stops its class at once, a resume frees it at once, and the
  // paused time runs exactly while the data class is stopped.
  GAUNTLET_INVARIANT(paused(static_cast<int>(p)) == (quanta > 0), "quanta " + std::to_string(quanta));
  GAUNTLET_INVARIANT((data_paused_since_ >= 0) == paused(data_priority_));
  try_transmit();
  if (on_pause_) on_pause_(static_cast<int>(p), quanta);
}

void RocePort::flush() {
  account_queue();
  for (auto& q : queues_)
    while (!q->IsEmpty()) {
      ns3::Ptr<ns3::Packet> dropped = q->Dequeue();
      queued_total_ -= dropped->GetSize();
      RoceHeader h;
      dropped->PeekHeader(h);
      if (on_dequeue_) on_dequeue_(dropped, h);  // frees its buffer
      ++counters_.drops;
    }
  while (!pause_frames_->IsEmpty()) pause_frames_->Dequeue();
  GAUNTLET_INVARIANT(queued_total_ == 0, "a flushed port counts " + std::to_string(queued_total_) + " bytes queued");
}

void RocePort::set_down(bool down) {
  if (down == down_) return;
  down_ = down;
  if (down) {
    flush();
    return;
  }
  try_transmit();
}

void RocePort::set_rate_factor(double factor) { rate_factor_ = std::max(factor, 1e-6); }

bool RocePort::SetMtu(const uint16_t mtu) {
  mtu_ = mtu;
  return true;
}

ns3::Address RocePort::GetMulticast(ns3::Ipv4Address group) const {
  (void)group;
  return {};
}

ns3::Address RocePort::GetMulticast(ns3::Ipv6Address group) const {
  (void)group;
  return {};
}

bool RocePort::Send(ns3::Ptr<ns3::Packet> packet, const ns3::Address& dest, uint16_t protocol) {
  (void)dest;
  (void)protocol;
  RoceHeader h;
  if (packet->PeekHeader(h) != h.GetSerializedSize()) return false;
  enqueue(packet, h);
  return true;
}

bool RocePort::SendFrom(ns3::Ptr<ns3::Packet> packet, const ns3::Address& source, const ns3::Address& dest,
                        uint16_t protocol) {
  (void)source;
  return Send(packet, dest, protocol);
}

void RocePort::DoDispose() {
  ns3::Simulator::Cancel(transmit_done_);
  for (auto& e : resume_events_) ns3::Simulator::Cancel(e);
  cable_ = nullptr;
  node_ = nullptr;
  on_receive_ = nullptr;
  on_dequeue_ = nullptr;
  on_pause_ = nullptr;
  ns3::NetDevice::DoDispose();
}

ns3::TypeId RoceCable::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("gauntlet::RoceCable").SetParent<ns3::Channel>().SetGroupName("gauntlet");
  return tid;
}

void RoceCable::connect(ns3::Ptr<RocePort> a, ns3::Ptr<RocePort> b, Nanos latency) {
  ends_ = {a, b};
  latency_ = latency;
  a->attach(this);
  b->attach(this);
}

RocePort* RoceCable::other(const RocePort* port) const {
  return ns3::PeekPointer(ends_[0]) == port ? ns3::PeekPointer(ends_[1]) : ns3::PeekPointer(ends_[0]);
}

void RoceCable::carry(const RocePort* from, ns3::Ptr<ns3::Packet> packet) {
  RocePort* to = other(from);
  if (from->down() || to->down()) return;
  ns3::Simulator::Schedule(ns3::NanoSeconds(latency()), &RocePort::receive_from_cable, to, packet);
}

ns3::Ptr<ns3::NetDevice> RoceCable::GetDevice(std::size_t i) const { return ends_[i % 2]; }

void RoceCable::DoDispose() {
  ends_ = {};
  ns3::Channel::DoDispose();
}

}  // namespace gauntlet::sim::packet
