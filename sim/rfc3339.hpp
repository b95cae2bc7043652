#pragma once
// The one reader of wall-clock times (score --t0, Alertmanager's startsAt):
// RFC 3339, YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), 'T' also 't' or
// ' ', 'Z' also 'z'. Dates must exist (leap years counted), hours 00-23,
// minutes 00-59, seconds 00-60 (a leap second), offsets within +-23:59, and
// the fraction at most kMaxFractionDigits digits. Hand-written, so its cost
// is linear in the text and bounded by its length check.
#include <cstddef>
#include <optional>
#include <string_view>

namespace gauntlet::sim {

inline constexpr std::size_t kMaxFractionDigits = 9;  // nanoseconds: a finer time is not a real clock's

// Seconds since the Unix epoch; nullopt when the text is not such a time.
std::optional<double> parse_rfc3339(std::string_view text);

}  // namespace gauntlet::sim
