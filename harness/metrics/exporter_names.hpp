#pragma once
// How the exporters operators run name what a telemetry record holds: each
// function hands every series a record feeds to `add` with its metric name,
// rendered labels, type and value (for a counter, the amount of the sample
// period the record covers; ExporterSeries sums them into running totals).
//  * GPUs as NVIDIA's dcgm-exporter names DCGM fields (its default counters
//    file plus the throttle reasons, ECC, retired page and NVLink error
//    fields operators enable): labels gpu, device (nvidiaK), Hostname;
//  * RNICs as node_exporter's infiniband collector names port and mlx5
//    hw_counters: labels device (mlx5_K), port, instance (the host);
//  * switch ports as the SNMP exporter's IF-MIB module names them, plus the
//    ECN marks and queue depth switches export beside them, and SONiC's SAI
//    port counters (SAI_PORT_STAT_*: FEC, errors, discards, PFC on the RoCE
//    lossless priority 3) under their SAI names: labels instance (the
//    switch), ifName (the link), direction. A counter of the receiving side
//    (FEC, CRC, PFC sent) is labelled with the switch that receives; where
//    an RNIC receives (a host link toward it), the RNIC's physical counters
//    under node_exporter's names instead.
// Every series also carries `component`, the gauntlet component id it
// describes (h5.gpu2, h5.nic3, leaf3~spine1), so that a rule's alert names
// what it is about. docs/protocol.md lists every name with its unit.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "sim/proto/telemetry.pb.h"

namespace gauntlet::harness {

// `saturate_at` > 0: a counter of that width, stuck at its maximum once
// reached (InfiniBand's 16-bit port error counters).
using AddSeries = std::function<void(const std::string& metric, const std::string& labels, const std::string& type,
                                     double value, double saturate_at)>;

void dcgm_series(const telemetry::GpuSample& gpu, const AddSeries& add);
void infiniband_series(const telemetry::NicCounters& nic, const AddSeries& add);
// The mlx5 hw_counters of the RNIC's RoCE transport, under the same labels.
void infiniband_series(const telemetry::RnicTransportCounters& transport, const AddSeries& add);
void switch_port_series(const telemetry::PortCounters& port, const AddSeries& add);

// Every metric name the functions above export.
std::set<std::string> exported_metric_names();

// The component an alert's labels name through the exporters' own labels,
// when an aggregation kept those but not `component`: Hostname (with gpu or
// device nvidiaK: that GPU), instance (a host, with device mlx5_K: that
// RNIC; or a switch), ifName (a link). nullopt when they name none.
std::optional<std::string> component_of_exporter_labels(const std::map<std::string, std::string>& labels);

}  // namespace gauntlet::harness
