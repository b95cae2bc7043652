#pragma once
// The readers of user input that fuzz/ feeds arbitrary bytes, by name. A
// reader may only return or throw its documented error, which is swallowed
// here; anything else (another exception, a crash, a sanitizer report, a
// hang) is a bug. The libFuzzer targets and fuzz/readers_test.cpp, which
// replays the inputs kept in fuzz/regressions/READER/, call them alike.
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::fuzz {

struct Reader {
  std::string name;  // scenario_loader, chaos_plan, ...: fuzz/regressions/<name>/
  void (*read)(std::string_view bytes);
};

const std::vector<Reader>& readers();
// The reader called `name`; throws std::invalid_argument for an unknown one.
const Reader& reader(std::string_view name);

}  // namespace gauntlet::fuzz
