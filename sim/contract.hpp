#pragma once
// Invariants that no input can break: a broken one is a bug in gauntlet, so
// the check reports where it sits and what failed, and the run ends with
// exit code 1 (never 2, which is for bad input). The checks stay in Release
// builds: they are cheap, and a wrong figure is worse than a stopped run.
//
//   GAUNTLET_INVARIANT(in_flight >= 0);
//   GAUNTLET_INVARIANT(progress <= executed, "progress " + std::to_string(progress));
//
// GAUNTLET_DEBUG_INVARIANT is the same check for properties that cost more
// than the work they guard (a sum over queues on every frame, a walk of a
// table): compiled in only when CMake's GAUNTLET_DEBUG_INVARIANTS is on (off
// by default; scripts/sanitize.sh turns it on). Off, the condition is still
// compiled, never evaluated.
#include <stdexcept>
#include <string>

namespace gauntlet::sim {

class ContractViolation : public std::logic_error {
 public:
  ContractViolation(std::string file, int line, std::string expression, std::string detail);
  const std::string& file() const { return file_; }  // relative to the source tree
  int line() const { return line_; }
  const std::string& expression() const { return expression_; }
  const std::string& detail() const { return detail_; }  // may be empty

 private:
  std::string file_;
  int line_;
  std::string expression_;
  std::string detail_;
};

[[noreturn]] void contract_failed(const char* file, int line, const char* expression, const std::string& detail = {});

#ifdef GAUNTLET_DEBUG_INVARIANTS
inline constexpr bool kDebugInvariants = true;
#else
inline constexpr bool kDebugInvariants = false;
#endif

}  // namespace gauntlet::sim

// The detail (optional) is evaluated only when the condition fails.
#define GAUNTLET_INVARIANT(condition, ...) \
  ((condition) ? static_cast<void>(0)      \
               : ::gauntlet::sim::contract_failed(__FILE__, __LINE__, #condition __VA_OPT__(, ) __VA_ARGS__))

#ifdef GAUNTLET_DEBUG_INVARIANTS
#define GAUNTLET_DEBUG_INVARIANT(condition, ...) GAUNTLET_INVARIANT(condition __VA_OPT__(, ) __VA_ARGS__)
#else
#define GAUNTLET_DEBUG_INVARIANT(condition, ...) static_cast<void>(sizeof(!(condition)))
#endif
