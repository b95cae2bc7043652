#pragma once
// The packet engine's DCQCN constants a scenario may set (its `calibration:`
// block), named as NVIDIA's ConnectX firmware names them (MLNX_OFED's
// /sys/class/net/<if>/ecn/roce_np|roce_rp files; sim/packet/roce_params.hpp
// DcqcnParams). Defaults are the firmware's for ConnectX-4 and later
// (NVIDIA, "DCQCN CC Parameters", DOCA and MLNX_OFED documentation), the
// same Peng et al. report on 400 Gb/s BlueField-3 NICs ("Barre", USENIX ATC
// 2025, Table 2: min_time_between_cnps 4, rpg_min_dec_fac 50,
// rate_reduce_monitor_period 4, rpg_ai_rate 5, rpg_time_reset 300).
#include "models/calibration.hpp"

namespace gauntlet::models::calibration {

inline constexpr const char* kDcqcnSource = "NVIDIA DCQCN CC Parameters (ConnectX-4 and later firmware default)";

inline constexpr Attribute kDcqcnCnpInterval{
    "dcqcn.min_time_between_cnps",
    AttributeUnit::duration,
    4 * kUs,
    0,
    1 * kS,
    "a receiving NIC sends at most one CNP per QP per this interval (notification point)",
    kDcqcnSource};
inline constexpr Attribute kDcqcnAlphaPeriod{"dcqcn.dce_tcp_rtt",
                                             AttributeUnit::duration,
                                             1 * kUs,
                                             1 * kUs,
                                             131071 * kUs,
                                             "alpha is updated once per this period, up if a CNP arrived in it",
                                             kDcqcnSource};
inline constexpr Attribute kDcqcnAlphaG{
    "dcqcn.dce_tcp_g",
    AttributeUnit::count,
    1019,
    0,
    1023,
    "alpha's EWMA weight on its old value, in 1/1024 (1019: alpha moves 5/1024 toward the sample each period)",
    kDcqcnSource};
inline constexpr Attribute kDcqcnInitialAlpha{"dcqcn.initial_alpha_value",
                                              AttributeUnit::count,
                                              1023,
                                              1,
                                              1023,
                                              "alpha at a QP's first CNP, in 1/1024",
                                              kDcqcnSource};
inline constexpr Attribute kDcqcnMonitorPeriod{
    "dcqcn.rate_reduce_monitor_period",
    AttributeUnit::duration,
    4 * kUs,
    1,
    1 * kS,
    "a QP's rate is cut at most once per this period, at its end if a CNP arrived in it",
    kDcqcnSource};
inline constexpr Attribute kDcqcnMinDecFac{"dcqcn.rpg_min_dec_fac",
                                           AttributeUnit::count,
                                           50,
                                           0,
                                           100,
                                           "one cut leaves at least this percentage of the rate",
                                           kDcqcnSource};
inline constexpr Attribute kDcqcnTimeReset{"dcqcn.rpg_time_reset",
                                           AttributeUnit::duration,
                                           300 * kUs,
                                           1 * kUs,
                                           1 * kS,
                                           "rate-increase timer: one increase stage per period without a cut",
                                           kDcqcnSource};
inline constexpr Attribute kDcqcnByteReset{"dcqcn.rpg_byte_reset",
                                           AttributeUnit::bytes,
                                           32767,
                                           0,
                                           1e9,
                                           "byte counter: one increase stage per this many bytes sent (0: none)",
                                           kDcqcnSource};
inline constexpr Attribute kDcqcnThreshold{
    "dcqcn.rpg_threshold",
    AttributeUnit::count,
    1,
    1,
    31,
    "increase stages of fast recovery after a cut, before additive then hyper increase",
    kDcqcnSource};
inline constexpr Attribute kDcqcnAiRate{
    "dcqcn.rpg_ai_rate", AttributeUnit::count, 5, 1, 400000, "additive increase of the target rate per stage, Mb/s",
    kDcqcnSource};
inline constexpr Attribute kDcqcnHaiRate{
    "dcqcn.rpg_hai_rate", AttributeUnit::count, 50, 1, 400000, "hyper increase of the target rate per stage, Mb/s",
    kDcqcnSource};
inline constexpr Attribute kDcqcnMinRate{
    "dcqcn.rpg_min_rate",
    AttributeUnit::count,
    100,
    1,
    400000,
    "a throttled QP's lowest rate, Mb/s",
    "HPCC's ns-3 model (MinRate 100 Mb/s); the firmware's default is 1 Mb/s, whose 33 ms packet gap the "
    "engine's first retransmission timeout would not survive"};

inline constexpr const Attribute* kDcqcn[] = {&kDcqcnCnpInterval,  &kDcqcnAlphaPeriod,   &kDcqcnAlphaG,
                                              &kDcqcnInitialAlpha, &kDcqcnMonitorPeriod, &kDcqcnMinDecFac,
                                              &kDcqcnTimeReset,    &kDcqcnByteReset,     &kDcqcnThreshold,
                                              &kDcqcnAiRate,       &kDcqcnHaiRate,       &kDcqcnMinRate};

}  // namespace gauntlet::models::calibration
