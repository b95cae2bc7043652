#pragma once
// How policies and services act on a job: the levers an operator's
// automation has, what the job shows anyone (spec, placement, state, the
// iteration timeline) and what telemetry measured of it.
//
// The rule: whatever decides on the job's behalf sees telemetry, never
// ground truth. Nothing here reads the cluster's fault state (GPU speeds set
// by a fault, failed hardware); a GPU's speed is what JobMeasurements reads
// off its compute times, and the RNIC a rank sends on is what NCCL's own log
// says (rank_endpoint). The build enforces it: this
// interface and the measurements live in gauntlet_job_control, and the
// mitigation library links that, never gauntlet_models where the fault
// state is held.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "models/job_measurements.hpp"
#include "models/job_rebalance.hpp"
#include "models/job_spec.hpp"
#include "models/job_status.hpp"
#include "models/placement.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

class JobControl {
 public:
  virtual ~JobControl() = default;

  // --- What the job shows ---
  virtual const JobSpec& spec() const = 0;
  virtual const Placement& placement() const = 0;
  virtual const sim::Topology& topology() const = 0;
  // The RNIC a rank's traffic leaves on: an observed signal. NCCL logs the
  // network device each channel of a communicator uses when it is built
  // (NCCL_DEBUG=INFO, "via NET/IB/<device>"), so after an RNIC fails the
  // rebuilt communicators log the fallback; automation reads it there.
  virtual sim::EndpointId rank_endpoint(int rank) const = 0;
  virtual JobState state() const = 0;
  virtual const std::vector<IterationSpan>& timeline() const = 0;
  virtual const WorkSplit& work_split() const = 0;
  virtual int spares_left() const = 0;
  virtual const std::set<int>& isolated_hosts() const = 0;
  virtual const JobMeasurements& measurements() const = 0;

  // --- Levers (see TrainingJob for what each costs) ---
  // Takes the components' hosts out of service and restarts on spares;
  // returns the spares it took.
  virtual int isolate(const std::vector<std::string>& components) = 0;
  virtual void apply_work_split(WorkSplit split, sim::Nanos pause) = 0;
  virtual bool drain_fabric_link(sim::LinkId link, sim::Nanos pause) = 0;
  virtual void move_nic_traffic(int host, int nic, int to_nic, sim::Nanos pause) = 0;
  // Stops the job at its next iteration boundary and calls `on_held` there;
  // it stays stopped until release().
  virtual void hold(std::function<void()> on_held) = 0;
  virtual void release() = 0;
};

}  // namespace gauntlet::models
