#pragma once
// The packet engine's PFC watchdogs a scenario may set (its `calibration:`
// block; sim/packet/roce_params.hpp PfcWatchdogParams): the switches' on
// their lossless egress queues and the NICs' on their receive path, as
// Guo et al. describe both ("RDMA over Commodity Ethernet at Scale",
// SIGCOMM 2016, section 4.3). The switch defaults are SONiC's; the NIC
// defaults ConnectX's under Linux's mlx5 driver.
#include "models/calibration.hpp"

namespace gauntlet::models::calibration {

inline constexpr const char* kSonicPfcwdSource =
    "SONiC `pfcwd start_default` (sonic-utilities pfcwd/main.py: DEFAULT_DETECTION_TIME 200, "
    "DEFAULT_RESTORATION_TIME 200 ms, DEFAULT_ACTION drop)";
inline constexpr const char* kMlx5StallSource =
    "Linux mlx5e PFC stall prevention (commit 2afa609f5c97, 2018: on by default with an 8 s timeout, "
    "80 ms to 8 s; 'auto' sets 100 ms, the figure Guo et al. give)";

inline constexpr Attribute kPfcwdEnabled{
    "pfcwd.enabled",
    AttributeUnit::count,
    0,
    0,
    1,
    "1: every switch runs the PFC watchdog on its lossless egress queues (packet engine)",
    "SONiC ships it off: DEVICE_METADATA default_pfcwd_status defaults to disable (sonic-device_metadata.yang) "
    "until `config pfcwd start_default` or `pfcwd start` turns it on"};
inline constexpr Attribute kPfcwdDetectionTime{
    "pfcwd.detection_time",
    AttributeUnit::duration,
    200 * kMs,
    1 * kMs,
    1 * kMin,
    "a lossless queue its peer keeps paused without a break this long while it holds frames is stormed",
    kSonicPfcwdSource};
inline constexpr Attribute kPfcwdRestorationTime{"pfcwd.restoration_time",
                                                 AttributeUnit::duration,
                                                 200 * kMs,
                                                 1 * kMs,
                                                 1 * kHour,
                                                 "a stormed queue is restored once no PAUSE came for it this long",
                                                 kSonicPfcwdSource};
inline constexpr Attribute kPfcwdForward{
    "pfcwd.action_forward",
    AttributeUnit::count,
    0,
    0,
    1,
    "what a stormed queue does with its lossless frames: 0 drops them both ways, 1 sends them ignoring pauses",
    kSonicPfcwdSource};
inline constexpr Attribute kPfcwdNicEnabled{
    "pfcwd.nic_enabled",
    AttributeUnit::count,
    1,
    0,
    1,
    "1: a NIC whose receive path stalls stops sending pauses after pfcwd.nic_stall_timeout (packet engine)",
    kMlx5StallSource};
inline constexpr Attribute kPfcwdNicStallTimeout{
    "pfcwd.nic_stall_timeout",
    AttributeUnit::duration,
    8 * kS,
    80 * kMs,
    8 * kS,
    "how long a NIC's receive path is stalled before its watchdog stops the NIC's pauses",
    kMlx5StallSource};

inline constexpr const Attribute* kPfcWatchdog[] = {&kPfcwdEnabled, &kPfcwdDetectionTime, &kPfcwdRestorationTime,
                                                    &kPfcwdForward, &kPfcwdNicEnabled,    &kPfcwdNicStallTimeout};

}  // namespace gauntlet::models::calibration
