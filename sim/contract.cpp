#include "sim/contract.hpp"

#include <string_view>

namespace gauntlet::sim {
namespace {

// __FILE__ is absolute in out-of-tree builds; messages name the file as the
// source tree does. This file's own path tells where the tree starts.
std::string tree_relative(std::string_view file) {
  constexpr std::string_view kSelf = __FILE__;
  constexpr std::string_view kTail = "sim/contract.cpp";
  if (kSelf.ends_with(kTail)) {
    const std::string_view root = kSelf.substr(0, kSelf.size() - kTail.size());
    if (file.starts_with(root)) file.remove_prefix(root.size());
  }
  return std::string(file);
}

std::string describe(const std::string& file, int line, const std::string& expression, const std::string& detail) {
  std::string text = file + ":" + std::to_string(line) + ": internal error: invariant '" + expression + "' broken";
  if (!detail.empty()) text += " (" + detail + ")";
  return text;
}

}  // namespace

ContractViolation::ContractViolation(std::string file, int line, std::string expression, std::string detail)
    : std::logic_error(describe(file, line, expression, detail)),
      file_(std::move(file)),
      line_(line),
      expression_(std::move(expression)),
      detail_(std::move(detail)) {}

void contract_failed(const char* file, int line, const char* expression, const std::string& detail) {
  throw ContractViolation(tree_relative(file), line, expression, detail);
}

}  // namespace gauntlet::sim
