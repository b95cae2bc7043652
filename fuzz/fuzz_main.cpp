// One libFuzzer target per reader: GAUNTLET_FUZZ_READER names it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gauntlet::fuzz::Reader& reader = gauntlet::fuzz::reader(GAUNTLET_FUZZ_READER);
  reader.read(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
