// score's Alertmanager webhook reader on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/chaos/alertmanager.hpp"
#include "harness/scenario/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gauntlet::harness::parse_rfc3339(text);
  gauntlet::harness::looks_like_alertmanager(text);
  try {
    gauntlet::harness::parse_alertmanager(text, "alerts.json", {});
  } catch (const gauntlet::harness::InputError&) {
  }
  return 0;
}
