// gpu_sdc{interval, nonfinite_share, loss_jump}: a GPU silently computes
// wrong values, the class Llama 3 counts 6 of its 419 unexpected
// interruptions for (Table 5). Nothing in the GPU's own telemetry moves: no
// XID, no ECC count, the same clocks and speed. Only the training run shows
// it, on the steps the corruption touches (the first at the fault's start,
// then every `interval`): each either turns the gradients non-finite (NaN or
// Inf, the optimizer skips the step) or spikes the loss `loss_jump` times
// over its recent mean, as the framework logs in every worker's iteration
// record. Which of the two a step shows is drawn from the fault's identity,
// so a run repeats bit for bit.
#include <algorithm>
#include <string>

#include "injectors/faults/builtin_faults.hpp"
#include "models/telemetry/gpu_failure_calibration.hpp"
#include "sim/rng.hpp"

namespace gauntlet::injectors::faults {
namespace {

namespace k = models::calibration;

models::StepCorruption corruption_of(const FaultSpec& fault, std::uint64_t step) {
  const std::uint64_t draw = sim::mix_seed(0, "gpu_sdc/" + fault.id + "/" + fault.target, step);
  const double uniform = static_cast<double>(draw >> 11) * 0x1.0p-53;
  models::StepCorruption c;
  if (uniform < calibrated_number(fault, "nonfinite_share", k::kSdcNonfiniteShare))
    c.nonfinite_gradients = true;
  else
    c.loss_spike = calibrated_number(fault, "loss_jump", k::kSdcLossJump);
  return c;
}

void act(FaultEffectScope& scope) {
  const FaultSpec& fault = scope.fault();
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  const sim::Nanos interval = calibrated_duration(fault, "interval", k::kSdcInterval);
  const sim::Nanos until = std::min(scope.end(), scope.horizon());
  const auto& jobs = scope.jobs();
  const int host = id.host, gpu = id.index;
  std::uint64_t step = 0;
  for (sim::Nanos at = fault.start; at < until; at += interval, ++step) {
    const models::StepCorruption corruption = corruption_of(fault, step);
    scope.call_at(at, [&jobs, host, gpu, corruption] {
      for (models::TrainingJob* job : jobs) job->corrupt_step(host, gpu, corruption);
    });
  }
}

std::optional<ParamProblem> check_interval(const FaultSpec& fault) {
  if (fault.params.has("interval") && fault.params.duration("interval") <= 0)
    return ParamProblem{"interval", "must be longer than 0s"};
  if (fault.params.has("loss_jump") && fault.params.number("loss_jump") <= 1)
    return ParamProblem{"loss_jump", "must be above 1 (a spike raises the loss)"};
  return std::nullopt;
}

}  // namespace

FaultDescriptor gpu_sdc() {
  FaultDescriptor d;
  d.spec = {.name = "gpu_sdc",
            .summary = "silent data corruption: no XID or counter, only loss spikes and non-finite gradients",
            .targets = {sim::ComponentKind::gpu},
            .params = {{.name = "interval",
                        .kind = ParamKind::duration,
                        .unit = "ns",
                        .help = "time between the steps the corruption touches, the first at the start (default: "
                                "gpu_failure.sdc_interval)",
                        .samples = {"5s", "30s"},
                        .calibrated = &models::calibration::kSdcInterval},
                       {.name = "nonfinite_share",
                        .kind = ParamKind::fraction,
                        .help = "share of touched steps with non-finite gradients; the others spike the loss "
                                "(default: gpu_failure.sdc_nonfinite_share)",
                        .samples = {"0.5"},
                        .calibrated = &models::calibration::kSdcNonfiniteShare},
                       {.name = "loss_jump",
                        .kind = ParamKind::positive_number,
                        .help = "a spiking step's loss over the recent mean (default: gpu_failure.sdc_loss_jump)",
                        .samples = {"3"},
                        .calibrated = &models::calibration::kSdcLossJump}},
            .repeats_every = "interval",
            .check = check_interval};
  d.simulated = SimulatedFault{.apply = act};
  return d;
}

}  // namespace gauntlet::injectors::faults
