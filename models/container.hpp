#pragma once
// The containers a job's workers run in, and their lifetimes.
//
// Each host slot of the job's placement runs one container: it holds that
// host's GPUs of the job and one virtual function of every RNIC those GPUs
// use (GPU-RNIC affinity). Its vSwitch rules map the overlay address of
// every peer its workers exchange data with across hosts (data-parallel ring
// neighbours, pipeline neighbours, expert-parallel group members) to the
// peer's underlay endpoint; they are installed when the container starts
// and withdrawn when it stops.
//
// A checkpoint restart restarts every worker, so every container stops and
// a new incarnation of it starts: in place when its host is still usable,
// on the spare that took its slot otherwise. Overlay addresses belong to the
// slot and survive re-placement, which is why the peers' rules (overlay
// address -> underlay endpoint) must be rewritten when a container moves.
//
// Ids read "<job>/c<slot>.<incarnation>" (llm/c3.0, then llm/c3.1, ...).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/container_overlay.hpp"
#include "models/placement.hpp"
#include "sim/telemetry_bus.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

enum class StopReason {
  gpu_failed,   // a GPU of its host failed
  host_failed,  // its host crashed
  isolated,     // its host was taken out of service
  restart,      // the job restarts from a checkpoint; the host is fine
  reconfigure,  // a planned re-placement of the job
};

std::string_view stop_reason_name(StopReason reason);

struct Container {
  std::string id;
  int slot = 0;
  int incarnation = 0;
  int host = 0;
  std::vector<int> gpus;             // GPU indices within the host
  std::vector<VirtualFunction> vfs;  // one per attached RNIC, by RNIC
  std::vector<VSwitchRule> rules;    // sorted; empty once stopped
  sim::Nanos started_at = 0;
  std::optional<sim::Nanos> stopped_at;
  std::optional<StopReason> stop_reason;

  bool live_at(sim::Nanos t) const { return started_at <= t && (!stopped_at || t < *stopped_at); }
  bool holds_gpu(int gpu) const;
};

// What is wrong with hosts when the job's containers stop: a container on
// such a host stops for that reason rather than the job's.
struct HostTrouble {
  const std::set<int>& failed_hosts;
  const std::set<std::pair<int, int>>& failed_gpus;  // (host, gpu)
  const std::set<int>& isolated;
};

class ContainerSet : public OverlayDirectory {
 public:
  // `bus` may be null: lifecycle events are then not published.
  ContainerSet(std::string job_name, const sim::Topology& topology, sim::TelemetryBus* bus);

  // Starts the next incarnation of every slot of `placement` at `now`.
  void start_all(sim::Nanos now, const Placement& placement);
  // Stops every live container at `now`; `cause` is the reason of those on
  // hosts without trouble.
  void stop_all(sim::Nanos now, StopReason cause, const HostTrouble& trouble);

  // Every container that ever started, in start order.
  const std::vector<Container>& lifetimes() const { return containers_; }
  std::vector<const Container*> live_at(sim::Nanos t) const;
  // The container holding this GPU at time t, or null.
  const Container* container_of_gpu(int host, int gpu, sim::Nanos t) const;
  // The container live now on this host, or null.
  const Container* live_on_host(int host) const;
  int incarnations() const { return incarnation_; }

  // OverlayDirectory: the containers live now.
  const VirtualFunction* attached_vf(sim::EndpointId rnic) const override;
  std::optional<sim::EndpointId> rule(sim::EndpointId rnic, std::uint32_t address) const override;

  // The overlay address of a slot's VF on RNIC `nic` of its host.
  static std::uint32_t overlay_address(int slot, int nic);

 private:
  std::vector<std::vector<VSwitchRule>> derive_rules(const Placement& placement) const;
  void publish(const Container& c, bool start) const;

  std::string job_;
  const sim::Topology& topology_;
  sim::TelemetryBus* bus_;
  std::vector<Container> containers_;
  std::vector<std::size_t> live_;           // indices into containers_
  std::vector<int> live_on_host_;           // per host: index into containers_, or -1
  std::vector<std::pair<int, int>> vf_at_;  // per endpoint: (container, vf) live there, or (-1, -1)
  std::vector<std::uint32_t> vfs_in_use_;   // per endpoint: bit i set while VF i is held
  int incarnation_ = 0;                     // of the next start_all
};

}  // namespace gauntlet::models
