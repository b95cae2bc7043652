// reconfigure: an operator's planned change (the job re-creates its
// communicators); ground truth detectors should not report.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {

FaultDescriptor reconfigure() {
  FaultDescriptor d;
  d.spec = {.name = "reconfigure", .summary = "a planned reconfiguration of the job", .benign = true};
  d.simulated = SimulatedFault{.apply = [](FaultEffectScope& scope) {
    models::TrainingJob& job = scope.job();
    scope.call_at(scope.start(), [&job] { job.reconfigure(); });
  }};
  return d;
}

}  // namespace gauntlet::injectors::faults
