// score's JSONL readers (faults.jsonl, alerts.jsonl) on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "harness/scenario/input_error.hpp"
#include "harness/scoring/records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    std::istringstream in(text);
    gauntlet::harness::read_faults_jsonl(in, "faults.jsonl");
  } catch (const gauntlet::harness::InputError&) {
  }
  try {
    std::istringstream in(text);
    gauntlet::harness::read_alerts_jsonl(in, "alerts.jsonl");
  } catch (const gauntlet::harness::InputError&) {
  }
  return 0;
}
