#pragma once
// Turns fault specs into timed changes of the simulated cluster: each fault
// is applied at its start and reverted at its end through the network engine
// and the job model. Overlapping faults on one component compose: bandwidth
// factors and speeds multiply, extra latencies add, any "down" wins.
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "injectors/spec/fault_spec.hpp"
#include "models/roce_transport.hpp"
#include "models/training_job.hpp"
#include "sim/network_engine.hpp"

namespace gauntlet::injectors {

class FaultScheduler {
 public:
  FaultScheduler(sim::NetworkEngine& engine, models::TrainingJob& job, models::RoceTransportParams transport = {});

  // Schedules every fault's changes up to `horizon` (where open-ended faults
  // stop). Throws std::invalid_argument for a fault this engine cannot
  // simulate.
  void arm(const std::vector<FaultSpec>& faults, sim::Nanos horizon);

  // The earliest scheduled change strictly after now, or the far future.
  sim::Nanos next_change() const;

  // Goodput fraction the link_loss model gives a link at this loss rate.
  double link_loss_factor(sim::LinkId link, double loss) const;

  static bool simulated(FaultType type);

  // RoCE's transport gives up on a connection after its retries span this
  // long (retry count x timeout); a link down longer than that fails the
  // collective using it and crashes the job. 4 s is the detection margin
  // SkeletonHunter reports for connectivity anomalies.
  void set_transport_timeout(sim::Nanos timeout) { transport_timeout_ = timeout; }
  sim::Nanos transport_timeout() const { return transport_timeout_; }

 private:
  struct Effect {
    double bandwidth_factor = 1.0;
    sim::Nanos extra_latency = 0;
    bool down = false;
    double speed_factor = 1.0;
  };

  void schedule_fault(const FaultSpec& fault, sim::Nanos horizon);
  // `bounds_steady_runs`: whether the job must stop fast-forwarding before
  // this change. Fail-stop onsets and repairs need not: the job cuts its
  // steady run itself when a failure stops it, and a repair changes nothing
  // the running job does.
  void schedule_job(sim::Nanos at, std::function<void()> action, bool bounds_steady_runs = true);
  void schedule_transport_check(sim::Nanos down_at, const std::string& link);
  void schedule_retry_exhaustion(sim::Nanos from, sim::Nanos until, sim::LinkId link);
  void schedule_change(sim::Nanos at, const std::string& component, const std::string& key, const Effect* effect,
                       bool bounds_steady_runs = true);
  void set_effect(const std::string& component, const std::string& key, const Effect* effect);
  void refresh(const std::string& component);
  sim::Nanos round_trip() const;

  sim::NetworkEngine& engine_;
  models::TrainingJob& job_;
  models::RoceTransportParams transport_;
  sim::Nanos transport_timeout_ = 4 * sim::kSecond;
  std::map<std::string, std::map<std::string, Effect>> active_;  // component -> key -> effect
  std::vector<sim::Nanos> change_times_;                         // sorted
};

}  // namespace gauntlet::injectors
