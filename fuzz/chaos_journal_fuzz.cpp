// The chaos journal reader (recover, the watchdog, chaos --apply) on
// arbitrary bytes: a state or JournalError, nothing else.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "injectors/real/journal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("gauntlet-journal-fuzz-" + std::to_string(::getpid()))).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  try {
    gauntlet::injectors::real::read_journal(path);
  } catch (const gauntlet::injectors::real::JournalError&) {
  }
  return 0;
}
