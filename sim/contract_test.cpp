#include "sim/contract.hpp"

#include <gtest/gtest.h>

namespace gauntlet::sim {
namespace {

TEST(Contract, AHeldInvariantCostsNothingAndEvaluatesNoDetail) {
  int details = 0;
  auto detail = [&] {
    ++details;
    return std::string("never");
  };
  GAUNTLET_INVARIANT(1 + 1 == 2, detail());
  EXPECT_EQ(details, 0);
}

TEST(Contract, ABrokenInvariantNamesItsPlaceAndExpression) {
  const int progress = 5, executed = 4;
  const int line = __LINE__ + 2;
  try {
    GAUNTLET_INVARIANT(progress <= executed, "progress 5, executed 4");
    FAIL() << "no error";
  } catch (const ContractViolation& e) {
    EXPECT_EQ(e.file(), "sim/contract_test.cpp");  // relative to the source tree
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.expression(), "progress <= executed");
    EXPECT_EQ(std::string(e.what()), "sim/contract_test.cpp:" + std::to_string(line) +
                                         ": internal error: invariant 'progress <= executed' broken "
                                         "(progress 5, executed 4)");
  }
}

TEST(Contract, TheDetailIsOptional) {
  try {
    GAUNTLET_INVARIANT(false);
    FAIL() << "no error";
  } catch (const ContractViolation& e) {
    EXPECT_EQ(e.detail(), "");
    EXPECT_NE(std::string(e.what()).find("invariant 'false' broken"), std::string::npos);
  }
}

TEST(Contract, ADebugInvariantChecksOnlyWhereDebugInvariantsAreCompiledIn) {
  int evaluated = 0;
  auto broken = [&] {
    ++evaluated;
    return false;
  };
  if (kDebugInvariants) {
    EXPECT_THROW(GAUNTLET_DEBUG_INVARIANT(broken(), "an O(n) check"), ContractViolation);
    EXPECT_EQ(evaluated, 1);
  } else {
    GAUNTLET_DEBUG_INVARIANT(broken(), "an O(n) check");
    EXPECT_EQ(evaluated, 0);  // compiled, never run
  }
}

}  // namespace
}  // namespace gauntlet::sim
