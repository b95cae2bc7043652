#include "harness/scenario/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {

std::string read_input_file(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error) throw InputError(path, 1, 1, "cannot read the file: " + error.message());
  if (!std::filesystem::is_regular_file(status)) throw InputError(path, 1, 1, "not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxInputFileBytes)
    throw InputError(path, 1, 1, "the file has " + std::to_string(size) + " bytes, more than the limit of " +
                                     std::to_string(kMaxInputFileBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 1, 1, std::string("cannot read the file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > kMaxInputFileBytes)  // grew while being read
    throw InputError(path, 1, 1, "the file is larger than the limit of " + std::to_string(kMaxInputFileBytes) +
                                     " bytes");
  return text.str();
}

}  // namespace gauntlet::harness
