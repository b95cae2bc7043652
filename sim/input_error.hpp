#pragma once
// Bad input, found wherever it is found (the loader, or a child process that
// reads a parameter only it uses): reported as "file:line:col: message",
// exit code 2, nothing written; line 0 means the file as a whole ("file:
// message"). Only input the user wrote raises it; an
// argument a library rejects is a bug (exit 1), never bad input.
#include <stdexcept>
#include <string>

namespace gauntlet::sim {

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
  int line() const { return line_; }      // 1-based; 0 when the file itself is the problem
  int column() const { return column_; }  // 1-based
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string message_;
};

}  // namespace gauntlet::sim
