#pragma once
// Where byte `offset` of a text falls, as the 1-based line and column an
// InputError reports (the text's first line numbered `first_line`).
#include <algorithm>
#include <string_view>
#include <utility>

namespace gauntlet::sim {

inline std::pair<int, int> text_position(std::string_view text, std::size_t offset, int first_line = 1) {
  offset = std::min(offset, text.size());
  int line = first_line, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace gauntlet::sim
