#pragma once
// The packet engine's RoCEv2 parameters, each with the deployment or paper
// it comes from. Rates are in bytes per second, sizes in bytes.
#include <cstdint>

#include "sim/time.hpp"

namespace gauntlet::sim {

// DCQCN, the congestion control RoCE NICs run (Zhu et al., "Congestion
// Control for Large-Scale RDMA Deployments", SIGCOMM 2015: the parameters of
// its deployment guideline), with the switch-side ECN thresholds it relies on.
struct DcqcnParams {
  // Switch egress marking, RED-like on the instantaneous queue: no mark below
  // kmin, probability rising linearly to pmax at kmax, every packet above.
  // The paper's 5 KB / 200 KB / 1% for 40 Gb/s, scaled with line rate by
  // the engine (see PacketEngine), as HPCC's ns-3 model scales its KMIN/KMAX
  // maps (100 KB / 400 KB at 25 / 100 Gb/s there, Pmax 0.2).
  double kmin_bytes_at_40g = 5e3;
  double kmax_bytes_at_40g = 200e3;
  double pmax = 0.01;
  // Notification point: at most one CNP per QP per interval (N = 50 us).
  Nanos cnp_interval = 50 * kMicrosecond;
  // Reaction point. alpha's EWMA gain g = 1/256; alpha decays every 55 us
  // without a CNP; the rate rises every 55 us (timer T) or every 10 MB sent
  // (byte counter B); F = 5 fast-recovery steps halve the gap to the target,
  // then additive (R_AI = 40 Mb/s at 40 Gb/s) and hyper (R_HAI = 10 x R_AI)
  // increase; the steps scale with line rate like the ECN thresholds, or a
  // 400 Gb/s QP cut to a tenth would need ~100 ms to recover.
  double alpha_gain = 1.0 / 256;
  Nanos rate_increase_interval = 55 * kMicrosecond;  // also the alpha timer
  double byte_counter = 10e6;
  int fast_recovery_steps = 5;
  double additive_increase_at_40g = 40e6 / 8;
  double hyper_increase_at_40g = 400e6 / 8;
  // A throttled QP never drops below this (HPCC's model: MinRate 100 Mb/s).
  double min_rate = 100e6 / 8;
};

// Priority flow control (IEEE 802.1Qbb) on a shared-buffer switch.
struct PfcParams {
  // Shared packet buffer per switch (HPCC's ns-3 model: BUFFER_SIZE 32 MB).
  double buffer_bytes = 32e6;
  // An ingress queue pauses its upstream when its bytes exceed this fraction
  // of the free shared buffer (dynamic threshold, Choudhury and Hahne 1998;
  // alpha = 1/8 is Broadcom's default, also HPCC's), and resumes two MTUs
  // below the threshold that paused it.
  double dynamic_threshold = 1.0 / 8;
  int resume_offset_mtus = 2;
  // A PAUSE frame stops the priority for 65535 quanta of 512 bit times, and
  // a paused port renews it before it expires (standard behaviour).
  int pause_quanta = 65535;
};

// The RoCEv2 transport (reliable connection, go-back-N) as NCCL configures it.
struct TransportParams {
  // 4096-byte RoCE MTU (payload), plus RoCEv2 headers on the wire:
  // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 = 62 bytes.
  int mtu_payload = 4096;
  int header_bytes = 62;
  // The responder acknowledges every this many packets (coalesced ACKs, as
  // HPCC's L2_ACK_INTERVAL) and at once on a message's last packet.
  int ack_every = 16;
  // Local ACK timeout and retries as NCCL configures a QP and a ConnectX NIC
  // with adaptive retransmission runs them. The QP's timeout is 4.096 us x
  // 2^ib_timeout (InfiniBand spec; NCCL_IB_TIMEOUT, 20 from NCCL 2.23.4 on:
  // 4.29 s). A QP silent for its current timeout resends from its
  // first unacknowledged packet; the first timeout is short and each
  // consecutive one doubles, capped at the QP's timeout; an acknowledgement
  // of new data resets it. The QP errors (IBV_WC_RETRY_EXC_ERR) when no
  // progress is made for retry_count x the QP's timeout (NCCL_IB_RETRY_CNT,
  // 7: 30 s), the total NVIDIA's adaptive retransmission profile applies
  // with qp_total_timeout. The defaults are models/packet_transport_calibration.hpp's. Setting the initial timeout to
  // the QP's timeout gives the fixed-timeout transport.
  int ib_timeout = 20;
  int retry_count = 7;
  // No published default for the firmware's profile (NVIDIA documents only
  // its 4 us minimum base): 4.096 us x 2^8 = 1.05 ms, above the 0.64 ms a
  // full 32 MB switch buffer takes to drain at 400 Gb/s, so queueing alone
  // does not fire it.
  Nanos initial_retransmit_timeout = 1'048'576;
  Nanos qp_timeout() const { return static_cast<Nanos>(4096) << ib_timeout; }
  Nanos qp_give_up() const { return qp_timeout() * retry_count; }
  // A responder sends one NAK per out-of-sequence episode, and again after
  // this long if the hole persists (HPCC's NACK interval: 500 us).
  Nanos nak_interval = 500 * kMicrosecond;
};

struct RoceParams {
  DcqcnParams dcqcn;
  PfcParams pfc;
  TransportParams transport;
  // The data traffic class PFC pauses; ACK/NAK/CNP ride a higher, strict
  // priority class (the common lossless RoCE configuration: RoCE on 3, CNP 6).
  int data_priority = 3;
  int control_priority = 6;
};

}  // namespace gauntlet::sim
