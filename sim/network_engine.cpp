#include "sim/network_engine.hpp"

#include <algorithm>
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
}

void ReplayLedger::transfer_delivered() {
  GAUNTLET_INVARIANT(undelivered_ > 0, "a transfer delivered twice or never started");
  --undelivered_;
}

void ReplayLedger::record(const ReplayedSet& set) {
  busy_until_ = std::max(busy_until_, set.end);
  for (const auto& [id, observer] : observers_) observer(set);
}

}  // namespace gauntlet::sim
