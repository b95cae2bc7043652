#pragma once
// Turns fault specs into timed changes of the simulated cluster: each fault
// type's simulated effect (injectors/faults) schedules its changes through a
// FaultEffectScope, and the scheduler applies them through the network
// engine and the job model, composing overlapping effects per component.
// What the transport makes of those changes (goodput under loss, NCCL's
// fallback, a collective failing after the transport timeout) is the
// communicator model's; effects only tell it which links go down or lose
// packets.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "injectors/sim/simulated_fault.hpp"
#include "models/communicator_model.hpp"
#include "models/training_job.hpp"
#include "sim/network_engine.hpp"

namespace gauntlet::injectors {

// Jobs sharing the cluster all live through the same faults: a fault's
// effect reaches every job, and each reacts if it uses the component.
class FaultScheduler {
 public:
  FaultScheduler(sim::NetworkEngine& engine, std::vector<models::TrainingJob*> jobs, const SimulatedFaults& types,
                 models::RoceTransportParams transport = {});
  FaultScheduler(sim::NetworkEngine& engine, models::TrainingJob& job, const SimulatedFaults& types,
                 models::RoceTransportParams transport = {})
      : FaultScheduler(engine, std::vector<models::TrainingJob*>{&job}, types, transport) {}

  // Schedules every fault's changes up to `horizon` (where open-ended faults
  // stop). Throws std::invalid_argument for a fault type that is not
  // simulated.
  void arm(const std::vector<FaultSpec>& faults, sim::Nanos horizon);

  // The earliest scheduled change strictly after now, or the far future.
  sim::Nanos next_change() const;

  // Checks (GAUNTLET_INVARIANT) that every fault window that ended before
  // now has closed: no effect of a fault outlives the fault's end.
  void check_windows_closed() const;

  // The transport model the faults' link changes are reported to; its
  // timeout is settable here before arm().
  models::CommunicatorModel& communicator() { return communicator_; }
  const models::CommunicatorModel& communicator() const { return communicator_; }

 private:
  friend class FaultEffectScope;

  void schedule_job(sim::Nanos at, std::function<void()> action, bool bounds_steady_runs);
  void schedule_change(sim::Nanos at, const std::string& component, const std::string& key, const PathEffect* effect,
                       bool bounds_steady_runs);
  void set_effect(const std::string& component, const std::string& key, const PathEffect* effect);
  void refresh(const std::string& component);

  sim::NetworkEngine& engine_;
  std::vector<models::TrainingJob*> jobs_;
  const SimulatedFaults& types_;
  models::CommunicatorModel communicator_;
  std::map<std::string, std::map<std::string, PathEffect>> active_;  // component -> fault id -> effect
  std::map<std::string, sim::Nanos> fault_ends_;                     // fault id -> end, kOpenEnded for none
  std::vector<sim::Nanos> change_times_;                             // sorted
};

}  // namespace gauntlet::injectors
