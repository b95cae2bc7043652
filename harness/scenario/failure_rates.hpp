#pragma once
// Failure rates as a source of faults: published ones by name, with their
// sources, and ones fitted from a failure trace. A rate is per GPU or per
// host and day; the scenario turns it into Poisson onsets over every
// component of the cluster of that kind (spares included), each fault
// lasting a repair time, fixed or drawn.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "injectors/spec/fault_spec.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace gauntlet::harness {

// A repair time: fixed, or log-normal (the log of its seconds normal).
struct RepairTime {
  std::optional<sim::Nanos> fixed;
  double log_mean = 0;  // of ln(seconds)
  double log_sd = 0;
  sim::Nanos median() const;
  sim::Nanos draw(sim::Rng& rng) const;
};

enum class RatePer { gpu, host };

struct FailureRate {
  std::string category;  // what the source calls it
  std::string type;      // the fault type it becomes
  double per_day = 0;    // faults per component (RatePer) and day
  RatePer per = RatePer::gpu;
  RepairTime repair;
  injectors::FaultParams params;
  // Fitted rates: the faults behind the fit, and the coefficient of variation
  // of their gaps (1 would be Poisson). Published rates: 0 and 0.
  int observed = 0;
  double interarrival_cv = 0;
};

struct RatePreset {
  std::string name;
  std::string source;              // where the figures come from
  std::vector<FailureRate> rates;  // their repair times are the scenario's
};

// "c4d", "llama3"; nullopt for another name.
std::optional<RatePreset> published_preset(std::string_view name);
std::string published_preset_names();  // "c4d, llama3"

// Maximum-likelihood log-normal fit of repair times (each at least `floor`).
RepairTime fit_repair(const std::vector<sim::Nanos>& repairs, sim::Nanos floor);

// Coefficient of variation of the gaps between sorted onsets: 1 for a
// Poisson process, above 1 when faults come in bursts; 0 with < 3 onsets.
double interarrival_cv(const std::vector<sim::Nanos>& sorted_onsets);

}  // namespace gauntlet::harness
