#pragma once
// The simulated part of a fault type's descriptor: what the fault does to
// the simulated cluster's data path and job, what it changes in the
// telemetry the cluster's monitoring reports, and what it does to the hosts'
// probes. Each part is optional; a type with none changes nothing the
// simulator models (its ground truth is still scored).
#include <functional>
#include <limits>
#include <string>
#include <string_view>

#include "injectors/spec/fault_spec.hpp"
#include "models/communicator_model.hpp"
#include "models/probe_service.hpp"
#include "models/telemetry/telemetry_effects.hpp"
#include "models/training_job.hpp"
#include "sim/topology.hpp"

namespace gauntlet::injectors {

class FaultScheduler;

inline constexpr sim::Nanos kOpenEnded = std::numeric_limits<sim::Nanos>::max();

// A fault's effect on one component. Overlapping effects on a component
// compose: bandwidth factors and speeds multiply, extra latencies add, any
// "down" wins. Links and flow tables read the first three, GPUs the speed.
struct PathEffect {
  double bandwidth_factor = 1.0;
  sim::Nanos extra_latency = 0;
  bool down = false;
  double speed_factor = 1.0;
};
inline constexpr PathEffect kLinkDown{1.0, 0, true, 1.0};

// What a fault's simulated effect may do, bound to that one fault. Changes
// are timed; `bounds_steady_runs` says whether the job must stop
// fast-forwarding before the change (fail-stop onsets and repairs need not:
// the job cuts its steady run itself when a failure stops it, and a repair
// changes nothing the running job does).
class FaultEffectScope {
 public:
  FaultEffectScope(FaultScheduler& scheduler, const FaultSpec& fault, sim::Nanos horizon)
      : scheduler_(scheduler), fault_(fault), horizon_(horizon) {}

  const FaultSpec& fault() const { return fault_; }
  sim::Nanos start() const { return fault_.start; }
  sim::Nanos end() const { return fault_.end().value_or(kOpenEnded); }  // kOpenEnded: no end
  sim::Nanos horizon() const { return horizon_; }                       // where open-ended faults stop
  const sim::Topology& topology() const;
  // Every job on the cluster (one, or the tenants sharing it); each decides
  // for itself whether a change touches it.
  const std::vector<models::TrainingJob*>& jobs();
  models::CommunicatorModel& communicator();
  // The engine's packet-level faults, or null on an engine without packets.
  sim::PacketFaults* packets();

  // `effect` on the component (a link, flow table or GPU id) from the
  // fault's start to its end.
  void set_during(const std::string& component, const PathEffect& effect);
  // `effect` on the component from `at` on; nullptr removes this fault's.
  void set_at(sim::Nanos at, const std::string& component, const PathEffect* effect, bool bounds_steady_runs = true);
  void call_at(sim::Nanos at, std::function<void()> action, bool bounds_steady_runs = true);
  // `on` at the fault's start and `off` at its end (never, open-ended).
  void call_during(std::function<void()> on, std::function<void()> off, bool bounds_steady_runs = true);
  // The link (a link id, or an RNIC's host link) went down at `down_at`:
  // the transport's verdict on it is the communicator model's.
  void watch_outage(sim::Nanos down_at, const std::string& link);

 private:
  FaultScheduler& scheduler_;
  const FaultSpec& fault_;
  sim::Nanos horizon_;
};

struct SimulatedFault {
  std::function<void(FaultEffectScope&)> apply{};
  // `end` is the fault's end, or the run's horizon for an open-ended fault.
  std::function<void(const FaultSpec&, sim::Nanos end, const sim::Topology&, models::TelemetryEffects&)> telemetry{};
  std::function<void(const FaultSpec&, sim::Nanos end, const sim::Topology&, models::ProbeService&)> probes{};
};

// Finds a fault type's simulated part by name; nullptr when the type is not
// simulated.
class SimulatedFaults {
 public:
  virtual ~SimulatedFaults() = default;
  virtual const SimulatedFault* simulated(std::string_view type) const = 0;
};

}  // namespace gauntlet::injectors
