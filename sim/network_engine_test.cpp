#include "sim/network_engine.hpp"

#include <gtest/gtest.h>

#include "sim/contract.hpp"

namespace gauntlet::sim {
namespace {

ReplayedSet set_ending_at(Nanos end) {
  ReplayedSet set;
  set.start = end - 10;
  set.end = end;
  set.transfers = {{0, 1, 100}};
  set.delivered = {end - 1};
  return set;
}

TEST(ReplayLedger, ObserversHearOfReplaysOnlyWhileTheirObservationLasts) {
  ReplayLedger ledger;
  std::vector<std::string> heard;
  {
    const ReplayLedger::Observation first =
        ledger.observe([&](const ReplayedSet& s) { heard.push_back("first " + std::to_string(s.end)); });
    ReplayLedger::Observation second =
        ledger.observe([&](const ReplayedSet& s) { heard.push_back("second " + std::to_string(s.end)); });
    ledger.record(set_ending_at(100));
    const ReplayLedger::Observation moved = std::move(second);  // still observing, ended once
    ledger.record(set_ending_at(200));
  }
  ledger.record(set_ending_at(300));
  EXPECT_EQ(heard, (std::vector<std::string>{"first 100", "second 100", "first 200", "second 200"}));
}

TEST(ReplayLedger, TheNetworkIsBusyUntilTheLatestReplayEnds) {
  ReplayLedger ledger;
  EXPECT_EQ(ledger.busy_until(), std::numeric_limits<Nanos>::min());
  ledger.record(set_ending_at(500));
  EXPECT_EQ(ledger.busy_until(), 500);
  ledger.record(set_ending_at(900));
  EXPECT_EQ(ledger.busy_until(), 900);
}

TEST(ReplayLedger, AnObservationReassignedLetsGoOfItsFormerObserver) {
  ReplayLedger ledger;
  int a = 0, b = 0;
  ReplayLedger::Observation watch = ledger.observe([&](const ReplayedSet&) { ++a; });
  watch = ledger.observe([&](const ReplayedSet&) { ++b; });
  ledger.record(set_ending_at(1));
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
}

TEST(ReplayLedger, CountsTransfersUntilTheirDelivery) {
  ReplayLedger ledger;
  ledger.transfer_started();
  ledger.transfer_started();
  ledger.transfer_delivered();
  EXPECT_EQ(ledger.transfers_started(), 2u);
  EXPECT_EQ(ledger.transfers_undelivered(), 1u);
  ledger.transfer_delivered();
  EXPECT_EQ(ledger.transfers_undelivered(), 0u);
  EXPECT_THROW(ledger.transfer_delivered(), ContractViolation);  // a delivery without a transfer is a bug
}

TEST(ReplayLedger, RefusesToReplayOnANetworkThatIsNotIdle) {
  ReplayLedger ledger;
  ledger.transfer_started();
  EXPECT_THROW(ledger.record(set_ending_at(100)), ContractViolation);  // a transfer in flight
  ledger.transfer_delivered();
  ledger.record(set_ending_at(100));
  EXPECT_THROW(ledger.record(set_ending_at(105)), ContractViolation);  // starts before the last set ends
  ReplayedSet unmatched = set_ending_at(200);
  unmatched.delivered.clear();
  EXPECT_THROW(ledger.record(unmatched), ContractViolation);
}

}  // namespace
}  // namespace gauntlet::sim
