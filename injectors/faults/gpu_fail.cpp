// gpu_fail: a GPU stops; the job hangs until its watchdog fires, then
// restarts without it (on a spare) or waits for the repair at the fault's end.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {

FaultDescriptor gpu_fail() {
  FaultDescriptor d;
  d.spec = {.name = "gpu_fail", .summary = "a GPU failing", .targets = {sim::ComponentKind::gpu}, .fail_stop = true};
  d.simulated = SimulatedFault{.apply = [](FaultEffectScope& scope) {
    const sim::ComponentId id = *sim::ComponentId::parse(scope.fault().target);
    const auto& jobs = scope.jobs();
    const int host = id.host, gpu = id.index;
    scope.call_during(
        [&jobs, host, gpu] {
          for (models::TrainingJob* job : jobs) job->fail_gpu(host, gpu);
        },
        [&jobs, host, gpu] {
          for (models::TrainingJob* job : jobs) job->repair_gpu(host, gpu);
        },
        false);
  }};
  return d;
}

}  // namespace gauntlet::injectors::faults
