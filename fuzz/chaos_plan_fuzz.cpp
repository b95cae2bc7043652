// The chaos plan loader on arbitrary text: InputError or a plan, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/chaos/plan.hpp"
#include "harness/scenario/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    gauntlet::harness::parse_chaos_plan(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  } catch (const gauntlet::harness::InputError&) {
  }
  return 0;
}
