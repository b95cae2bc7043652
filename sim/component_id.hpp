#pragma once
// The one grammar for naming cluster components, shared by scenarios,
// telemetry, alerts and scores: h12, h12.gpu7, h12.nic3, h12.nic3.ft, h5.cpu,
// h5.agent, leaf3, spine1, h12.nic3~leaf3, leaf3~spine1.
#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace gauntlet::sim {

enum class ComponentKind { host, gpu, nic, flow_table, cpu, agent, leaf, spine, host_link, fabric_link };

struct ComponentId {
  ComponentKind kind = ComponentKind::host;
  int host = -1;   // host, gpu, nic, flow_table, cpu, agent, host_link
  int index = -1;  // GPU or RNIC index within the host
  int leaf = -1;   // leaf, host_link, fabric_link
  int spine = -1;  // spine, fabric_link

  static std::optional<ComponentId> parse(std::string_view text);
  std::string str() const;
  auto operator<=>(const ComponentId&) const = default;

  static ComponentId make_host(int h) { return {ComponentKind::host, h}; }
  static ComponentId make_gpu(int h, int k) { return {ComponentKind::gpu, h, k}; }
  static ComponentId make_nic(int h, int k) { return {ComponentKind::nic, h, k}; }
  static ComponentId make_flow_table(int h, int k) { return {ComponentKind::flow_table, h, k}; }
  static ComponentId make_cpu(int h) { return {ComponentKind::cpu, h}; }
  static ComponentId make_agent(int h) { return {ComponentKind::agent, h}; }
  static ComponentId make_leaf(int l) { return {ComponentKind::leaf, -1, -1, l}; }
  static ComponentId make_spine(int s) { return {ComponentKind::spine, -1, -1, -1, s}; }
  static ComponentId make_host_link(int h, int k, int l) { return {ComponentKind::host_link, h, k, l}; }
  static ComponentId make_fabric_link(int l, int s) { return {ComponentKind::fabric_link, -1, -1, l, s}; }
};

std::string_view kind_name(ComponentKind kind);

}  // namespace gauntlet::sim
