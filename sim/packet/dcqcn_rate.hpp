#pragma once
// One QP's DCQCN reaction point (Zhu et al., SIGCOMM 2015, section 3.1, as
// NVIDIA's ConnectX firmware runs it; the parameters and their sources are
// in DcqcnParams). A pure state machine: the RNIC passes the time in and
// runs the two timers it asks for, the rate-decrease check at the end of a
// monitor period with a CNP in it and the rate-increase timer.
#include "sim/packet/roce_params.hpp"
#include "sim/time.hpp"

namespace gauntlet::sim::packet {

class DcqcnRate {
 public:
  DcqcnRate(const DcqcnParams& params, double line_rate);

  double rate() const { return rate_; }
  double target() const { return target_; }
  // alpha at `now`: the EWMA of whether each alpha period saw a CNP.
  double alpha(Nanos now) const;

  // A CNP arrived. Returns when the RNIC must call decrease(): the end of
  // the current rate-reduce monitor period, or -1 when a decrease is already
  // pending for it.
  Nanos on_cnp(Nanos now);
  // The monitor period that saw a CNP ended: cut the rate by alpha / 2
  // (bounded by the largest decrease per event), remember the rate to
  // recover to, and restart both increase counters; the rate timer restarts
  // from here (the RNIC reschedules it).
  void decrease(Nanos now);
  // The rate timer expired (one increase stage); false once back at line rate.
  bool on_timer();
  // Bytes sent while below line rate: a stage per byte-counter worth.
  void on_sent(double bytes);
  bool below_line_rate() const { return rate_ < line_rate_; }

 private:
  void settle_alpha(Nanos now);
  void raise();

  const DcqcnParams& params_;
  double line_rate_;
  double rate_;
  double target_;
  // alpha as of the start of the alpha period beginning at alpha_at_, and
  // whether that period saw a CNP; periods are counted lazily.
  double alpha_ = 0;
  Nanos alpha_at_ = -1;  // -1: no CNP yet (alpha starts at its initial value then)
  bool cnp_in_period_ = false;
  Nanos decrease_at_ = -1;  // the pending decrease, or -1
  Nanos monitor_from_ = 0;  // the rate-reduce periods run from the first CNP
  int timer_stage_ = 0;
  int byte_stage_ = 0;
  double bytes_since_stage_ = 0;
  // The target is clamped to the rate at a cut only if the rate rose since
  // the previous cut (clamp_tgt_rate 0 with clamp_tgt_rate_after_time_inc 1):
  // back-to-back cuts keep recovering toward the rate before the first.
  bool increased_since_cut_ = true;
};

}  // namespace gauntlet::sim::packet
