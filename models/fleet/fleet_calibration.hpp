#pragma once
// Calibration of the healthy fleet's variation (models/fleet/): how much
// same-SKU GPUs differ, what screening leaves of it, the daily cycle, the
// GPUs' loaded clocks, temperatures and power, and the links' background
// corruption and background events. Each figure names its source; "a
// modelling choice" where no published figure exists.
#include "models/calibration.hpp"

namespace gauntlet::models::calibration {

// --- GPUs of one SKU (healthy_gpus.hpp) ---
inline constexpr Attribute kFleetGpuSpread{
    "fleet.gpu_spread",
    AttributeUnit::ratio,
    0.08,
    0,
    0.5,
    "same-SKU GPUs' performance variation before screening: the span of Tukey's whiskers (outliers excluded) over "
    "the median runtime; per-GPU runtimes are normal with sigma = spread / 5.4",
    "Sinha et al., SC'22 (arXiv 2208.11035 v3, abstract): 8% average variation, max 22%, over five clusters"};
inline constexpr Attribute kFleetGpuOutlierShare{
    "fleet.gpu_outlier_share",
    AttributeUnit::ratio,
    0.005,
    0,
    0.2,
    "share of GPUs slower than the upper whisker before screening, their runtimes uniform up to "
    "fleet.gpu_outlier_max",
    "a modelling choice: Sinha et al. (SC'22) report outliers but not their share"};
inline constexpr Attribute kFleetGpuOutlierMax{
    "fleet.gpu_outlier_max",
    AttributeUnit::ratio,
    1.5,
    1,
    3,
    "runtime of the slowest outlier GPU over the median GPU's",
    "Sinha et al., SC'22 (arXiv 2208.11035): outliers up to 1.5x slower than the median GPU"};
inline constexpr Attribute kFleetScreenThreshold{
    "fleet.screen_threshold",
    AttributeUnit::ratio,
    1.05,
    1,
    3,
    "burn-in screening replaces every GPU whose runtime exceeds the median's by this factor (3 screens nothing)",
    "a modelling choice: operators screen new and repaired machines (MegaScale, NSDI'24, removes slow machines) "
    "but publish no threshold"};
inline constexpr Attribute kFleetSlowMachineShare{
    "fleet.slow_machine_share",
    AttributeUnit::ratio,
    0.005,
    0,
    1,
    "share of machines that get through screening slow (every GPU of the machine)",
    "MegaScale (Jiang et al., NSDI'24): about 0.5% of machines about 10% slower"};
inline constexpr Attribute kFleetSlowMachineSlowdown{"fleet.slow_machine_slowdown",
                                                     AttributeUnit::ratio,
                                                     0.10,
                                                     0,
                                                     0.9,
                                                     "speed a slow machine's GPUs lose",
                                                     "MegaScale (Jiang et al., NSDI'24): about 10% slower"};
inline constexpr Attribute kFleetDailyCycle{
    "fleet.daily_cycle",
    AttributeUnit::ratio,
    0.015,
    0,
    0.2,
    "peak-to-peak throughput swing over a day, from the fleet's temperature (the whole fleet in phase)",
    "Llama 3 (Meta, 2024), section 3.3.4: throughput varies 1-2% with the time of day"};
inline constexpr Attribute kFleetDailyStep{
    "fleet.daily_step",
    AttributeUnit::duration,
    30 * kMin,
    1 * kMin,
    24 * kHour,
    "the daily cycle moves in steps this long (speeds and GPU samples are constant within a step)",
    "a modelling choice: a 1.5% swing over 24 h moves under 0.1% in 30 min"};
inline constexpr Attribute kFleetDailyTemperatureSwing{
    "fleet.daily_temperature_swing",
    AttributeUnit::celsius,
    4,
    0,
    40,
    "peak-to-peak swing of every GPU's temperature over a day, hottest when throughput is lowest",
    "a modelling choice: Llama 3 (section 3.3.4) attributes its daily cycle to temperature without a figure"};

// --- GPU samples under the healthy variation (healthy_gpus.hpp) ---
inline constexpr Attribute kGpuLoadedClock{
    "gpu.loaded_clock",
    AttributeUnit::megahertz,
    1755,
    100,
    5000,
    "the median GPU's SM clock under training load; each GPU's is this times its speed over the median's, in 15 "
    "MHz steps, at most gpu.clock",
    "a modelling choice below the H100 SXM's 1980 MHz maximum (a loaded GPU runs power-capped below it)"};
inline constexpr Attribute kGpuIdleClock{"gpu.idle_clock",
                                         AttributeUnit::megahertz,
                                         345,
                                         0,
                                         5000,
                                         "SM clock of an idle GPU",
                                         "Hopper (H800) nvidia-smi -q: about 345 MHz idle"};
inline constexpr Attribute kGpuPowerCap{"gpu.power_cap",
                                        AttributeUnit::watts,
                                        700,
                                        0,
                                        2000,
                                        "power limit a power-capped GPU draws under load (SwPowerCap set)",
                                        "H100 SXM board power limit, 700 W"};
inline constexpr Attribute kGpuPowerCappedShare{
    "gpu.power_capped_share",
    AttributeUnit::ratio,
    0.6,
    0,
    1,
    "share of loaded GPUs held at gpu.power_cap (the slowest ones: leakier chips reach the cap at lower clocks)",
    "a modelling choice: loaded H100s often report SwPowerCap (0x4); no published share"};
inline constexpr Attribute kGpuTemperatureSpread{
    "gpu.temperature_spread",
    AttributeUnit::celsius,
    3,
    0,
    30,
    "standard deviation of a GPU's temperature offset from its peers' (its place in the airflow), idle or loaded",
    "a modelling choice"};

// --- Links (healthy_links.hpp) ---
inline constexpr Attribute kFleetCorruptingLinkShare{
    "fleet.corrupting_link_share",
    AttributeUnit::ratio,
    0.01,
    0,
    1,
    "share of links corrupting packets at a low, stable background rate",
    "a modelling choice: CorrOpt (Zhuo et al., SIGCOMM'17) finds corruption on fewer links than congestion"};
inline constexpr Attribute kFleetBackgroundLossMax{
    "fleet.background_loss_max",
    AttributeUnit::ratio,
    1e-5,
    1e-8,
    1e-2,
    "loss rate where background corruption ends and a link_loss fault begins: background rates are drawn from "
    "CorrOpt's distribution below it",
    "CorrOpt (SIGCOMM'17) Table 1: 47.23% of corrupting links at 1e-8..1e-5, 18.43% at 1e-5..1e-4, 21.67% at "
    "1e-4..1e-3, 12.67% at 1e-3..1e-2; RoCE goodput loss under go-back-N stays below 0.1% up to 1e-5"};
inline constexpr Attribute kLinkPreFecBerMin{
    "link.pre_fec_ber_min",
    AttributeUnit::ratio,
    1e-8,
    0,
    1e-2,
    "lowest pre-FEC bit error rate of a healthy PAM4 link (each link's is log-uniform between min and max)",
    "a modelling choice: healthy 400G optics run well below the FEC's design point"};
inline constexpr Attribute kLinkPreFecBerMax{
    "link.pre_fec_ber_max",
    AttributeUnit::ratio,
    2e-4,
    0,
    1e-2,
    "highest pre-FEC bit error rate of a healthy PAM4 link",
    "400G RS(544,514) FEC design point: pre-FEC BER about 2-2.4e-4 for post-FEC below 1e-12"};

// --- Background events (background_events.hpp) ---
inline constexpr Attribute kFleetAppXidInterval{
    "fleet.app_xid_interval",
    AttributeUnit::duration,
    150 * kHour,
    1 * kMin,
    1e6 * kHour,
    "mean time between application XIDs (13, 31, 43, 45: the GPU stays healthy) on one GPU",
    "a modelling choice; NVIDIA's device plugin treats 13/31/43/45 as application errors leaving the GPU healthy"};
inline constexpr Attribute kFleetEcnBurstInterval{
    "fleet.ecn_burst_interval",
    AttributeUnit::duration,
    8 * kHour,
    1 * kMin,
    1e6 * kHour,
    "mean time between short ECN/CNP bursts (incast under normal load) on one host link",
    "a modelling choice"};
inline constexpr Attribute kFleetEcnBurstLength{
    "fleet.ecn_burst_length",      AttributeUnit::duration, 2 * kS, 1 * kMs, 10 * kMin,
    "length of one ECN/CNP burst", "a modelling choice"};
inline constexpr Attribute kFleetEcnBurstLoad{"fleet.ecn_burst_load",
                                              AttributeUnit::ratio,
                                              0.15,
                                              0,
                                              0.99,
                                              "share of the link a burst's other traffic takes",
                                              "a modelling choice, below the suite's congestion faults (20% on)"};
inline constexpr const Attribute* kFleetAll[] = {
    &kFleetGpuSpread,         &kFleetGpuOutlierShare,  &kFleetGpuOutlierMax,
    &kFleetScreenThreshold,   &kFleetSlowMachineShare, &kFleetSlowMachineSlowdown,
    &kFleetDailyCycle,        &kFleetDailyStep,        &kFleetDailyTemperatureSwing,
    &kGpuLoadedClock,         &kGpuIdleClock,          &kGpuPowerCap,
    &kGpuPowerCappedShare,    &kGpuTemperatureSpread,  &kFleetCorruptingLinkShare,
    &kFleetBackgroundLossMax, &kLinkPreFecBerMin,      &kLinkPreFecBerMax,
    &kFleetAppXidInterval,    &kFleetEcnBurstInterval, &kFleetEcnBurstLength,
    &kFleetEcnBurstLoad};

}  // namespace gauntlet::models::calibration
