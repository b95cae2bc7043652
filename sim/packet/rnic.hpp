#pragma once
// A RoCEv2 RNIC: reliable-connection queue pairs over one port. Each QP
// carries one message, paced at its DCQCN rate; the responder acknowledges
// in-order packets, NAKs the first out-of-sequence one (go-back-N) and
// answers ECN-marked packets with CNPs; the requester cuts its rate on CNPs,
// recovers it on timers and byte counts, resends from the NAKed PSN or after
// a retransmission timeout, and errors the QP after its retry limit.
#include <ns3/event-id.h>
#include <ns3/ptr.h>

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>

#include "sim/packet/dcqcn_rate.hpp"
#include "sim/packet/roce_params.hpp"
#include "sim/packet/roce_port.hpp"

namespace gauntlet::sim::packet {

struct RnicCounters {
  std::uint64_t retransmitted_packets = 0;  // data packets sent again (go-back-N)
  std::uint64_t naks_sent = 0;
  std::uint64_t naks_received = 0;
  std::uint64_t out_of_sequence = 0;      // data packets received past a hole
  std::uint64_t cnp_sent = 0;             // as a notification point (receiver)
  std::uint64_t cnp_handled = 0;          // as a reaction point (sender)
  std::uint64_t timeouts = 0;             // retransmission timeouts (local_ack_timeout_err)
  std::uint64_t qp_errors = 0;            // QPs that exhausted their retries
  std::uint64_t ecn_marked_received = 0;  // data packets received marked CE
  // Stalls the NIC's watchdog stopped pausing for (mlx5's
  // tx_pause_storm_error_events).
  std::uint64_t pause_storm_errors = 0;
};

class Rnic {
 public:
  // The responder has every byte of a message, in order (at `now`).
  using MessageDelivered = std::function<void(std::uint32_t qp)>;
  // The requester has the acknowledgement of a message's last packet.
  using MessageAcked = std::function<void(std::uint32_t qp)>;
  // The requester's QP went to the error state (retries exhausted): the
  // message will never complete.
  using MessageFailed = std::function<void(std::uint32_t qp)>;

  Rnic(int endpoint, const RoceParams& params, ns3::Ptr<RocePort> port);
  Rnic(const Rnic&) = delete;
  Rnic& operator=(const Rnic&) = delete;
  ~Rnic();

  void set_handlers(MessageDelivered delivered, MessageAcked acked, MessageFailed failed = {});
  // Posts a message of `bytes` to `dst` on a new QP numbered `qp`.
  void post_send(std::uint32_t qp, int dst, double bytes, std::uint16_t udp_sport);
  // Forgets a finished message's responder state.
  void close_receive(std::uint32_t qp) { receiving_.erase(qp); }
  // Payload bytes of a message the requester has sent at least once.
  double bytes_sent(std::uint32_t qp) const;
  // Payload bytes of a message the responder has acknowledged, in order.
  double bytes_acknowledged(std::uint32_t qp) const;
  // Current DCQCN rate of a message's QP, bytes per second (0 if none).
  double rate_of(std::uint32_t qp) const;
  // Keeps sending PAUSE for the data class until `until` (a PFC storm: a
  // NIC whose receive path is stuck pauses its switch port indefinitely),
  // unless its watchdog (RoceParams::watchdog) stops it first: then it
  // sends none from nic_stall_timeout into the stall until the stall ends.
  void storm_pause(Nanos until);
  // The port came back up or its rate changed: resume sending.
  void wake() { pump(); }

  const RnicCounters& counters() const { return counters_; }
  RocePort& port() { return *port_; }
  const RocePort& port() const { return *port_; }

 private:
  struct SendQp {
    explicit SendQp(DcqcnRate rate) : dcqcn(rate) {}
    std::uint32_t id = 0;
    int dst = 0;
    std::uint16_t udp_sport = 0;
    std::uint32_t packets = 0;
    std::uint32_t last_payload = 0;
    std::uint32_t next_psn = 0;   // next to send
    std::uint32_t acked = 0;      // first not yet acknowledged
    std::uint32_t sent_high = 0;  // one past the highest PSN ever sent
    DcqcnRate dcqcn;              // the QP's DCQCN rate
    Nanos next_send = 0;
    double pacing_carry_ns = 0;
    Nanos last_progress = 0;  // posted, or new data acknowledged
    Nanos timer_from = 0;     // the last progress or timeout
    Nanos timeout = 0;        // current retransmission timeout (adaptive)
    bool failed = false;
    ns3::EventId rto;
    ns3::EventId rate_decrease;  // DCQCN's pending cut at the end of a monitor period
    ns3::EventId rate_timer;     // DCQCN's rate-increase timer, running while below line rate
  };
  struct ReceiveQp {
    std::uint32_t expected = 0;
    std::uint32_t since_ack = 0;
    std::uint32_t nak_psn = UINT32_MAX;  // the hole last NAKed
    Nanos last_nak = -1;
    Nanos last_cnp = -1;
    bool complete = false;
  };

  void on_receive(ns3::Ptr<ns3::Packet> packet, const RoceHeader& h);
  void on_data(const RoceHeader& h);
  void on_ack(const RoceHeader& h, bool nak);
  void on_cnp(const RoceHeader& h);
  void send_control(FrameKind kind, int dst, std::uint32_t qp, std::uint32_t psn);
  void pump();
  void schedule_pump(Nanos at);
  void send_data(SendQp& qp);
  void arm_rto(SendQp& qp);
  void on_rto(std::uint32_t id);
  void dcqcn_decrease(std::uint32_t id);
  void dcqcn_tick(std::uint32_t id);
  void check_rate(const SendQp& qp) const;
  void storm_tick(Nanos until);

  int endpoint_;
  const RoceParams& params_;
  ns3::Ptr<RocePort> port_;
  double line_rate_;
  std::map<std::uint32_t, SendQp> sending_;  // by QP number: a fixed service order
  std::unordered_map<std::uint32_t, ReceiveQp> receiving_;
  std::uint32_t last_served_ = 0;
  Nanos pump_at_ = -1;
  ns3::EventId pump_event_;
  ns3::EventId storm_event_;
  Nanos stalled_since_ = -1;  // the storm's start, while it lasts
  bool storm_muted_ = false;  // the watchdog stopped the storm's pauses
  MessageDelivered delivered_;
  MessageAcked acked_;
  MessageFailed failed_;
  RnicCounters counters_;
};

}  // namespace gauntlet::sim::packet
