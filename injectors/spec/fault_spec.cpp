#include "injectors/spec/fault_spec.hpp"

#include <stdexcept>

namespace gauntlet::injectors {

using sim::ComponentKind;

const std::vector<FaultTypeInfo>& fault_types() {
  static const std::vector<FaultTypeInfo> kTypes = {
      {FaultType::link_loss, "link_loss", {ComponentKind::host_link, ComponentKind::fabric_link},
       {{"rate", ParamKind::fraction, true}}, false},
      {FaultType::port_flap, "port_flap", {ComponentKind::host_link, ComponentKind::fabric_link, ComponentKind::nic},
       {{"period", ParamKind::duration, true}, {"down", ParamKind::duration, true}}, false},
      {FaultType::stale_flow_table, "stale_flow_table", {ComponentKind::flow_table},
       {{"extra_latency", ParamKind::duration, true},
        {"cap_gbps", ParamKind::positive_number, false},
        {"loss", ParamKind::fraction, false},
        {"invalidate_after", ParamKind::duration, false}}, false},
      {FaultType::gpu_throttle, "gpu_throttle", {ComponentKind::gpu}, {{"slowdown", ParamKind::fraction, true}}, false},
      {FaultType::nic_down, "nic_down", {ComponentKind::nic},
       {{"fallback", ParamKind::component, false}, {"alarm", ParamKind::boolean, false}}, false},
      {FaultType::congestion, "congestion",
       {ComponentKind::host_link, ComponentKind::fabric_link, ComponentKind::leaf, ComponentKind::spine},
       {{"load", ParamKind::fraction, true}}, false},
      {FaultType::cpu_contention, "cpu_contention", {ComponentKind::cpu, ComponentKind::host},
       {{"slowdown", ParamKind::fraction, true}}, false},
      {FaultType::gpu_fail, "gpu_fail", {ComponentKind::gpu}, {}, true},
      {FaultType::node_crash, "node_crash", {ComponentKind::host}, {}, true},
      {FaultType::agent_hang, "agent_hang", {ComponentKind::agent}, {}, false},
      {FaultType::clock_skew, "clock_skew", {ComponentKind::host}, {{"offset", ParamKind::signed_duration, true}},
       false},
      {FaultType::reconfigure, "reconfigure", {}, {}, false},
  };
  return kTypes;
}

const FaultTypeInfo* find_fault_type(std::string_view name) {
  for (const FaultTypeInfo& info : fault_types())
    if (info.name == name) return &info;
  return nullptr;
}

const FaultTypeInfo& fault_type_info(FaultType type) {
  for (const FaultTypeInfo& info : fault_types())
    if (info.type == type) return info;
  throw std::logic_error("unregistered fault type");
}

std::string_view fault_type_name(FaultType type) { return fault_type_info(type).name; }

}  // namespace gauntlet::injectors
