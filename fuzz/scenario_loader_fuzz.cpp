// The scenario loader on arbitrary text: InputError or a scenario, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/detectors/registry.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gauntlet::harness::DetectorRegistry registry = gauntlet::harness::builtin_detectors();
  try {
    gauntlet::harness::parse_scenario(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml", registry);
  } catch (const gauntlet::harness::InputError&) {
  }
  return 0;
}
