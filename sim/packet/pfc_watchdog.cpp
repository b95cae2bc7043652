#include "sim/packet/pfc_watchdog.hpp"

#include <algorithm>

namespace gauntlet::sim::packet {

Nanos PfcWatchdog::detection_due(Nanos paused_since) const {
  if (stormed() || paused_since < 0) return -1;
  return paused_since + params_->detection_time;
}

bool PfcWatchdog::check(Nanos now, Nanos paused_since, bool holds_frames) {
  const Nanos due = detection_due(paused_since);
  // An empty queue loses nothing to the pause: only one that cannot send
  // what it holds is stuck.
  if (due < 0 || now < due || !holds_frames) return false;
  state_ = State::stormed;
  ++detected_;
  // The pause in force is what restoration waits out, whenever it came.
  last_pause_ = std::max(last_pause_, paused_since);
  return true;
}

void PfcWatchdog::on_pause(Nanos at) { last_pause_ = std::max(last_pause_, at); }

Nanos PfcWatchdog::restoration_due() const { return stormed() ? last_pause_ + params_->restoration_time : -1; }

bool PfcWatchdog::try_restore(Nanos now) {
  if (!stormed() || now < restoration_due()) return false;
  state_ = State::operational;
  ++restored_;
  return true;
}

}  // namespace gauntlet::sim::packet
