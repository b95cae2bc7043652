#include "sim/isolated_run.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <stdexcept>

#include "sim/contract.hpp"
#include "sim/input_error.hpp"

namespace gauntlet::sim {
namespace {

TEST(IsolatedRun, ResultsComeBackInInputOrder) {
  auto results = run_isolated_all(
      {[] { return std::string("a"); }, [] { return std::string("b\0c", 3); }, [] { return std::string(); }}, 2);
  EXPECT_EQ(results, (std::vector<std::string>{"a", std::string("b\0c", 3), ""}));
}

TEST(IsolatedRun, BadInputFoundInAChildKeepsItsTypeAndPosition) {
  try {
    run_isolated([]() -> std::string { throw InputError("dir/a b.yaml", 12, 7, "bad value: 'x'\nsecond line"); });
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "dir/a b.yaml");
    EXPECT_EQ(e.line(), 12);
    EXPECT_EQ(e.column(), 7);
    EXPECT_EQ(e.message(), "bad value: 'x'\nsecond line");
    EXPECT_STREQ(e.what(), "dir/a b.yaml:12:7: bad value: 'x'\nsecond line");
  }
}

TEST(IsolatedRun, ABrokenInvariantInAChildStaysAnInternalError) {
  try {
    run_isolated([]() -> std::string {
      const int in_flight = -1;
      GAUNTLET_INVARIANT(in_flight >= 0, "in flight: " + std::to_string(in_flight));
      return "";
    });
    FAIL() << "no error";
  } catch (const ContractViolation& e) {
    EXPECT_EQ(e.file(), "sim/isolated_run_test.cpp");
    EXPECT_GT(e.line(), 0);
    EXPECT_EQ(e.expression(), "in_flight >= 0");
    EXPECT_EQ(e.detail(), "in flight: -1");
  }
}

// A library rejecting an argument is a bug in the caller, not bad input: it
// must not come back as an InputError (nor as std::invalid_argument, which
// the command line once took for bad input).
TEST(IsolatedRun, ALibrarysInvalidArgumentComesBackAsAFailedRun) {
  try {
    run_isolated([]() -> std::string { throw std::invalid_argument("stoi"); });
    FAIL() << "no error";
  } catch (const InputError&) {
    FAIL() << "reported as bad input";
  } catch (const std::logic_error&) {
    FAIL() << "kept a logic_error type";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "stoi");
  }
}

TEST(IsolatedRun, AChildThatDiesReportsTheSignal) {
  try {
    run_isolated([]() -> std::string {
      std::raise(SIGKILL);
      return "";
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("signal 9"), std::string::npos) << e.what();
  }
}

TEST(IsolatedRun, TheFirstFailureInInputOrderIsThrownAfterAllEnded) {
  try {
    run_isolated_all({[] { return std::string("ok"); }, []() -> std::string { throw std::runtime_error("second"); },
                      []() -> std::string { throw InputError("f.yaml", 1, 2, "third"); }},
                     3);
    FAIL() << "no error";
  } catch (const InputError&) {
    FAIL() << "the later error won";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "second");
  }
}

}  // namespace
}  // namespace gauntlet::sim
