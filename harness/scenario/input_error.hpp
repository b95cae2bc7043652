#pragma once
// Bad input is reported as "file:line:col: message" and makes gauntlet exit
// with code 2 before anything is written.
#include <stdexcept>
#include <string>

namespace gauntlet::harness {

// Line 0 means the problem is the file as a whole (it cannot be read), and
// the message is "file: message".
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, int column, const std::string& message)
      : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) + ":" + std::to_string(column) : "") + ": " +
                           message),
        file_(std::move(file)),
        line_(line),
        column_(column),
        message_(message) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }      // 1-based; 0 for the whole file
  int column() const { return column_; }  // 1-based
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string message_;
};

}  // namespace gauntlet::harness
