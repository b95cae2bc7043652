#include "sim/packet/rnic.hpp"

#include <ns3/simulator.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/contract.hpp"

namespace gauntlet::sim::packet {
namespace {

Nanos sim_now() { return ns3::Simulator::Now().GetNanoSeconds(); }
ns3::Time at_offset(Nanos at) { return ns3::NanoSeconds(std::max<Nanos>(0, at - sim_now())); }
// Frames the NIC keeps ready in its port's data queue: enough to keep the
// wire busy, few enough that a PFC pause stops the QPs at once.
constexpr int kReadyFrames = 2;

}  // namespace

Rnic::Rnic(int endpoint, const RoceParams& params, ns3::Ptr<RocePort> port)
    : endpoint_(endpoint), params_(params), port_(port), line_rate_(port->bytes_per_second()) {
  port_->set_handlers([this](ns3::Ptr<ns3::Packet> p, const RoceHeader& h, RocePort&) { on_receive(p, h); },
                      [this](ns3::Ptr<ns3::Packet>, const RoceHeader& h) {
                        if (h.kind == FrameKind::data) pump();
                      });
}

Rnic::~Rnic() {
  ns3::Simulator::Cancel(pump_event_);
  ns3::Simulator::Cancel(storm_event_);
  for (auto& [id, qp] : sending_) {
    ns3::Simulator::Cancel(qp.rto);
    ns3::Simulator::Cancel(qp.rate_decrease);
    ns3::Simulator::Cancel(qp.rate_timer);
  }
}

void Rnic::set_handlers(MessageDelivered delivered, MessageAcked acked, MessageFailed failed) {
  delivered_ = std::move(delivered);
  acked_ = std::move(acked);
  failed_ = std::move(failed);
}

void Rnic::post_send(std::uint32_t id, int dst, double bytes, std::uint16_t udp_sport) {
  const auto mtu = static_cast<double>(params_.transport.mtu_payload);
  SendQp qp(DcqcnRate(params_.dcqcn, line_rate_));  // DCQCN starts a flow at line rate
  qp.id = id;
  qp.dst = dst;
  qp.udp_sport = udp_sport;
  qp.packets = static_cast<std::uint32_t>(std::max(1.0, std::ceil(bytes / mtu)));
  qp.last_payload = static_cast<std::uint32_t>(std::max(0.0, bytes - (qp.packets - 1) * mtu));
  qp.next_send = sim_now();
  qp.last_progress = sim_now();
  qp.timer_from = qp.last_progress;
  qp.timeout = std::min(params_.transport.initial_retransmit_timeout, params_.transport.qp_timeout());
  const bool fresh = sending_.emplace(id, qp).second;
  // Acknowledgements find their message by QP number alone.
  GAUNTLET_INVARIANT(fresh, "QP " + std::to_string(id) + " posted twice");
  pump();
}

double Rnic::bytes_acknowledged(std::uint32_t id) const {
  auto it = sending_.find(id);
  if (it == sending_.end()) return 0;
  const SendQp& qp = it->second;
  return std::min<double>(qp.acked, qp.packets) * params_.transport.mtu_payload;
}

double Rnic::bytes_sent(std::uint32_t id) const {
  auto it = sending_.find(id);
  if (it == sending_.end()) return 0;
  const SendQp& qp = it->second;
  if (qp.sent_high == 0) return 0;
  const double mtu = params_.transport.mtu_payload;
  return (qp.sent_high - 1) * mtu + (qp.sent_high == qp.packets ? qp.last_payload : mtu);
}

double Rnic::rate_of(std::uint32_t id) const {
  auto it = sending_.find(id);
  return it == sending_.end() ? 0 : it->second.dcqcn.rate();
}

void Rnic::schedule_pump(Nanos at) {
  if (pump_event_.IsRunning() && pump_at_ <= at) return;
  ns3::Simulator::Cancel(pump_event_);
  pump_at_ = at;
  pump_event_ = ns3::Simulator::Schedule(at_offset(at), [this] { pump(); });
}

// Round robin over QPs with packets to send, each paced at its own rate.
void Rnic::pump() {
  if (port_->down()) return;
  const double frame = params_.transport.mtu_payload + params_.transport.header_bytes;
  const Nanos now = sim_now();
  while (port_->queued_bytes(params_.data_priority) < kReadyFrames * frame) {
    SendQp* pick = nullptr;
    Nanos earliest = std::numeric_limits<Nanos>::max();
    auto consider = [&](SendQp& qp) {
      if (pick || qp.failed || qp.next_psn >= qp.packets) return;
      if (qp.next_send <= now)
        pick = &qp;
      else
        earliest = std::min(earliest, qp.next_send);
    };
    for (auto it = sending_.upper_bound(last_served_); it != sending_.end(); ++it) consider(it->second);
    for (auto it = sending_.begin(); it != sending_.end() && it->first <= last_served_; ++it) consider(it->second);
    if (!pick) {
      if (earliest != std::numeric_limits<Nanos>::max()) schedule_pump(earliest);
      return;
    }
    last_served_ = pick->id;
    send_data(*pick);
  }
}

void Rnic::send_data(SendQp& qp) {
  const TransportParams& t = params_.transport;
  // pump() picks only QPs with packets left to send, paced at a rate > 0.
  GAUNTLET_INVARIANT(!qp.failed && qp.next_psn < qp.packets && qp.dcqcn.rate() > 0,
                     "QP " + std::to_string(qp.id) + " psn " + std::to_string(qp.next_psn));
  RoceHeader h;
  h.kind = FrameKind::data;
  h.src = endpoint_;
  h.dst = qp.dst;
  h.qp = qp.id;
  h.udp_sport = qp.udp_sport;
  h.psn = qp.next_psn;
  h.last = qp.next_psn + 1 == qp.packets;
  h.payload = h.last ? qp.last_payload : static_cast<std::uint32_t>(t.mtu_payload);
  h.priority = static_cast<std::uint8_t>(params_.data_priority);
  const std::uint32_t wire = h.payload + static_cast<std::uint32_t>(t.header_bytes);
  auto packet = ns3::Create<ns3::Packet>(wire - h.GetSerializedSize());
  packet->AddHeader(h);
  if (qp.next_psn < qp.sent_high) ++counters_.retransmitted_packets;
  ++qp.next_psn;
  qp.sent_high = std::max(qp.sent_high, qp.next_psn);
  const Nanos now = sim_now();
  const double gap = wire / qp.dcqcn.rate() * 1e9 + qp.pacing_carry_ns;
  const double whole = std::floor(gap);
  qp.pacing_carry_ns = gap - whole;
  qp.next_send = std::max(qp.next_send, now) + static_cast<Nanos>(whole);
  if (qp.dcqcn.below_line_rate()) {
    qp.dcqcn.on_sent(wire);
    check_rate(qp);
  }
  arm_rto(qp);
  port_->enqueue(packet, h);
}

void Rnic::send_control(FrameKind kind, int dst, std::uint32_t qp, std::uint32_t psn) {
  RoceHeader h;
  h.kind = kind;
  h.src = endpoint_;
  h.dst = dst;
  h.qp = qp;
  h.psn = psn;
  h.priority = static_cast<std::uint8_t>(params_.control_priority);
  // ACK, NAK and CNP are minimum-size frames.
  auto packet = ns3::Create<ns3::Packet>(64 - h.GetSerializedSize());
  packet->AddHeader(h);
  port_->enqueue(packet, h);
}

void Rnic::on_receive(ns3::Ptr<ns3::Packet> packet, const RoceHeader& h) {
  (void)packet;
  if (h.dst != endpoint_) return;  // misdelivered: a NIC drops frames not for it
  switch (h.kind) {
    case FrameKind::data:
      on_data(h);
      break;
    case FrameKind::ack:
      on_ack(h, false);
      break;
    case FrameKind::nak:
      on_ack(h, true);
      break;
    case FrameKind::cnp:
      on_cnp(h);
      break;
    case FrameKind::pause:
      break;  // handled by the port
  }
}

void Rnic::on_data(const RoceHeader& h) {
  ReceiveQp& r = receiving_[h.qp];
  const Nanos now = sim_now();
  if (h.ecn_ce) ++counters_.ecn_marked_received;
  if (h.ecn_ce && (r.last_cnp < 0 || now - r.last_cnp >= params_.dcqcn.cnp_interval)) {
    r.last_cnp = now;
    ++counters_.cnp_sent;
    send_control(FrameKind::cnp, h.src, h.qp, 0);
  }
  if (h.psn > r.expected) {
    ++counters_.out_of_sequence;
    if (r.nak_psn != r.expected || now - r.last_nak >= params_.transport.nak_interval) {
      r.nak_psn = r.expected;
      r.last_nak = now;
      ++counters_.naks_sent;
      send_control(FrameKind::nak, h.src, h.qp, r.expected);
    }
    return;
  }
  const bool in_order = h.psn == r.expected;
  // Only the message's last packet completes it, and only once.
  GAUNTLET_INVARIANT(!(in_order && r.complete), "QP " + std::to_string(h.qp) + " received past its last packet");
  if (in_order) ++r.expected;
  ++r.since_ack;
  if (h.last || r.since_ack >= static_cast<std::uint32_t>(params_.transport.ack_every)) {
    r.since_ack = 0;
    send_control(FrameKind::ack, h.src, h.qp, r.expected);
  }
  if (in_order && h.last && !r.complete) {
    r.complete = true;
    if (delivered_) delivered_(h.qp);
  }
}

void Rnic::on_ack(const RoceHeader& h, bool nak) {
  auto it = sending_.find(h.qp);
  if (it == sending_.end()) return;  // a late acknowledgement of a finished message
  SendQp& qp = it->second;
  // The responder acknowledges in order only what it received, and it
  // received only what was sent.
  GAUNTLET_INVARIANT(h.psn <= qp.sent_high && qp.sent_high <= qp.packets,
                     "QP " + std::to_string(qp.id) + " acknowledged to psn " + std::to_string(h.psn) + " of " +
                         std::to_string(qp.sent_high) + " sent");
  if (nak) ++counters_.naks_received;
  if (h.psn > qp.acked) {
    qp.acked = h.psn;
    qp.last_progress = sim_now();
    qp.timer_from = qp.last_progress;
    qp.timeout = std::min(params_.transport.initial_retransmit_timeout, params_.transport.qp_timeout());
  }
  if (nak && qp.next_psn > h.psn) qp.next_psn = h.psn;  // go back N
  if (qp.acked >= qp.packets) {
    ns3::Simulator::Cancel(qp.rto);
    ns3::Simulator::Cancel(qp.rate_decrease);
    ns3::Simulator::Cancel(qp.rate_timer);
    const std::uint32_t id = qp.id;
    sending_.erase(it);
    if (acked_) acked_(id);
    return;
  }
  if (nak) pump();
}

// DCQCN reaction point on a CNP: the rate is cut at the end of the monitor
// period the CNP arrived in (DcqcnRate says when).
void Rnic::on_cnp(const RoceHeader& h) {
  auto it = sending_.find(h.qp);
  if (it == sending_.end()) return;
  ++counters_.cnp_handled;
  SendQp& qp = it->second;
  const Nanos decrease_at = qp.dcqcn.on_cnp(sim_now());
  if (decrease_at < 0) return;  // a cut is already pending for this period
  const std::uint32_t id = qp.id;
  qp.rate_decrease = ns3::Simulator::Schedule(at_offset(decrease_at), [this, id] { dcqcn_decrease(id); });
}

// The cut restarts the rate timer: the first increase comes a timer period
// after it.
void Rnic::dcqcn_decrease(std::uint32_t id) {
  auto it = sending_.find(id);
  if (it == sending_.end()) return;
  SendQp& qp = it->second;
  qp.dcqcn.decrease(sim_now());
  check_rate(qp);
  ns3::Simulator::Cancel(qp.rate_timer);
  qp.rate_timer =
      ns3::Simulator::Schedule(ns3::NanoSeconds(params_.dcqcn.rate_increase_interval), [this, id] { dcqcn_tick(id); });
}

// The rate timer: one increase stage per period until the line rate.
void Rnic::dcqcn_tick(std::uint32_t id) {
  auto it = sending_.find(id);
  if (it == sending_.end()) return;
  SendQp& qp = it->second;
  const bool below = qp.dcqcn.on_timer();
  check_rate(qp);
  if (!below) return;  // recovered: nothing to do until the next CNP
  qp.rate_timer =
      ns3::Simulator::Schedule(ns3::NanoSeconds(params_.dcqcn.rate_increase_interval), [this, id] { dcqcn_tick(id); });
}

// DCQCN keeps a QP's rate between its floor and the line rate (pacing
// divides by it), and alpha, a moving average of CNP arrivals, in [0, 1].
void Rnic::check_rate(const SendQp& qp) const {
  const DcqcnRate& d = qp.dcqcn;
  const double alpha = d.alpha(sim_now());
  GAUNTLET_INVARIANT(d.rate() > 0 && d.rate() <= line_rate_ && d.target() <= line_rate_,
                     "QP " + std::to_string(qp.id) + " rate " + std::to_string(d.rate()) + " target " +
                         std::to_string(d.target()) + " line rate " + std::to_string(line_rate_));
  GAUNTLET_INVARIANT(alpha >= 0 && alpha <= 1, "alpha " + std::to_string(alpha));
}

void Rnic::arm_rto(SendQp& qp) {
  if (qp.rto.IsRunning()) return;
  const std::uint32_t id = qp.id;
  qp.rto = ns3::Simulator::Schedule(at_offset(qp.timer_from + qp.timeout), [this, id] { on_rto(id); });
}

// Fires at the last progress or timeout plus the current timeout; re-arms
// itself while acknowledgements keep coming, so no timer is touched per ACK.
// Each timeout without progress resends from the first unacknowledged packet
// and doubles the next one, up to the QP's timeout; with no progress for
// the QP's give-up time, the QP goes to the error state.
void Rnic::on_rto(std::uint32_t id) {
  auto it = sending_.find(id);
  if (it == sending_.end()) return;
  SendQp& qp = it->second;
  if (qp.failed) return;
  const TransportParams& t = params_.transport;
  const Nanos now = sim_now();
  if (now - qp.timer_from < qp.timeout) {
    arm_rto(qp);
    return;
  }
  // Acknowledged messages leave sending_: a timeout is for one unfinished.
  GAUNTLET_INVARIANT(qp.acked < qp.packets, "QP " + std::to_string(id) + " timed out after its last acknowledgement");
  ++counters_.timeouts;
  if (now - qp.last_progress >= t.qp_give_up()) {
    qp.failed = true;  // IBV_WC_RETRY_EXC_ERR: nothing more is sent
    ++counters_.qp_errors;
    if (failed_) failed_(id);
    return;
  }
  qp.next_psn = qp.acked;
  qp.timer_from = now;
  qp.timeout = std::min(qp.timeout * 2, t.qp_timeout());
  arm_rto(qp);
  pump();
}

void Rnic::storm_pause(Nanos until) {
  // A storm that starts while one lasts continues the same stall.
  if (stalled_since_ < 0) stalled_since_ = sim_now();
  storm_tick(until);
}

void Rnic::storm_tick(Nanos until) {
  ns3::Simulator::Cancel(storm_event_);
  const Nanos now = sim_now();
  if (now >= until) {
    if (!storm_muted_) port_->send_pause(params_.data_priority, 0);
    stalled_since_ = -1;
    storm_muted_ = false;
    return;
  }
  const PfcWatchdogParams& w = params_.watchdog;
  const Nanos mute_at = w.nic_enabled ? stalled_since_ + w.nic_stall_timeout : std::numeric_limits<Nanos>::max();
  if (now >= mute_at) {
    // The stall goes on, but the NIC sends no pause for it any more; the
    // last one runs out at the switch by itself.
    if (!storm_muted_) ++counters_.pause_storm_errors;
    storm_muted_ = true;
    storm_event_ = ns3::Simulator::Schedule(ns3::NanoSeconds(until - now), [this, until] { storm_tick(until); });
    return;
  }
  const int quanta = params_.pfc.pause_quanta;
  port_->send_pause(params_.data_priority, quanta);
  // Renewed at half the pause time, so the class never resumes meanwhile.
  const auto renew = static_cast<Nanos>(quanta * 64.0 / line_rate_ * 1e9 / 2);
  storm_event_ = ns3::Simulator::Schedule(ns3::NanoSeconds(std::min({renew, until - now, mute_at - now})),
                                          [this, until] { storm_tick(until); });
}

}  // namespace gauntlet::sim::packet
