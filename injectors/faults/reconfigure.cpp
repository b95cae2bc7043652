// reconfigure: an operator's planned change (the job re-creates its
// communicators); ground truth detectors should not report.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {

FaultDescriptor reconfigure() {
  FaultDescriptor d;
  d.spec = {.name = "reconfigure", .summary = "a planned reconfiguration of the job", .benign = true};
  d.simulated = SimulatedFault{.apply = [](FaultEffectScope& scope) {
    // A planned change re-places every job on the cluster.
    const auto& jobs = scope.jobs();
    scope.call_at(scope.start(), [&jobs] {
      for (models::TrainingJob* job : jobs) job->reconfigure();
    });
  }};
  return d;
}

}  // namespace gauntlet::injectors::faults
