#include "models/fleet/healthy_gpus.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "models/fleet/fleet_calibration.hpp"
#include "sim/rng.hpp"

namespace gauntlet::models {
namespace {

constexpr sim::Nanos kDay = 24 * sim::kHour;
constexpr double kClockStepMhz = 15;  // GPU clocks move in 15 MHz steps
// Tukey's whiskers of a normal sample lie about 2.7 sigma either side of
// the median, so their span is about 5.4 sigma.
constexpr double kWhiskerSpanSigmas = 5.4;
// Redraws a screened-out GPU gets before it is kept at the threshold.
constexpr int kScreenTries = 64;

// Box-Muller from two of the stream's uniforms.
double normal(sim::Rng& rng) {
  const double u1 = 1.0 - rng.uniform();  // (0, 1]
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

// One GPU's runtime over the median's, as the fleet holds them.
double fleet_runtime(sim::Rng& rng, const HealthyGpuParams& p) {
  const double sigma = p.spread / kWhiskerSpanSigmas;
  const double upper_whisker = 1.0 + p.spread / 2;
  if (p.outlier_max > upper_whisker && rng.uniform() < p.outlier_share)
    return upper_whisker + (p.outlier_max - upper_whisker) * rng.uniform();
  return std::max(0.5, 1.0 + sigma * normal(rng));
}

}  // namespace

HealthyGpuParams HealthyGpuParams::from(const sim::Calibration& c) {
  namespace k = calibration;
  HealthyGpuParams p;
  p.spread = c.value(k::kFleetGpuSpread);
  p.outlier_share = c.value(k::kFleetGpuOutlierShare);
  p.outlier_max = c.value(k::kFleetGpuOutlierMax);
  p.screen_threshold = c.value(k::kFleetScreenThreshold);
  p.slow_machine_share = c.value(k::kFleetSlowMachineShare);
  p.slow_machine_slowdown = c.value(k::kFleetSlowMachineSlowdown);
  p.daily_cycle = c.value(k::kFleetDailyCycle);
  p.daily_step = c.duration(k::kFleetDailyStep);
  p.daily_temperature_swing_c = c.value(k::kFleetDailyTemperatureSwing);
  p.max_clock_mhz = c.value(k::kGpuClock);
  p.loaded_clock_mhz = c.value(k::kGpuLoadedClock);
  p.idle_clock_mhz = c.value(k::kGpuIdleClock);
  p.busy_power_w = c.value(k::kGpuBusyPower);
  p.power_cap_w = c.value(k::kGpuPowerCap);
  p.power_capped_share = c.value(k::kGpuPowerCappedShare);
  p.busy_temperature_c = c.value(k::kGpuBusyTemperature);
  p.idle_temperature_c = c.value(k::kGpuIdleTemperature);
  p.temperature_spread_c = c.value(k::kGpuTemperatureSpread);
  return p;
}

HealthyGpus::HealthyGpus(int hosts, int gpus_per_host, const HealthyGpuParams& params) : params_(params) {
  const auto gpus = static_cast<std::size_t>(hosts * gpus_per_host);
  speed_.assign(gpus, 1.0);
  fleet_runtime_.assign(gpus, 1.0);
  screened_runtime_.assign(gpus, 1.0);
  temperature_offset_.assign(gpus, 0.0);
  capped_.assign(gpus, false);
}

HealthyGpus::HealthyGpus(int hosts, int gpus_per_host, const HealthyGpuParams& params, std::uint64_t seed)
    : HealthyGpus(hosts, gpus_per_host, params) {
  varied_ = true;
  const sim::RngStreams streams(seed);
  sim::Rng draws = streams.stream("fleet/gpus");
  for (std::size_t i = 0; i < speed_.size(); ++i) {
    fleet_runtime_[i] = fleet_runtime(draws, params_);
    double kept = fleet_runtime_[i];
    for (int t = 0; t < kScreenTries && kept > params_.screen_threshold; ++t) kept = fleet_runtime(draws, params_);
    screened_runtime_[i] = std::min(kept, std::max(1.0, params_.screen_threshold));
    temperature_offset_[i] = params_.temperature_spread_c * normal(draws);
  }
  sim::Rng machines = streams.stream("fleet/slow_machines");
  for (int h = 0; h < hosts; ++h)
    if (machines.uniform() < params_.slow_machine_share) slow_hosts_.push_back(h);
  for (std::size_t i = 0; i < speed_.size(); ++i) speed_[i] = 1.0 / screened_runtime_[i];
  for (int h : slow_hosts_)
    for (int g = 0; g < gpus_per_host; ++g)
      speed_[static_cast<std::size_t>(h * gpus_per_host + g)] *= 1.0 - params_.slow_machine_slowdown;
  // The slowest share of GPUs run at the power cap.
  if (!speed_.empty() && params_.power_capped_share > 0) {
    std::vector<double> sorted = speed_;
    const auto capped = static_cast<std::size_t>(std::llround(params_.power_capped_share * sorted.size()));
    if (capped > 0) {
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(capped - 1), sorted.end());
      const double fastest_capped = sorted[capped - 1];
      for (std::size_t i = 0; i < speed_.size(); ++i) capped_[i] = speed_[i] <= fastest_capped;
    }
  }
  phase_ = streams.stream("fleet/daily").uniform();
}

std::int64_t HealthyGpus::step_of(sim::Nanos at) const {
  if (!varied_ || params_.daily_step <= 0) return 0;
  return at / params_.daily_step;
}

sim::Nanos HealthyGpus::next_step(sim::Nanos at) const {
  if (!varied_ || params_.daily_step <= 0) return std::numeric_limits<sim::Nanos>::max();
  return (at / params_.daily_step + 1) * params_.daily_step;
}

double HealthyGpus::heat(sim::Nanos at) const {
  if (!varied_) return 0;
  const sim::Nanos step_start = step_of(at) * params_.daily_step;
  const double day = phase_ + static_cast<double>(step_start % kDay) / static_cast<double>(kDay);
  return (1.0 - std::cos(2 * std::numbers::pi * day)) / 2;
}

double HealthyGpus::pace(sim::Nanos at) const { return 1.0 - params_.daily_cycle * heat(at); }

double HealthyGpus::loaded_clock_mhz(std::size_t gpu, sim::Nanos at) const {
  if (!varied_) return params_.max_clock_mhz;
  const double clock = params_.loaded_clock_mhz * speed_[gpu] * pace(at);
  return std::min(params_.max_clock_mhz, std::round(clock / kClockStepMhz) * kClockStepMhz);
}

double HealthyGpus::busy_temperature_c(std::size_t gpu, sim::Nanos at) const {
  return params_.busy_temperature_c + temperature_offset_[gpu] + params_.daily_temperature_swing_c * heat(at);
}

double HealthyGpus::idle_temperature_c(std::size_t gpu, sim::Nanos at) const {
  return params_.idle_temperature_c + temperature_offset_[gpu] + params_.daily_temperature_swing_c * heat(at);
}

double HealthyGpus::busy_power_w(std::size_t gpu) const {
  return capped_[gpu] ? params_.power_cap_w : params_.busy_power_w;
}

std::uint32_t HealthyGpus::throttle_reasons(std::size_t gpu, bool busy) const {
  if (!varied_) return 0;
  if (!busy) return throttle_reason::kGpuIdle;
  return capped_[gpu] ? throttle_reason::kSwPowerCap : 0;
}

}  // namespace gauntlet::models
