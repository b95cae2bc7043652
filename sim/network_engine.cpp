#include "sim/network_engine.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/contract.hpp"

namespace gauntlet::sim {

ReplayLedger::Observation::Observation(Observation&& other) noexcept
    : ledger_(std::exchange(other.ledger_, nullptr)), id_(other.id_) {}

ReplayLedger::Observation& ReplayLedger::Observation::operator=(Observation&& other) noexcept {
  if (this != &other) {
    Observation dropped(std::move(*this));
    ledger_ = std::exchange(other.ledger_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

ReplayLedger::Observation::~Observation() {
  if (ledger_) std::erase_if(ledger_->observers_, [this](const auto& entry) { return entry.first == id_; });
}

ReplayLedger::Observation ReplayLedger::observe(Observer observer) {
  const std::uint64_t id = ++next_id_;
  observers_.emplace_back(id, std::move(observer));
  return Observation(this, id);
}

void ReplayLedger::transfer_started() {
  ++started_;
  ++undelivered_;
  GAUNTLET_INVARIANT(undelivered_ <= started_);
}

void ReplayLedger::transfer_delivered() {
  GAUNTLET_INVARIANT(undelivered_ > 0, "a transfer delivered twice or never started");
  --undelivered_;
}

// A set replays only on an idle network: nothing in flight, and the set
// replayed before it over. Its deliveries fall within its span.
void ReplayLedger::record(const ReplayedSet& set) {
  GAUNTLET_INVARIANT(undelivered_ == 0, std::to_string(undelivered_) + " transfers in flight under a replayed set");
  GAUNTLET_INVARIANT(set.start >= busy_until_ && set.end >= set.start && set.delivered.size() == set.transfers.size(),
                     "a set replayed over [" + std::to_string(set.start) + ", " + std::to_string(set.end) +
                         "] with the network busy until " + std::to_string(busy_until_));
  GAUNTLET_DEBUG_INVARIANT(std::all_of(set.delivered.begin(), set.delivered.end(),
                                       [&set](Nanos at) { return at >= set.start && at <= set.end; }),
                           "a replayed delivery outside its set's span");
  busy_until_ = std::max(busy_until_, set.end);
  for (const auto& [id, observer] : observers_) observer(set);
}

}  // namespace gauntlet::sim
