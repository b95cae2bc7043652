#include "harness/metrics/exporter_names.hpp"

#include <cmath>

#include "harness/metrics/exporter_series.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

const std::string kGauge = "gauge", kCounter = "counter";
// The width of InfiniBand's PortCounters error counters (SymbolErrorCounter,
// PortRcvErrors): they stop at 65535 until cleared.
constexpr double kSixteenBits = 65535;

// node_exporter's labels for port 1 of RNIC hN.nicK (device mlx5_K).
std::string rnic_labels(const std::string& nic, const sim::ComponentId& id) {
  return render_labels({{"device", "mlx5_" + std::to_string(id.index)},
                        {"port", "1"},
                        {"instance", "h" + std::to_string(id.host)},
                        {"component", nic}});
}

}  // namespace

void dcgm_series(const telemetry::GpuSample& g, const AddSeries& add) {
  const auto id = sim::ComponentId::parse(g.gpu());
  if (!id) return;
  const std::string labels = render_labels({{"gpu", std::to_string(id->index)},
                                            {"device", "nvidia" + std::to_string(id->index)},
                                            {"Hostname", "h" + std::to_string(id->host)},
                                            {"component", g.gpu()}});
  const auto gauge = [&](const char* metric, double value) { add(metric, labels, kGauge, value, 0); };
  const auto counter = [&](const char* metric, double value) { add(metric, labels, kCounter, value, 0); };
  // dcgm-exporter's default counters file.
  gauge("DCGM_FI_DEV_SM_CLOCK", g.clock_mhz());
  gauge("DCGM_FI_DEV_MEM_CLOCK", g.mem_clock_mhz());
  gauge("DCGM_FI_DEV_GPU_TEMP", g.temperature_c());
  gauge("DCGM_FI_DEV_MEMORY_TEMP", g.temperature_c());  // modelled as the GPU's own temperature
  gauge("DCGM_FI_DEV_POWER_USAGE", g.power_w());
  counter("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", g.power_w() * 1e3);  // mJ per one-second sample
  counter("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", g.pcie_replays());
  gauge("DCGM_FI_DEV_GPU_UTIL", std::round(100 * g.sm_utilization()));
  gauge("DCGM_FI_DEV_FB_FREE", g.fb_free_mib());
  gauge("DCGM_FI_DEV_FB_USED", g.fb_used_mib());
  counter("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", g.remapped_rows_uncorrectable());
  counter("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", g.remapped_rows_correctable());
  gauge("DCGM_FI_DEV_ROW_REMAP_FAILURE", g.row_remap_failure() ? 1 : 0);
  gauge("DCGM_FI_DEV_XID_ERRORS", g.xid());  // the last XID the driver logged (0: none)
  // Fields the default file leaves commented out and operators enable.
  gauge("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", g.clock_throttle_reasons());  // NVML's bitmask
  counter("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", g.ecc_sbe());
  counter("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", g.ecc_dbe());
  counter("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", g.ecc_sbe());
  counter("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", g.ecc_dbe());
  counter("DCGM_FI_DEV_RETIRED_SBE", g.retired_pages_sbe());
  counter("DCGM_FI_DEV_RETIRED_DBE", g.retired_pages_dbe());
  counter("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", g.nvlink_crc_flit_errors());
  counter("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", g.nvlink_crc_data_errors());
  counter("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", g.nvlink_replay_errors());
  counter("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", g.nvlink_recovery_errors());
}

void infiniband_series(const telemetry::NicCounters& n, const AddSeries& add) {
  const auto id = sim::ComponentId::parse(n.nic());
  if (!id) return;
  const std::string labels = rnic_labels(n.nic(), *id);
  const auto counter = [&](const char* metric, double value) { add(metric, labels, kCounter, value, 0); };
  counter("node_infiniband_port_data_transmitted_bytes_total", static_cast<double>(n.tx_bytes()));
  counter("node_infiniband_port_data_received_bytes_total", static_cast<double>(n.rx_bytes()));
  counter("node_infiniband_port_packets_transmitted_total", static_cast<double>(n.tx_packets()));
  counter("node_infiniband_port_packets_received_total", static_cast<double>(n.rx_packets()));
  counter("node_infiniband_rp_cnp_packets_handled_total", static_cast<double>(n.cnp()));
  add("node_infiniband_state_id", labels, kGauge, n.link_up() ? 4 : 1, 0);
}

void infiniband_series(const telemetry::RnicTransportCounters& t, const AddSeries& add) {
  const auto id = sim::ComponentId::parse(t.nic());
  if (!id) return;
  const std::string labels = rnic_labels(t.nic(), *id);
  const auto counter = [&](const char* metric, std::uint64_t value) {
    add(metric, labels, kCounter, static_cast<double>(value), 0);
  };
  // rp_cnp_handled comes with every NicCounters record; these come only
  // while the transport counts something.
  counter("node_infiniband_packet_sequence_errors_total", t.naks_received());
  counter("node_infiniband_out_of_sequence_packets_received_total", t.out_of_sequence());
  counter("node_infiniband_local_ack_timeout_errors_total", t.timeouts());
  counter("node_infiniband_np_cnp_packets_sent_total", t.cnp_sent());
  counter("node_infiniband_np_ecn_marked_roce_packets_received_total", t.ecn_marked_received());
  counter("node_infiniband_req_cqes_errors_total", t.qp_errors());
  // mlx5's ethtool statistic, as node_exporter's ethtool collector names it.
  counter("node_ethtool_tx_pause_storm_error_events", t.pause_storm_errors());
}

namespace {

// The switch that counts a port direction's traffic as it sends (`sending`)
// or as it receives: a fabric link's upward direction is sent by its leaf
// and received by its spine; a host link's upward direction is counted at
// the leaf both ways (the RNIC's own counters say what it sent).
std::string switch_of(const sim::ComponentId& id, bool upward, bool sending) {
  const bool at_spine = id.kind == sim::ComponentKind::fabric_link && (upward != sending);
  return at_spine ? "spine" + std::to_string(id.spine) : "leaf" + std::to_string(id.leaf);
}

std::string port_labels(const telemetry::PortCounters& p, const std::string& instance) {
  return render_labels({{"instance", instance},
                        {"ifName", p.link()},
                        {"direction", p.upward() ? "up" : "down"},
                        {"component", p.link()}});
}

// What the receiving side of a direction counts.
void received_series(const telemetry::PortCounters& p, const sim::ComponentId& id, const AddSeries& add) {
  const auto amount = [](std::uint64_t v) { return static_cast<double>(v); };
  if (id.kind == sim::ComponentKind::host_link && !p.upward()) {  // the RNIC receives
    const auto nic = sim::ComponentId::make_nic(id.host, id.index);
    const std::string labels = rnic_labels(nic.str(), nic);
    add("node_infiniband_symbol_error_total", labels, kCounter, amount(p.fec_symbol_errors()), kSixteenBits);
    add("node_infiniband_port_errors_received_total", labels, kCounter, amount(p.crc_errors()), kSixteenBits);
    return;
  }
  const std::string labels = port_labels(p, switch_of(id, p.upward(), false));
  const auto counter = [&](const char* metric, std::uint64_t v) { add(metric, labels, kCounter, amount(v), 0); };
  counter("SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES", p.fec_corrected());
  counter("SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES", p.fec_uncorrectable());
  counter("SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS", p.fec_symbol_errors());
  counter("SAI_PORT_STAT_IF_IN_ERRORS", p.crc_errors());
  counter("SAI_PORT_STAT_ETHER_STATS_CRC_ALIGN_ERRORS", p.crc_errors());
  counter("SAI_PORT_STAT_PFC_3_TX_PKTS", p.pause_sent());
}

}  // namespace

void switch_port_series(const telemetry::PortCounters& p, const AddSeries& add) {
  const auto id = sim::ComponentId::parse(p.link());
  if (!id) return;
  const std::string labels = port_labels(p, switch_of(*id, p.upward(), true));
  const auto counter = [&](const char* metric, double v) { add(metric, labels, kCounter, v, 0); };
  counter("ifHCOutOctets", static_cast<double>(p.tx_bytes()));
  counter("ifHCOutUcastPkts", static_cast<double>(p.tx_packets()));
  counter("switch_port_ecn_marked_packets_total", static_cast<double>(p.ecn_marked()));
  add("switch_port_queue_depth_bytes", labels, kGauge, p.queue_depth(), 0);
  add("ifOperStatus", labels, kGauge, p.link_up() ? 1 : 2, 0);
  counter("SAI_PORT_STAT_IF_OUT_DISCARDS", static_cast<double>(p.drops()));
  counter("SAI_PORT_STAT_PFC_3_RX_PKTS", static_cast<double>(p.pause_received()));
  counter("SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US", static_cast<double>(p.pause_duration_us()));
  // SONiC's PFC watchdog counters of the port's lossless queue.
  counter("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", static_cast<double>(p.pfc_wd_deadlock_detected()));
  counter("PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED", static_cast<double>(p.pfc_wd_deadlock_restored()));
  counter("PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS", static_cast<double>(p.pfc_wd_tx_dropped_packets()));
  counter("PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS", static_cast<double>(p.pfc_wd_rx_dropped_packets()));
  received_series(p, *id, add);
}

std::set<std::string> exported_metric_names() {
  std::set<std::string> names;
  const AddSeries collect = [&](const std::string& metric, const std::string&, const std::string&, double, double) {
    names.insert(metric);
  };
  telemetry::GpuSample gpu;
  gpu.set_gpu("h0.gpu0");
  dcgm_series(gpu, collect);
  telemetry::NicCounters nic;
  nic.set_nic("h0.nic0");
  infiniband_series(nic, collect);
  telemetry::RnicTransportCounters transport;
  transport.set_nic("h0.nic0");
  infiniband_series(transport, collect);
  // Both directions of a host link (the RNIC receives downward) and a
  // fabric link.
  for (const sim::ComponentId& link :
       {sim::ComponentId::make_host_link(0, 0, 0), sim::ComponentId::make_fabric_link(0, 0)})
    for (bool upward : {true, false}) {
      telemetry::PortCounters port;
      port.set_link(link.str());
      port.set_upward(upward);
      switch_port_series(port, collect);
    }
  return names;
}

namespace {

// The number after `prefix` in `text` ("nvidia3", "nvidia" -> 3); -1 when
// `text` is not that.
int index_after(const std::string& text, const std::string& prefix) {
  if (!text.starts_with(prefix) || text.size() == prefix.size() || text.size() > prefix.size() + 6) return -1;
  int n = 0;
  for (std::size_t i = prefix.size(); i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    n = n * 10 + (text[i] - '0');
  }
  return n;
}

std::string label(const std::map<std::string, std::string>& labels, const char* name) {
  const auto found = labels.find(name);
  return found == labels.end() ? std::string() : found->second;
}

}  // namespace

std::optional<std::string> component_of_exporter_labels(const std::map<std::string, std::string>& labels) {
  if (const auto link = sim::ComponentId::parse(label(labels, "ifName"))) return link->str();
  const auto host = sim::ComponentId::parse(label(labels, "Hostname"));
  const auto instance = sim::ComponentId::parse(label(labels, "instance"));
  if (host && host->kind == sim::ComponentKind::host) {
    int gpu = index_after(label(labels, "device"), "nvidia");
    if (gpu < 0) gpu = index_after(label(labels, "gpu"), "");
    return gpu >= 0 ? sim::ComponentId::make_gpu(host->host, gpu).str() : host->str();
  }
  if (!instance) return std::nullopt;
  const int nic = index_after(label(labels, "device"), "mlx5_");
  if (instance->kind == sim::ComponentKind::host && nic >= 0)
    return sim::ComponentId::make_nic(instance->host, nic).str();
  return instance->str();
}

}  // namespace gauntlet::harness
