#pragma once
// Mitigation policies act on a detector's alerts inside the simulation, the
// way an operator's automation would. Each detector then gets a run of its
// own, so what its alerts cost or saved shows up as lost iterations.
//
// A policy decides from what an operator could measure: the alert, the job's
// iteration timeline and the speeds telemetry measured (JobMeasurements),
// and acts through the levers of models::JobControl. It never sees the
// cluster's fault state (a GPU's stored speed, failed hardware); this
// library does not link the models that hold it.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "models/job_control.hpp"
#include "sim/calibration.hpp"
#include "sim/time.hpp"

namespace gauntlet::harness {

// One action a policy took, for scoring (false isolations) and the report.
struct MitigationAction {
  double time_s = 0;
  std::string action;                   // "isolate", "checkpoint-restart", "drain-fabric-link", ...
  std::vector<std::string> components;  // what it took out of service or moved traffic off
  int spares_used = 0;
};

// Whether the action took its components' hosts out of the job (an
// isolation, which can be false); re-pairing and work splits do not.
bool takes_hosts_out(const MitigationAction& action);

class MitigationPolicy {
 public:
  virtual ~MitigationPolicy() = default;
  // Called at simulated time `now` with each alert the observed detector raised.
  virtual void on_alert(const Alert& alert, models::JobControl& job, sim::Nanos now) = 0;
  // Called at every observe interval, after the interval's alerts.
  virtual void on_tick(models::JobControl& /*job*/, sim::Nanos /*now*/) {}
  // Whether it reads JobMeasurements (the runner measures only then).
  virtual bool reads_measurements() const { return false; }
  const std::vector<MitigationAction>& actions() const { return actions_; }

 protected:
  void record(MitigationAction action) { actions_.push_back(std::move(action)); }

 private:
  std::vector<MitigationAction> actions_;
};

// C4-style: isolate the top suspect of a fail-stop or fail-slow alert, swap
// in a spare and restart from the last checkpoint (the job model does the
// restart). A host already isolated, or isolated again while the job is
// still restarting from a previous action, is not isolated twice.
class IsolateRestartPolicy final : public MitigationPolicy {
 public:
  explicit IsolateRestartPolicy(sim::Nanos restart_cost) : restart_cost_(restart_cost) {}
  void on_alert(const Alert& alert, models::JobControl& job, sim::Nanos now) override;

 private:
  sim::Nanos restart_cost_;
  sim::Nanos busy_until_ = -1;
};

// Policies the simulator can run: "none" gives nullptr; unknown names throw
// std::invalid_argument. `costs` overrides a policy's step costs by step
// name (falcon-ladder: rebalance, relayout, repair, restart); unknown names
// throw. The ladder's thresholds come from the run's calibration.
std::unique_ptr<MitigationPolicy> make_policy(const std::string& name, const models::JobSpec& job,
                                              const std::map<std::string, sim::Nanos>& costs = {},
                                              const sim::Calibration& calibration = {});

// The host an alert's component id belongs to ("h3.gpu2" -> 3), or -1 for
// switches and fabric links.
int host_of_component(const std::string& id);

}  // namespace gauntlet::harness
