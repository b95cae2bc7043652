#pragma once
// A switch's PFC watchdog on one egress queue of the lossless class, apart
// from the simulator so that its states can be tested alone (RoceSwitch
// drives it from its ports' PAUSE frames and queues). After Guo et al.,
// "RDMA over Commodity Ethernet at Scale" (SIGCOMM 2016, section 4.3) and
// SONiC's pfcwd: a queue its peer keeps paused without a break for the
// detection time while it holds frames it cannot send is stormed; a
// stormed queue's frames are dropped (or sent regardless of pauses) until
// no PAUSE came for the restoration time, then it is operational again.
#include <cstdint>

#include "sim/packet/roce_params.hpp"

namespace gauntlet::sim::packet {

class PfcWatchdog {
 public:
  enum class State { operational, stormed };

  explicit PfcWatchdog(const PfcWatchdogParams& params) : params_(&params) {}

  // When a queue paused since `paused_since` (-1: not paused) can first be
  // found stormed; -1 when it cannot (not paused, or stormed already).
  Nanos detection_due(Nanos paused_since) const;
  // Looks at the queue at `now`: paused since `paused_since` (-1: not
  // paused), holding frames or not. True when it is stormed from now on.
  bool check(Nanos now, Nanos paused_since, bool holds_frames);
  // A PAUSE (XOFF) for the queue's class arrived at `at`.
  void on_pause(Nanos at);
  // When a stormed queue can first be restored: restoration time after the
  // last PAUSE; -1 when operational.
  Nanos restoration_due() const;
  // Restores a stormed queue at `now` if no PAUSE came for the restoration
  // time. True when it did.
  bool try_restore(Nanos now);

  State state() const { return state_; }
  bool stormed() const { return state_ == State::stormed; }
  std::uint64_t detected() const { return detected_; }
  std::uint64_t restored() const { return restored_; }

 private:
  const PfcWatchdogParams* params_;
  State state_ = State::operational;
  Nanos last_pause_ = -1;
  std::uint64_t detected_ = 0;
  std::uint64_t restored_ = 0;
};

}  // namespace gauntlet::sim::packet
