#pragma once
// A one-off fault spec for the simulated injectors' tests.
#include <optional>
#include <string>

#include "injectors/spec/fault_spec.hpp"

namespace gauntlet::injectors::testing {

inline FaultSpec fault(const std::string& type, const std::string& target, sim::Nanos at,
                       std::optional<sim::Nanos> duration) {
  FaultSpec f;
  f.id = "f1";
  f.type = type;
  f.target = target;
  f.start = at;
  f.duration = duration;
  return f;
}

}  // namespace gauntlet::injectors::testing
