#pragma once
// Calibration attributes of the flow records' exporter (flow_records.hpp):
// IPFIX's timeouts and the packet sampling rate operators configure.
#include "sim/calibration.hpp"

namespace gauntlet::models::calibration {

inline constexpr sim::Attribute kFlowActiveTimeout{
    "flow.active_timeout",
    sim::AttributeUnit::duration,
    60e9,
    1e9,
    3600e9,
    "a flow still active this long after its record started is exported and metered anew",
    "no published default (RFC 7011 and RFC 5470 define the active timeout without a value; Cisco IOS "
    "NetFlow's is 30 min, settable down to 1 min): the 1 min operators set for near-real-time flow analytics"};
inline constexpr sim::Attribute kFlowIdleTimeout{
    "flow.idle_timeout",
    sim::AttributeUnit::duration,
    15e9,
    1e9,
    3600e9,
    "a flow that sent nothing this long is exported and forgotten",
    "Cisco IOS NetFlow's default inactive timeout, 15 s (RFC 7011 and RFC 5470 define it without a value)"};
inline constexpr sim::Attribute kFlowSamplingInterval{
    "flow.sampling_interval",
    sim::AttributeUnit::count,
    1,
    1,
    1e9,
    "N of 1:N random packet sampling (1: every packet); counts are scaled by N",
    "no published default for host exporters (the sending RNIC meters every packet, as host flow logs "
    "such as 007's do); switch sFlow defaults are sparse: 1:8192 (Extreme Switch Engine's global rate), "
    "1:32768 (FS switches)"};

inline constexpr const sim::Attribute* kFlowAttributes[] = {&kFlowActiveTimeout, &kFlowIdleTimeout,
                                                            &kFlowSamplingInterval};

}  // namespace gauntlet::models::calibration
