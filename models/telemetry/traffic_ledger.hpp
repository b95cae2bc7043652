#pragma once
// Exact traffic accounting from the network engine's transfer events. Rates
// in the fluid model are constant between transfer events, so recording every
// in-flight transfer's progress at each event (and at each sample time) gives
// its progress as an exact piecewise-linear function of time. Any window,
// including one of an earlier iteration replayed a period later, is then
// measured exactly: bytes per RNIC and per link direction, and when each
// transfer was actually moving (a transfer stalled on a down link is not).
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "sim/network_engine.hpp"

namespace gauntlet::models {

// One direction of a link: upward is RNIC to leaf (host link) or leaf to
// spine (fabric link). Indexed link * 2 + upward.
inline int directed_link(sim::LinkId link, bool upward) { return link * 2 + (upward ? 1 : 0); }
inline sim::LinkId link_of_direction(int direction) { return direction / 2; }
inline bool direction_upward(int direction) { return direction % 2 == 1; }

struct LedgerFlow {
  sim::EndpointId src = 0;
  sim::EndpointId dst = 0;
  std::vector<int> directions;  // the route, as directed links
  // What the sender would push if nothing downstream held it back: its RNIC's
  // egress rate shared equally with the other transfers it had open when
  // this one started (RNICs serve their queue pairs round robin).
  double demand = 0;
  std::vector<std::pair<sim::Nanos, double>> progress;  // (time, bytes pushed), increasing
  bool open = true;
};

// A stretch of one flow's life inside a measured window, moving at a
// constant rate.
struct FlowSegment {
  const LedgerFlow* flow = nullptr;
  sim::Nanos from = 0;  // in the measured window's time (shift applied)
  sim::Nanos to = 0;
  double bytes = 0;
  bool moving() const;  // faster than a stalled link's trickle
};

class TrafficLedger {
 public:
  explicit TrafficLedger(sim::NetworkEngine& engine);
  TrafficLedger(const TrafficLedger&) = delete;
  TrafficLedger& operator=(const TrafficLedger&) = delete;

  // Records the progress of every open transfer at `at` (the engine's now).
  void snapshot(sim::Nanos at);
  // The constant-rate segments of all flows inside [from, to) of recorded
  // time, reported `shift` later (a replayed iteration is measured with
  // shift = the replay's distance from the recorded one).
  std::vector<FlowSegment> segments(sim::Nanos from, sim::Nanos to, sim::Nanos shift = 0) const;
  // A transfer the engine never carried (a replayed outcome): `bytes` sent
  // from `from` to `to` at a constant rate, on the route src to dst has now,
  // while the source sends `sharing` such transfers at once.
  void add_replayed(sim::EndpointId src, sim::EndpointId dst, sim::Nanos from, sim::Nanos to, double bytes,
                    int sharing);
  // Drops flows that closed before `before`; keeps memory bounded.
  void forget_before(sim::Nanos before);
  std::size_t flows() const { return flows_.size(); }

 private:
  void on_event(const sim::TransferEvent& event);
  void open_flow(const sim::TransferEvent& event, double already_pushed);
  std::vector<int> route_directions(sim::EndpointId src, sim::EndpointId dst) const;

  sim::NetworkEngine& engine_;
  std::deque<LedgerFlow> flows_;
  std::unordered_map<sim::TransferId, std::size_t> open_;  // transfer -> index into flows_ (+ dropped_)
  std::unordered_map<sim::EndpointId, int> open_per_source_;
  std::size_t dropped_ = 0;  // flows forgotten from the front
  sim::Nanos last_snapshot_ = -1;
};

}  // namespace gauntlet::models
