#pragma once
// The packet engine's queue-pair constants a scenario may set (its
// `calibration:` block), as NCCL configures a QP and a ConnectX NIC runs it
// (sim/packet/roce_params.hpp TransportParams).
#include "models/calibration.hpp"

namespace gauntlet::models::calibration {

inline constexpr Attribute kIbTimeout{
    "transport.ib_timeout",
    AttributeUnit::count,
    20,
    1,
    31,
    "NCCL_IB_TIMEOUT: a packet-engine QP's local ACK timeout is 4.096 us x 2^this (20: 4.29 s)",
    "NCCL 2.23.4 default, unchanged through 2.30.7 (NCCL_PARAM IbTimeout in src/transport/net_ib.cc, later "
    "net_ib/connect.cc; 14 before 2.14.3, 18 from 2.14.3 to 2.22); 4.096 us x 2^n per the InfiniBand spec, "
    "0 (an infinite timeout) not allowed"};
inline constexpr Attribute kIbRetryCount{
    "transport.ib_retry_count",
    AttributeUnit::count,
    7,
    0,
    7,
    "NCCL_IB_RETRY_CNT: a packet-engine QP errors (the job fails) after this many QP timeouts without progress",
    "NCCL 2.23.4 default (NCCL_PARAM IbRetryCnt 7, the same in every release since 2.4); the give-up time "
    "QP.retry_count x QP.timeout is the one ConnectX's adaptive retransmission uses with its qp_total_timeout "
    "bit set (NVIDIA, Adaptive Retransmission: Parameters Control, 2025)"};
inline constexpr Attribute kRetransmitInitialTimeout{
    "transport.retransmit_initial_timeout",
    AttributeUnit::duration,
    1.048576 * kMs,
    4 * kUs,
    20 * kS,
    "adaptive retransmission's first timeout, doubled per consecutive timeout up to the QP's (packet engine)",
    "no published default for ConnectX's profile (NVIDIA gives only its 4 us minimum base): a modelling choice, "
    "4.096 us x 2^8, above the 0.64 ms a full 32 MB buffer takes to drain at 400 Gb/s"};

inline constexpr Attribute kNakInterval{
    "transport.nak_interval",
    AttributeUnit::duration,
    500 * kUs,
    1 * kUs,
    1 * kS,
    "a responder NAKs a hole once, and again only when packets still arrive this long after; a hole whose NAK "
    "or resend is lost in a message's last stretch therefore waits out a retransmission timeout (both engines)",
    "HPCC's ns-3 NACK interval (500 us); no published ConnectX figure"};

inline constexpr const Attribute* kPacketTransport[] = {&kIbTimeout, &kIbRetryCount, &kRetransmitInitialTimeout,
                                                        &kNakInterval};

}  // namespace gauntlet::models::calibration
