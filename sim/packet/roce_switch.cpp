#include "sim/packet/roce_switch.hpp"

#include <ns3/simulator.h>

#include <algorithm>
#include <string>

#include "sim/contract.hpp"

namespace gauntlet::sim::packet {

RoceSwitch::RoceSwitch(const RoceParams& params, Rng rng) : params_(params), rng_(rng) {}

RoceSwitch::~RoceSwitch() {
  for (auto& per_port : ingress_)
    for (IngressQueue& q : per_port) ns3::Simulator::Cancel(q.renew);
  for (ns3::EventId& e : storms_) ns3::Simulator::Cancel(e);
  for (Watch& w : watch_) {
    ns3::Simulator::Cancel(w.check);
    ns3::Simulator::Cancel(w.restore);
  }
}

int RoceSwitch::add_port(ns3::Ptr<RocePort> port) {
  const int index = ports();
  ports_.push_back(port);
  ingress_.emplace_back();
  storms_.emplace_back();
  watch_.emplace_back(params_.watchdog);
  port->set_handlers(
      [this, index](ns3::Ptr<ns3::Packet> p, const RoceHeader& h, RocePort&) { on_receive(p, h, index); },
      [this, index](ns3::Ptr<ns3::Packet> p, const RoceHeader&) { on_dequeue(p, index); });
  if (params_.watchdog.switch_enabled)
    port->set_pause_handler([this, index](int priority, int quanta) { on_pause_frame(index, priority, quanta); });
  return index;
}

Nanos RoceSwitch::pause_renewal(int port) const {
  return static_cast<Nanos>(params_.pfc.pause_quanta * 64.0 /
                            ports_[static_cast<std::size_t>(port)]->bytes_per_second() * 1e9 / 2);
}

void RoceSwitch::on_receive(ns3::Ptr<ns3::Packet> packet, const RoceHeader& h, int ingress) {
  const int egress = forwarding_ ? forwarding_(h) : -1;
  GAUNTLET_INVARIANT(egress < ports(),
                     "forwarded to port " + std::to_string(egress) + " of " + std::to_string(ports()));
  if (egress < 0) return;  // no route: the frame is dropped
  RocePort& out = port(egress);
  // A down port's frames are dropped on arrival, never buffered: held, they
  // would never leave, and their ingress queue would pause its sender for good.
  if (out.down()) {
    out.count_drop();
    return;
  }
  const double bytes = packet->GetSize();
  const int priority = h.priority % kPriorities;
  if (watchdog_drops(ingress, egress, priority)) return;
  if (used_ + bytes > params_.pfc.buffer_bytes) {
    out.count_drop();  // buffer overflow: only if PFC could not hold the sender back
    return;
  }
  used_ += bytes;
  queue(ingress, priority).bytes += bytes;
  // Each frame is held once, from its arrival until it leaves its egress.
  const bool fresh = held_.try_emplace(packet->GetUid(), Held{ingress, priority, bytes}).second;
  GAUNTLET_INVARIANT(fresh, "frame " + std::to_string(packet->GetUid()) + " buffered twice");
  check_buffer();
  if (h.kind == FrameKind::data && ecn_mark(out, priority)) {
    RoceHeader marked;
    packet->RemoveHeader(marked);
    marked.ecn_ce = true;
    packet->AddHeader(marked);
    out.count_ecn_mark();
    out.enqueue(packet, marked);
  } else {
    out.enqueue(packet, h);
  }
  // A frame waiting behind a pause that has lasted long enough: the queue
  // is stuck now, not at the next PAUSE.
  if (params_.watchdog.switch_enabled && priority == params_.data_priority) watchdog_check(egress);
  check_pause(ingress, priority);
}

// RED on the egress queue as DCQCN configures it, in bytes at every port.
bool RoceSwitch::ecn_mark(const RocePort& egress, int priority) {
  const DcqcnParams& d = params_.dcqcn;
  const double q = egress.queued_bytes(priority);
  if (q <= d.kmin_bytes) return false;
  if (q >= d.kmax_bytes) return true;
  return rng_.uniform() < d.pmax * (q - d.kmin_bytes) / (d.kmax_bytes - d.kmin_bytes);
}

void RoceSwitch::on_dequeue(ns3::Ptr<ns3::Packet> packet, int egress) {
  (void)egress;
  auto it = held_.find(packet->GetUid());
  if (it == held_.end()) return;
  const Held held = it->second;
  held_.erase(it);
  used_ -= held.bytes;
  queue(held.ingress, held.priority).bytes -= held.bytes;
  check_buffer();
  check_resume(held.ingress, held.priority);
}

// The shared buffer holds what its ingress queues hold, within its size;
// byte counts are whole numbers, exact in a double.
void RoceSwitch::check_buffer() const {
  GAUNTLET_INVARIANT(used_ >= 0 && used_ <= params_.pfc.buffer_bytes && (!held_.empty() || used_ == 0),
                     "buffer " + std::to_string(used_) + " bytes with " + std::to_string(held_.size()) + " frames");
  GAUNTLET_DEBUG_INVARIANT(
      [this] {
        double sum = 0;
        for (const auto& per_port : ingress_)
          for (const IngressQueue& q : per_port) {
            if (q.bytes < 0) return false;
            sum += q.bytes;
          }
        return sum == used_;
      }(),
      "the ingress queues do not add up to the " + std::to_string(used_) + " bytes buffered");
}

// Dynamic threshold: an ingress queue may hold alpha x the free buffer.
void RoceSwitch::check_pause(int ingress, int priority) {
  if (priority != params_.data_priority) return;  // only the lossless class is paused
  IngressQueue& q = queue(ingress, priority);
  const double threshold = params_.pfc.dynamic_threshold * (params_.pfc.buffer_bytes - used_);
  if (q.pausing || q.bytes <= threshold) return;
  q.pausing = true;
  q.threshold = threshold;
  port(ingress).send_pause(priority, params_.pfc.pause_quanta);
  q.renew = ns3::Simulator::Schedule(ns3::NanoSeconds(pause_renewal(ingress)),
                                     [this, ingress, priority] { renew_pause(ingress, priority); });
}

void RoceSwitch::check_resume(int ingress, int priority) {
  IngressQueue& q = queue(ingress, priority);
  if (!q.pausing) return;
  GAUNTLET_INVARIANT(priority == params_.data_priority, "class " + std::to_string(priority) + " paused");
  const double frame = params_.transport.mtu_payload + params_.transport.header_bytes;
  if (q.bytes > q.threshold - params_.pfc.resume_offset_mtus * frame) return;
  q.pausing = false;
  ns3::Simulator::Cancel(q.renew);
  port(ingress).send_pause(priority, 0);  // XON
}

void RoceSwitch::renew_pause(int ingress, int priority) {
  IngressQueue& q = queue(ingress, priority);
  if (!q.pausing) return;
  // A queue keeps its upstream paused only while it holds frames: an empty
  // one that still paused would stop its sender for good.
  GAUNTLET_INVARIANT(q.bytes > 0, "port " + std::to_string(ingress) + " renews a pause with its queue empty");
  port(ingress).send_pause(priority, params_.pfc.pause_quanta);
  q.renew = ns3::Simulator::Schedule(ns3::NanoSeconds(pause_renewal(ingress)),
                                     [this, ingress, priority] { renew_pause(ingress, priority); });
}

void RoceSwitch::storm_pause(int index, Nanos until) {
  auto& event = storms_[static_cast<std::size_t>(index)];
  ns3::Simulator::Cancel(event);
  const Nanos now = ns3::Simulator::Now().GetNanoSeconds();
  if (now >= until) {
    port(index).send_pause(params_.data_priority, 0);
    return;
  }
  port(index).send_pause(params_.data_priority, params_.pfc.pause_quanta);
  event = ns3::Simulator::Schedule(ns3::NanoSeconds(std::min(pause_renewal(index), until - now)),
                                   [this, index, until] { storm_pause(index, until); });
}

// A stormed queue under the drop action loses its lossless frames both
// ways: those bound out of the port and those coming in on it.
bool RoceSwitch::watchdog_drops(int ingress, int egress, int priority) {
  const PfcWatchdogParams& w = params_.watchdog;
  if (!w.switch_enabled || w.forward || priority != params_.data_priority) return false;
  if (watch_[static_cast<std::size_t>(ingress)].dog.stormed()) {
    port(ingress).count_pfcwd_rx_dropped();
    return true;
  }
  if (watch_[static_cast<std::size_t>(egress)].dog.stormed()) {
    port(egress).count_pfcwd_tx_dropped();
    return true;
  }
  return false;
}

void RoceSwitch::on_pause_frame(int index, int priority, int quanta) {
  if (priority != params_.data_priority || quanta == 0) return;
  Watch& w = watch_[static_cast<std::size_t>(index)];
  w.dog.on_pause(ns3::Simulator::Now().GetNanoSeconds());
  if (w.dog.stormed()) {
    arm_restore(index);
    return;
  }
  watchdog_check(index);
}

// Declares the queue stormed if it has been paused for the detection time
// holding frames; else looks again when that time would be up.
void RoceSwitch::watchdog_check(int index) {
  Watch& w = watch_[static_cast<std::size_t>(index)];
  RocePort& p = port(index);
  const int priority = params_.data_priority;
  const Nanos now = ns3::Simulator::Now().GetNanoSeconds();
  const Nanos since = p.paused_since(priority);
  if (w.dog.check(now, since, p.queued_bytes(priority) > 0)) {
    ns3::Simulator::Cancel(w.check);
    p.count_pfcwd_detected();
    p.set_ignore_pause(priority, true);
    if (!params_.watchdog.forward) p.count_pfcwd_tx_dropped(p.drop_queued(priority));
    arm_restore(index);
    return;
  }
  const Nanos due = w.dog.detection_due(since);
  if (due > now && !w.check.IsRunning())
    w.check = ns3::Simulator::Schedule(ns3::NanoSeconds(due - now), [this, index] { watchdog_check(index); });
}

void RoceSwitch::arm_restore(int index) {
  Watch& w = watch_[static_cast<std::size_t>(index)];
  if (w.restore.IsRunning()) return;
  const Nanos now = ns3::Simulator::Now().GetNanoSeconds();
  w.restore = ns3::Simulator::Schedule(ns3::NanoSeconds(std::max<Nanos>(0, w.dog.restoration_due() - now)),
                                       [this, index] { watchdog_restore(index); });
}

void RoceSwitch::watchdog_restore(int index) {
  Watch& w = watch_[static_cast<std::size_t>(index)];
  if (!w.dog.try_restore(ns3::Simulator::Now().GetNanoSeconds())) {
    arm_restore(index);  // a PAUSE came meanwhile
    return;
  }
  port(index).count_pfcwd_restored();
  port(index).set_ignore_pause(params_.data_priority, false);
}

}  // namespace gauntlet::sim::packet
