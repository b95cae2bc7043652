#include "sim/packet/dcqcn_rate.hpp"

#include <algorithm>
#include <cmath>

namespace gauntlet::sim::packet {

DcqcnRate::DcqcnRate(const DcqcnParams& params, double line_rate)
    : params_(params), line_rate_(line_rate), rate_(line_rate), target_(line_rate) {}

// Whole alpha periods since alpha_at_: the first ends raising alpha if it
// saw a CNP, every later one (no CNP, or it would have been settled) decays.
double DcqcnRate::alpha(Nanos now) const {
  if (alpha_at_ < 0) return params_.initial_alpha;
  const Nanos periods = (now - alpha_at_) / params_.alpha_update_period;
  if (periods == 0) return alpha_;
  const double keep = 1 - params_.alpha_gain;
  const double first = keep * alpha_ + (cnp_in_period_ ? params_.alpha_gain : 0);
  return first * std::pow(keep, static_cast<double>(periods - 1));
}

void DcqcnRate::settle_alpha(Nanos now) {
  const Nanos periods = (now - alpha_at_) / params_.alpha_update_period;
  if (periods == 0) return;
  alpha_ = alpha(now);
  alpha_at_ += periods * params_.alpha_update_period;
  cnp_in_period_ = false;
}

Nanos DcqcnRate::on_cnp(Nanos now) {
  if (alpha_at_ < 0) {
    // The first CNP sets alpha to its initial value and starts the alpha
    // and rate-reduce periods.
    alpha_ = params_.initial_alpha;
    alpha_at_ = now;
    monitor_from_ = now;
  } else {
    settle_alpha(now);
    cnp_in_period_ = true;
  }
  if (decrease_at_ >= 0) return -1;
  const Nanos period = params_.rate_reduce_monitor_period;
  decrease_at_ = monitor_from_ + ((now - monitor_from_) / period + 1) * period;
  return decrease_at_;
}

void DcqcnRate::decrease(Nanos now) {
  settle_alpha(now);
  decrease_at_ = -1;
  if (increased_since_cut_ || params_.clamp_target_always) target_ = rate_;
  const double cut = rate_ * std::max(1 - alpha_ / 2, params_.min_decrease_factor);
  rate_ = std::max(params_.min_rate, cut);
  timer_stage_ = 0;
  byte_stage_ = 0;
  bytes_since_stage_ = 0;
  increased_since_cut_ = false;
}

bool DcqcnRate::on_timer() {
  ++timer_stage_;
  raise();
  return rate_ < line_rate_;
}

void DcqcnRate::on_sent(double bytes) {
  if (params_.byte_counter <= 0 || rate_ >= line_rate_) return;
  bytes_since_stage_ += bytes;
  if (bytes_since_stage_ < params_.byte_counter) return;
  bytes_since_stage_ = 0;
  ++byte_stage_;
  raise();
}

// One increase event. Fast recovery for the first F events after a cut
// (halve the gap to the target); hyper increase once both the timer and
// the byte counter have passed F stages; additive increase in between.
// Without a byte counter the timer's stages count for both.
void DcqcnRate::raise() {
  const int f = params_.fast_recovery_steps;
  const int bytes = params_.byte_counter > 0 ? byte_stage_ : timer_stage_;
  if (std::max(timer_stage_, bytes) > f) {
    target_ += std::min(timer_stage_, bytes) > f ? params_.hyper_increase : params_.additive_increase;
    target_ = std::min(target_, line_rate_);
  }
  rate_ = std::min(line_rate_, (rate_ + target_) / 2);
  if (line_rate_ - rate_ < line_rate_ * 1e-3) rate_ = line_rate_;
  increased_since_cut_ = true;
}

}  // namespace gauntlet::sim::packet
