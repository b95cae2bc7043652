#pragma once
// Simulated time is an integer count of nanoseconds: exact, comparable and
// reproducible, unlike floating-point seconds.
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gauntlet::sim {

using Nanos = std::int64_t;

inline constexpr Nanos kNanosecond = 1;
inline constexpr Nanos kMicrosecond = 1'000;
inline constexpr Nanos kMillisecond = 1'000'000;
inline constexpr Nanos kSecond = 1'000'000'000;
inline constexpr Nanos kMinute = 60 * kSecond;
inline constexpr Nanos kHour = 60 * kMinute;
inline constexpr Nanos kDay = 24 * kHour;

// The longest duration a file may give (about 27 years): far beyond any
// run, and small enough that sums of a few such values stay in range.
inline constexpr Nanos kMaxDuration = 10'000 * kDay;

// Parses "<number><unit>" with unit one of ns us ms s m h d ("1.5s", "30m",
// "104us"). Returns nullopt and sets *error on anything else, including a
// missing unit, a negative value, a value that is not a whole number of ns or
// one above kMaxDuration.
std::optional<Nanos> parse_duration(std::string_view text, std::string* error = nullptr);

// Shortest exact text in the largest unit that divides the value; parses back
// to the same value.
std::string format_duration(Nanos value);

// a + b, clamped to the range of Nanos instead of wrapping around.
constexpr Nanos saturating_add(Nanos a, Nanos b) {
  Nanos sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return a < 0 ? INT64_MIN : INT64_MAX;
  return sum;
}

constexpr double to_seconds(Nanos t) { return static_cast<double>(t) / 1e9; }
Nanos from_seconds(double seconds);  // rounded to the nearest nanosecond, clamped to the range

}  // namespace gauntlet::sim
