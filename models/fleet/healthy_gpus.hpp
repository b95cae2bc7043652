#pragma once
// The healthy variation of a cluster's GPUs, drawn once per run from the
// scenario's seed:
//
// - Fleet: each GPU's runtime relative to the fleet's median GPU is normal
//   with sigma = fleet.gpu_spread / 5.4 (Tukey's whiskers of a normal sit
//   about 2.7 sigma either side, so their span over the median is the
//   spread Sinha et al. report), and a fleet.gpu_outlier_share of GPUs lie
//   beyond the upper whisker, up to fleet.gpu_outlier_max (their 1.5x).
// - Screening: a GPU slower than fleet.screen_threshold is replaced by one
//   that passes (burn-in), so a job's slowest GPU is a few percent below the
//   median, not the fleet's outlier.
// - Residual slow machines: a fleet.slow_machine_share of machines got
//   through slow, each GPU fleet.slow_machine_slowdown slower (MegaScale).
// - Daily cycle: the whole fleet's throughput dips by fleet.daily_cycle at
//   the hottest time of the day (Llama 3), in fleet.daily_step steps from a
//   seeded time of day; temperatures rise with it. A job repeating an
//   iteration scales its time by the change of pace (TrainingJob).
//
// A GPU's speed (1 / runtime) is what the job computes at; its loaded SM
// clock follows its speed (power management is what sets both), in 15 MHz
// steps below the maximum; the slowest gpu.power_capped_share of GPUs draw
// the power cap and report SwPowerCap. Idle GPUs clock down and cool.
//
// Unvaried (`background: none`), every GPU is the median one at nominal
// clock, 1.0 speed, with no cycle: the clean fleet unit tests pin.
#include <cstdint>
#include <vector>

#include "models/fleet/throttle_reasons.hpp"
#include "sim/calibration.hpp"
#include "sim/time.hpp"

namespace gauntlet::models {

struct HealthyGpuParams {
  double spread = 0.08;
  double outlier_share = 0.005;
  double outlier_max = 1.5;
  double screen_threshold = 1.05;
  double slow_machine_share = 0.005;
  double slow_machine_slowdown = 0.10;
  double daily_cycle = 0.015;
  sim::Nanos daily_step = 30 * sim::kMinute;
  double daily_temperature_swing_c = 4;
  double max_clock_mhz = 1980;
  double loaded_clock_mhz = 1755;
  double idle_clock_mhz = 345;
  double busy_power_w = 600;
  double power_cap_w = 700;
  double power_capped_share = 0.6;
  double busy_temperature_c = 50;
  double idle_temperature_c = 35;
  double temperature_spread_c = 3;

  static HealthyGpuParams from(const sim::Calibration& calibration);
};

class HealthyGpus {
 public:
  // Unvaried: the clean fleet.
  HealthyGpus(int hosts, int gpus_per_host, const HealthyGpuParams& params = {});
  // Varied, drawn from `seed` (the scenario's; streams "fleet/gpus", "fleet/slow_machines", "fleet/daily").
  HealthyGpus(int hosts, int gpus_per_host, const HealthyGpuParams& params, std::uint64_t seed);

  bool varied() const { return varied_; }
  std::size_t size() const { return speed_.size(); }
  // Speed relative to the fleet's median GPU, without the daily cycle.
  double speed(std::size_t gpu) const { return speed_[gpu]; }
  const std::vector<double>& speeds() const { return speed_; }
  // Runtime over the median's as drawn before screening (for the tests of
  // the fleet's distribution) and after it (without slow machines).
  const std::vector<double>& fleet_runtimes() const { return fleet_runtime_; }
  const std::vector<double>& screened_runtimes() const { return screened_runtime_; }
  const std::vector<int>& slow_hosts() const { return slow_hosts_; }

  // The daily cycle, constant within each step: the step holding `at`, the
  // fleet's throughput factor then (1 at the coolest, 1 - daily_cycle at the
  // hottest time of the day) and the time of day's heat in [0, 1].
  std::int64_t step_of(sim::Nanos at) const;
  sim::Nanos next_step(sim::Nanos at) const;  // the first step start strictly after `at`
  double pace(sim::Nanos at) const;
  double heat(sim::Nanos at) const;

  // Samples of a healthy GPU at `at`.
  double loaded_clock_mhz(std::size_t gpu, sim::Nanos at) const;
  double idle_clock_mhz() const { return varied_ ? params_.idle_clock_mhz : params_.max_clock_mhz; }
  double max_clock_mhz() const { return params_.max_clock_mhz; }
  double busy_temperature_c(std::size_t gpu, sim::Nanos at) const;
  double idle_temperature_c(std::size_t gpu, sim::Nanos at) const;
  double busy_power_w(std::size_t gpu) const;
  bool power_capped(std::size_t gpu) const { return capped_[gpu]; }
  // The throttle reasons a healthy GPU reports, busy or idle.
  std::uint32_t throttle_reasons(std::size_t gpu, bool busy) const;

  const HealthyGpuParams& params() const { return params_; }

 private:
  HealthyGpuParams params_;
  bool varied_ = false;
  double phase_ = 0;  // time of day at the run's start, as a fraction of a day
  std::vector<double> speed_;
  std::vector<double> fleet_runtime_, screened_runtime_;
  std::vector<double> temperature_offset_;
  std::vector<bool> capped_;
  std::vector<int> slow_hosts_;
};

}  // namespace gauntlet::models
