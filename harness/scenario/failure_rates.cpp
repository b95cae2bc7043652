#include "harness/scenario/failure_rates.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gauntlet::harness {
namespace {

constexpr double kSecondsPerDay = 86'400;

RatePreset c4d_preset() {
  // C4D (Dong et al., "Enhancing Large-Scale LLM Training with C4"): a
  // representative 4,096-GPU job on a new cluster crashed about 40 times a
  // month, almost always shown to the user as "NCCL Error".
  return {"c4d",
          "C4D: about 40 crashes a month of a 4,096-GPU job",
          {{"crash", "gpu_fail", 40.0 / (30 * 4096), RatePer::gpu, {}, {}, 0, 0}}};
}

RatePreset llama3_preset() {
  // "The Llama 3 Herd of Models" (Meta, 2024), Table 5: 419 unexpected
  // interruptions in a 54-day snapshot of pre-training on 16,384 H100 GPUs,
  // by root cause. The counts are used: the table's percentages sum to
  // 94.9% and print 30.1% for the faulty GPUs' 148 of 419 (35.3%). Each
  // cause becomes the fault type whose signals it has: the GPU classes with
  // signals of their own act them out (HBM3, SRAM, system processor, silent
  // data corruption); a switch or cable takes a host link down until its
  // repair (port_flap, down 23 h of every day, so down for any repair
  // shorter than that), a NIC goes down (nic_down); the other GPU causes
  // fail a GPU; the rest, software bugs, NCCL watchdog timeouts of unknown
  // cause and host maintenance among them, stop the host (node_crash),
  // having no fault type closer to them.
  struct Cause {
    const char* category;
    const char* type;
    int interruptions;
  };
  const Cause causes[] = {
      {"Faulty GPU", "gpu_fail", 148},
      {"GPU HBM3 memory", "gpu_hbm_error", 72},
      {"Software bug", "node_crash", 54},
      {"Network switch/cable", "port_flap", 35},
      {"Host maintenance", "node_crash", 32},
      {"GPU SRAM memory", "gpu_sram_error", 19},
      {"GPU system processor", "gpu_gsp_error", 17},
      {"NIC", "nic_down", 7},
      {"NCCL watchdog timeouts", "node_crash", 7},
      {"Silent data corruption", "gpu_sdc", 6},
      {"GPU thermal interface and sensor", "gpu_fail", 6},
      {"SSD", "node_crash", 3},
      {"Power supply", "node_crash", 3},
      {"Server chassis", "node_crash", 2},
      {"IO expansion board", "node_crash", 2},
      {"Dependency", "node_crash", 2},
      {"CPU", "node_crash", 2},
      {"System memory", "node_crash", 2},
  };
  RatePreset preset{"llama3", "Llama 3: 419 unexpected interruptions in 54 days on 16,384 GPUs (Table 5)", {}};
  const double gpu_days = 54.0 * 16384;
  for (const Cause& cause : causes) {
    FailureRate rate{cause.category, cause.type, cause.interruptions / gpu_days, RatePer::gpu, {}, {}, 0, 0};
    if (rate.type == "port_flap") {
      rate.params.set_duration("period", 24 * sim::kHour);
      rate.params.set_duration("down", 23 * sim::kHour);
    }
    preset.rates.push_back(std::move(rate));
  }
  return preset;
}

}  // namespace

sim::Nanos RepairTime::median() const {
  if (fixed) return *fixed;
  return static_cast<sim::Nanos>(std::llround(std::exp(log_mean) * 1e9));
}

sim::Nanos RepairTime::draw(sim::Rng& rng) const {
  if (fixed) return *fixed;
  // Box-Muller written out: std::normal_distribution differs between libraries.
  const double u1 = 1 - rng.uniform(), u2 = rng.uniform();
  const double normal = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  const double seconds = std::exp(log_mean + log_sd * normal);
  return std::clamp<sim::Nanos>(static_cast<sim::Nanos>(std::llround(seconds * 1e9)), sim::kSecond, sim::kMaxDuration);
}

std::optional<RatePreset> published_preset(std::string_view name) {
  if (name == "c4d") return c4d_preset();
  if (name == "llama3") return llama3_preset();
  return std::nullopt;
}

std::string published_preset_names() { return "c4d, llama3"; }

RepairTime fit_repair(const std::vector<sim::Nanos>& repairs, sim::Nanos floor) {
  RepairTime fit;
  if (repairs.empty()) return fit;
  double sum = 0, sum_squares = 0;
  for (sim::Nanos repair : repairs) {
    const double log_seconds = std::log(static_cast<double>(std::max(repair, floor)) / 1e9);
    sum += log_seconds;
    sum_squares += log_seconds * log_seconds;
  }
  const double n = static_cast<double>(repairs.size());
  fit.log_mean = sum / n;
  fit.log_sd = std::sqrt(std::max(0.0, sum_squares / n - fit.log_mean * fit.log_mean));
  return fit;
}

double interarrival_cv(const std::vector<sim::Nanos>& sorted_onsets) {
  if (sorted_onsets.size() < 3) return 0;
  double sum = 0, sum_squares = 0;
  for (std::size_t i = 1; i < sorted_onsets.size(); ++i) {
    const double gap = static_cast<double>(sorted_onsets[i] - sorted_onsets[i - 1]) / 1e9 / kSecondsPerDay;
    sum += gap;
    sum_squares += gap * gap;
  }
  const double n = static_cast<double>(sorted_onsets.size() - 1);
  const double mean = sum / n;
  if (mean <= 0) return 0;
  return std::sqrt(std::max(0.0, sum_squares / n - mean * mean)) / mean;
}

}  // namespace gauntlet::harness
