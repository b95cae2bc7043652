#pragma once
// The packet engine's RoCEv2 parameters, each with the deployment or paper
// it comes from. Rates are in bytes per second, sizes in bytes.
#include <cstdint>

#include "sim/time.hpp"

namespace gauntlet::sim {

// DCQCN, the congestion control RoCE NICs run (Zhu et al., "Congestion
// Control for Large-Scale RDMA Deployments", SIGCOMM 2015), with the
// parameters NVIDIA's ConnectX-4 and later firmware ships ("DCQCN CC
// Parameters", NVIDIA DOCA / MLNX_OFED documentation: the names in
// brackets are its MLNX_OFED names). The same defaults are reported on 400
// Gb/s BlueField-3 NICs (Peng et al., "Barre", USENIX ATC 2025, Table 2).
// The firmware staging (alpha every 1 us, cuts at most every 4 us, a 300 us
// rate timer) is also how HPCC's ns-3 simulator models "Mellanox's DCQCN"
// (Li et al., SIGCOMM 2019); the paper's own 40 Gb/s setting is
// dcqcn_paper_params(). The scenario's calibration block sets each field
// (models/dcqcn_calibration.hpp, where the defaults live).
struct DcqcnParams {
  // Switch egress marking, RED-like on the instantaneous queue: no mark below
  // kmin, probability rising linearly to pmax at kmax, every packet above,
  // in bytes at every port as a switch is configured. Scenarios set them
  // with fabric.ecn_kmin, fabric.ecn_kmax and fabric.ecn_pmax (the flow
  // engine picks its calibrated load profile by the same three); these
  // defaults are those attributes' (HPCC's ns-3 KMIN / KMAX at 100 Gb/s,
  // with the DCQCN paper's Pmax 1%).
  double kmin_bytes = 100e3;
  double kmax_bytes = 400e3;
  double pmax = 0.01;
  // Notification point: at most one CNP per QP per interval
  // [min_time_between_cnps, 4 us].
  Nanos cnp_interval = 4 * kMicrosecond;
  // Reaction point, alpha: every period [dce_tcp_rtt, 1 us] alpha moves by
  // the gain g toward 1 if a CNP arrived in it, toward 0 otherwise
  // [dce_tcp_g 1019: g = 1 - 1019/1024]; the first CNP sets it to
  // [initial_alpha_value 1023: 1023/1024].
  Nanos alpha_update_period = 1 * kMicrosecond;
  double alpha_gain = 5.0 / 1024;
  double initial_alpha = 1023.0 / 1024;
  // Rate decrease: at the end of each period with a CNP
  // [rate_reduce_monitor_period, 4 us] the rate is cut by alpha / 2
  // [rpg_gd 11], to no less than this fraction of itself [rpg_min_dec_fac,
  // 50%].
  Nanos rate_reduce_monitor_period = 4 * kMicrosecond;
  double min_decrease_factor = 0.5;
  // The rate a cut recovers to: the rate before it, except that a cut with
  // no increase since the previous one keeps the previous target
  // [clamp_tgt_rate 0, clamp_tgt_rate_after_time_inc 1]; the paper always
  // takes the rate before the cut (true here).
  bool clamp_target_always = false;
  // Rate increase: one stage per timer period [rpg_time_reset, 300 us] and
  // per byte count sent [rpg_byte_reset, 32767 bytes; 0: no byte counter],
  // both restarted by a cut; the first F [rpg_threshold, 1] stages halve
  // the gap to the target (fast recovery), then the target rises by R_AI
  // [rpg_ai_rate, 5 Mb/s] per stage, and by R_HAI [rpg_hai_rate, 50 Mb/s]
  // once both counters passed F. These are absolute rates, the same at 400
  // Gb/s as at 25.
  Nanos rate_increase_interval = 300 * kMicrosecond;
  double byte_counter = 32767;
  int fast_recovery_steps = 1;
  double additive_increase = 5e6 / 8;
  double hyper_increase = 50e6 / 8;
  // A throttled QP never drops below this. The firmware's floor is 1 Mb/s
  // [rpg_min_rate]; 100 Mb/s as HPCC's model (MinRate), which keeps a
  // floored QP's packet gap (330 us) under the first retransmission timeout.
  double min_rate = 100e6 / 8;
};

// The DCQCN paper's 40 Gb/s setting (Zhu et al., SIGCOMM 2015, section 5:
// Kmin 5 KB, Kmax 200 KB, Pmax 1%, g 1/256, alpha timer K 55 us, CNP
// interval N 50 us, rate timer T 55 us, byte counter B 10 MB, F 5, R_AI 40
// Mb/s, R_HAI 10 x R_AI); alpha starts at 1 and a CNP is acted on as it
// arrives.
inline DcqcnParams dcqcn_paper_params() {
  DcqcnParams d;
  d.kmin_bytes = 5e3;
  d.kmax_bytes = 200e3;
  d.pmax = 0.01;
  d.cnp_interval = 50 * kMicrosecond;
  d.alpha_update_period = 55 * kMicrosecond;
  d.alpha_gain = 1.0 / 256;
  d.initial_alpha = 1;
  d.rate_reduce_monitor_period = 1;
  d.min_decrease_factor = 0.5;
  d.clamp_target_always = true;
  d.rate_increase_interval = 55 * kMicrosecond;
  d.byte_counter = 10e6;
  d.fast_recovery_steps = 5;
  d.additive_increase = 40e6 / 8;
  d.hyper_increase = 400e6 / 8;
  return d;
}

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
  // A PAUSE frame is a MAC Control frame of Ethernet's minimum size (IEEE
  // 802.3 Annex 31B; 802.1Qbb's per-priority form too), bytes on the wire.
  // It goes one hop: the ports' octet counters count it, nothing forwards it.
  int pause_frame_bytes = 64;
};

// PFC watchdogs against a pause storm (Guo et al., "RDMA over Commodity
// Ethernet at Scale", SIGCOMM 2016, section 4.3). A switch's watchdog
// watches each egress queue of the lossless class: paused by its peer
// without a break for `detection_time` while holding frames, the queue is
// stormed; it then drops its lossless frames (or, `forward`, sends them
// regardless) and ignores the peer's pauses until none came for
// `restoration_time`. Defaults are SONiC's (`pfcwd start_default`:
// detection 200 ms, restoration 200 ms, action drop), off as SONiC ships it
// (DEVICE_METADATA default_pfcwd_status: disable). A NIC's watchdog stops
// it sending pauses once its receive path stalled for `nic_stall_timeout`,
// and lets it pause again when the stall ends: on by default with the 8 s
// ConnectX firmware default (Linux mlx5e, "PFC stall prevention"; 100 ms is
// its "auto" setting and Guo et al.'s). The scenario's calibration block
// sets each (models/pfc_watchdog_calibration.hpp).
struct PfcWatchdogParams {
  bool switch_enabled = false;
  Nanos detection_time = 200 * kMillisecond;
  Nanos restoration_time = 200 * kMillisecond;
  bool forward = false;  // false: drop the stormed queue's lossless frames
  bool nic_enabled = true;
  Nanos nic_stall_timeout = 8 * kSecond;
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
  PfcWatchdogParams watchdog;
  TransportParams transport;
  // The data traffic class PFC pauses; ACK/NAK/CNP ride a higher, strict
  // priority class (the common lossless RoCE configuration: RoCE on 3, CNP 6).
  int data_priority = 3;
  int control_priority = 6;
};

}  // namespace gauntlet::sim
