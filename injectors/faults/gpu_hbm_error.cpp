// gpu_hbm_error{remap, sbe_count, sbe_lead, reset}: an HBM3 row fails, the
// class Llama 3 counts 72 of its 419 unexpected interruptions for (Table 5).
// The row reports corrected single-bit errors from the fault's start, then
// a double-bit error sbe_lead later: the driver logs XID 48, the training
// processes die with CUDA's uncorrectable-ECC error and the job restarts.
// An H100 answers an uncorrectable error by remapping the row: recorded
// (XID 63, one uncorrectable remapped row), the GPU is back after a reset;
// failed (XID 64, row_remap_failure), it must be drained and serviced and
// stays out until the fault ends, as a gpu_fail does.
#include <algorithm>

#include "injectors/faults/builtin_faults.hpp"
#include "models/telemetry/gpu_errors.hpp"
#include "models/telemetry/gpu_failure_calibration.hpp"

namespace gauntlet::injectors::faults {
namespace {

namespace k = models::calibration;

bool remap_fails(const FaultSpec& fault) { return fault.params.text("remap") == "fails"; }

sim::Nanos dbe_time(const FaultSpec& fault) {
  return fault.start + calibrated_duration(fault, "sbe_lead", k::kHbmSbeLead);
}

std::optional<ParamProblem> check_params(const FaultSpec& fault) {
  if (fault.params.has("sbe_count")) {
    const double n = fault.params.number("sbe_count");
    if (n != static_cast<int>(n) || n > k::kHbmSbeCount.max)
      return ParamProblem{"sbe_count", "must be a whole number up to 100000"};
  }
  if (!fault.duration || dbe_time(fault) < *fault.end()) return std::nullopt;
  return ParamProblem{"sbe_lead",
                      "must be shorter than the fault's duration: the double-bit error comes sbe_lead "
                      "after the start"};
}

// The row's signature: corrected errors spread evenly over the lead, then
// the double-bit error and the remap's outcome, logged in that order (the
// XID gauge keeps the last: 63 or 64).
void add_signature(const FaultSpec& fault, sim::Nanos end, models::TelemetryEffects& effects) {
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  const sim::Nanos dbe = dbe_time(fault);
  const auto sbes = static_cast<int>(calibrated_number(fault, "sbe_count", k::kHbmSbeCount));
  for (int i = 0; i < sbes; ++i) {
    models::GpuErrorEvent sbe;
    sbe.at = fault.start + static_cast<sim::Nanos>(static_cast<double>(dbe - fault.start) * i / sbes);
    if (sbe.at >= end) break;
    sbe.ecc_sbe = 1;
    effects.add_gpu_error(id.host, id.index, sbe);
  }
  if (dbe >= end) return;  // the fault ended before the double-bit error
  models::GpuErrorEvent error;
  error.at = dbe;
  error.xid = models::xid::kDoubleBitEcc;
  error.ecc_dbe = 1;
  effects.add_gpu_error(id.host, id.index, error);
  models::GpuErrorEvent remap;
  remap.at = dbe;
  if (remap_fails(fault)) {
    remap.xid = models::xid::kRowRemapFailure;
    remap.row_remap_failure = true;
  } else {
    remap.xid = models::xid::kRowRemapRecorded;
    remap.remapped_rows_uncorrectable = 1;
  }
  effects.add_gpu_error(id.host, id.index, remap);
}

void act(FaultEffectScope& scope) {
  const FaultSpec& fault = scope.fault();
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  const sim::Nanos dbe = dbe_time(fault);
  if (dbe >= std::min(scope.end(), scope.horizon())) return;
  // A failed remap needs service: out until the fault ends. A recorded one
  // takes effect at the GPU's reset.
  const sim::Nanos back = remap_fails(fault)
                              ? scope.end()
                              : std::min(scope.end(), dbe + calibrated_duration(fault, "reset", k::kGpuResetTime));
  fail_gpu_until(scope, id.host, id.index, dbe, back, kUncorrectableEccError);
}

}  // namespace

FaultDescriptor gpu_hbm_error() {
  FaultDescriptor d;
  d.spec = {
      .name = "gpu_hbm_error",
      .summary = "an HBM row failing: single-bit errors, then a double-bit one (XID 48) and a row remap (XID 63/64)",
      .targets = {sim::ComponentKind::gpu},
      .params = {{.name = "remap",
                  .kind = ParamKind::choice,
                  .help = "whether the row remap succeeds (XID 63: the GPU is back after a reset) or fails (XID 64: "
                          "the GPU is out until the fault ends)",
                  .choices = {"succeeds", "fails"},
                  .samples = {"succeeds", "fails"}},
                 {.name = "sbe_count",
                  .kind = ParamKind::positive_number,
                  .help = "single-bit errors before the double-bit one (default: gpu_failure.hbm_sbe_count)",
                  .samples = {"4", "8"},
                  .calibrated = &models::calibration::kHbmSbeCount},
                 {.name = "sbe_lead",
                  .kind = ParamKind::duration,
                  .unit = "ns",
                  .help = "from the first single-bit error to the double-bit one (default: gpu_failure.hbm_sbe_lead)",
                  .samples = {"50ms", "2s", "10s"},
                  .calibrated = &models::calibration::kHbmSbeLead},
                 {.name = "reset",
                  .kind = ParamKind::duration,
                  .unit = "ns",
                  .help = "how long the GPU is out for its reset after a recorded remap (default: "
                          "gpu_failure.reset_time)",
                  .samples = {"30s"},
                  .calibrated = &models::calibration::kGpuResetTime}},
      .fail_stop = true,
      .check = check_params};
  d.simulated =
      SimulatedFault{.apply = act,
                     .telemetry = [](const FaultSpec& fault, sim::Nanos end, const sim::Topology&,
                                     models::TelemetryEffects& effects) { add_signature(fault, end, effects); }};
  return d;
}

}  // namespace gauntlet::injectors::faults
