#include "sim/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sim/input_error.hpp"
#include "sim/text_position.hpp"

namespace gauntlet::sim {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string too_large(std::size_t max_bytes) {
  return "the file is larger than the limit of " + std::to_string(max_bytes) + " bytes";
}

}  // namespace

std::string read_input_file(const std::string& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is
  // checked on the open descriptor, so a swap after the check cannot slip
  // a device in.
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) throw InputError(path, 1, 1, std::string("cannot read the file: ") + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    throw InputError(path, 1, 1, std::string("cannot read the file: ") + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw InputError(path, 1, 1, "is a folder, not a file");
  if (!S_ISREG(info.st_mode)) throw InputError(path, 1, 1, "not a regular file (a device, FIFO or socket)");
  if (static_cast<std::uintmax_t>(info.st_size) > max_bytes)
    throw InputError(
        path, 1, 1,
        "the file has " + std::to_string(info.st_size) + " bytes, more than the limit of " + std::to_string(max_bytes));
  std::string text;
  text.resize(static_cast<std::size_t>(info.st_size) + 1);
  std::size_t filled = 0;
  for (;;) {
    if (filled == text.size()) {
      if (text.size() > max_bytes) throw InputError(path, 1, 1, too_large(max_bytes));  // grew while read
      text.resize(std::min(max_bytes + 1, text.size() * 2));
    }
    const ssize_t got = ::read(fd.get(), text.data() + filled, text.size() - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputError(path, 1, 1, std::string("cannot read the file: ") + std::strerror(errno));
    if (got == 0) break;
    filled += static_cast<std::size_t>(got);
  }
  if (filled > max_bytes) throw InputError(path, 1, 1, too_large(max_bytes));
  text.resize(filled);
  check_utf8(text, path);
  return text;
}

void check_regular_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw InputError(path, 1, 1, std::string("cannot read the file: ") + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw InputError(path, 1, 1, "is a folder, not a file");
  if (!S_ISREG(info.st_mode)) throw InputError(path, 1, 1, "not a regular file (a device, FIFO or socket)");
}

std::size_t invalid_utf8_at(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // overlong
      if (lead == 0xED) high = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // overlong
      if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
    } else {
      return i;
    }
    if (i + length > n) return i;
    if (bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (std::size_t k = 2; k < length; ++k)
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xBF) return i;
    i += length;
  }
  return std::string_view::npos;
}

void check_utf8(std::string_view text, const std::string& file_name, int first_line) {
  const std::size_t at = invalid_utf8_at(text);
  if (at == std::string_view::npos) return;
  const auto [line, column] = text_position(text, at, first_line);
  throw InputError(file_name, line, column, "not UTF-8 text (byte " + std::to_string(at) + ")");
}

}  // namespace gauntlet::sim
