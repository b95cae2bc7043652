#pragma once
// The one way a command reads a file a user names (scenario, sweep, suite,
// chaos plan, calibration table, truth and alert records, summaries, rule
// files): only a regular file (a FIFO would block, /dev/zero never ends, a
// symlink counts as what it points to), at most max_bytes of it, and valid
// UTF-8. Anything else is bad input: InputError at file:line:col.
#include <cstddef>
#include <string>
#include <string_view>

namespace gauntlet::sim {

inline constexpr std::size_t kMaxInputFileBytes = 1u << 20;  // 1 MiB; the shipped inputs are far smaller
// Record files (faults.jsonl, alerts.jsonl, Alertmanager payloads): a
// month's run, or a webhook log of some 200,000 alerts, is tens of MiB.
inline constexpr std::size_t kMaxRecordFileBytes = 128u << 20;

// Throws InputError (file:1:1: ...) when the file is missing, not a regular
// file or larger than max_bytes, and at the first byte that is not UTF-8.
std::string read_input_file(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes);

// Throws InputError (file:1:1: ...) unless `path` is a regular file (or a
// link to one), for files too large to read whole that are streamed instead.
void check_regular_file(const std::string& path);

// Where the first byte that breaks UTF-8 (overlong forms, surrogates and
// code points past U+10FFFF included) sits; npos when the text is valid.
std::size_t invalid_utf8_at(std::string_view text);

// Throws InputError at the file:line:col of the first invalid byte.
void check_utf8(std::string_view text, const std::string& file_name, int first_line = 1);

}  // namespace gauntlet::sim
