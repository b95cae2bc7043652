// The sweep loader on arbitrary text. A sweep file names scenario files, so
// the input is written to sweeps/fuzz.yaml in a folder holding demo.yaml:
// the shipped sweeps' `../demo.yaml` resolves there.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness/detectors/registry.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fuzz_folder() {
  const fs::path folder = fs::temp_directory_path() / ("gauntlet-sweep-fuzz-" + std::to_string(::getpid()));
  fs::create_directories(folder / "sweeps");
  fs::copy_file(fs::path(GAUNTLET_SOURCE_DIR) / "scenarios" / "demo.yaml", folder / "demo.yaml",
                fs::copy_options::overwrite_existing);
  return folder;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gauntlet::harness::DetectorRegistry registry = gauntlet::harness::builtin_detectors();
  static const std::string path = (fuzz_folder() / "sweeps" / "fuzz.yaml").string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  try {
    gauntlet::harness::load_sweep(path, registry);
  } catch (const gauntlet::harness::InputError&) {
  }
  return 0;
}
