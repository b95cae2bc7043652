#include "models/progress_ledger.hpp"

#include <gtest/gtest.h>

#include "sim/contract.hpp"

namespace gauntlet::models {
namespace {

TEST(ProgressLedger, ARollBackLosesTheIterationsAfterTheCheckpoint) {
  ProgressLedger ledger;
  ledger.complete(0, 100, 3);  // iterations 0-2
  ledger.commit_checkpoint(3);
  ledger.complete(300, 100, 2);  // 3-4, lost below
  ledger.roll_back();
  EXPECT_EQ(ledger.progress(), 3u);
  EXPECT_EQ(ledger.executed(), 5u);
  EXPECT_EQ(ledger.lost_time(), 200);
  ledger.complete(900, 100, 1);  // iteration 3 again, after the restart
  ASSERT_EQ(ledger.timeline().size(), 2u);
  EXPECT_EQ(ledger.timeline().back().first, 3u);
}

TEST(ProgressLedger, ACheckpointOfIterationsNotDoneOrBehindTheLastIsABug) {
  ProgressLedger ledger;
  ledger.complete(0, 100, 4);
  EXPECT_THROW(ledger.commit_checkpoint(5), sim::ContractViolation);
  ledger.commit_checkpoint(4);
  EXPECT_THROW(ledger.commit_checkpoint(2), sim::ContractViolation);
}

TEST(ProgressLedger, IterationsThatOverlapInTimeAreABug) {
  ProgressLedger ledger;
  ledger.complete(0, 100, 2);  // until 200
  EXPECT_THROW(ledger.complete(150, 100, 1), sim::ContractViolation);
  EXPECT_THROW(ledger.complete(250, 100, 0), sim::ContractViolation);
}

}  // namespace
}  // namespace gauntlet::models
