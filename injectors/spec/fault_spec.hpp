#pragma once
// Plain data describing one fault, in the simulator's vocabulary. The same
// spec drives the simulated appliers (injectors/sim) and the real drivers
// (injectors/real); neither kind of applier is visible from here.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/component_id.hpp"
#include "sim/time.hpp"

namespace gauntlet::injectors {

enum class FaultType {
  link_loss,
  port_flap,
  stale_flow_table,
  gpu_throttle,
  nic_down,
  congestion,
  cpu_contention,
  gpu_fail,
  node_crash,
  agent_hang,
  clock_skew,
  reconfigure,
};

// Every parameter any fault type takes; each type reads its own subset.
struct FaultParams {
  double rate = 0;                 // link_loss: packet loss probability (0..1)
  sim::Nanos period = 0;           // port_flap: one down/up cycle
  sim::Nanos down = 0;             // port_flap: down time within a cycle
  sim::Nanos extra_latency = 0;    // stale_flow_table: added one-way latency
  double cap_gbps = 0;             // stale_flow_table: slow-path throughput cap (0 = none)
  double loss = 0;                 // stale_flow_table: slow-path loss probability
  double slowdown = 0;             // gpu_throttle, cpu_contention: fraction of speed lost (0..1)
  std::string fallback;            // nic_down: RNIC that takes over ("" = the host's nic0)
  bool alarm = false;              // nic_down: whether a hardware alarm is raised
  double load = 0;                 // congestion: background load as a fraction of capacity
  sim::Nanos offset = 0;           // clock_skew: added to that host's telemetry timestamps
  // stale_flow_table: how long the stale offloaded entries keep the fast path
  // before the vSwitch invalidates them and packets fall to the slow path.
  sim::Nanos invalidate_after = 0;
};

struct FaultSpec {
  std::string id;                  // "f1", "f2", ... in onset order
  FaultType type = FaultType::link_loss;
  std::string target;              // a concrete component id; empty for reconfigure
  sim::Nanos start = 0;
  std::optional<sim::Nanos> duration;  // none: until mitigation removes it or the run ends
  FaultParams params;

  // When the data path starts to change: at the onset, except for a stale
  // flow table whose entries are invalidated only invalidate_after later.
  sim::Nanos effect_start() const { return start + params.invalidate_after; }
  std::optional<sim::Nanos> end() const {
    return duration ? std::optional(start + *duration) : std::nullopt;
  }
};

enum class ParamKind { fraction, positive_number, duration, signed_duration, component, boolean };

struct ParamInfo {
  std::string_view name;
  ParamKind kind;
  bool required;
};

struct FaultTypeInfo {
  FaultType type;
  std::string_view name;
  std::vector<sim::ComponentKind> targets;  // empty: the fault takes no target
  std::vector<ParamInfo> params;
  bool fail_stop;                            // the job hangs rather than slows
};

const std::vector<FaultTypeInfo>& fault_types();
const FaultTypeInfo* find_fault_type(std::string_view name);
const FaultTypeInfo& fault_type_info(FaultType type);
std::string_view fault_type_name(FaultType type);

}  // namespace gauntlet::injectors
