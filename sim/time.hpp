#pragma once
// Simulated time is an integer count of nanoseconds: exact, comparable and
// reproducible, unlike floating-point seconds.
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

// Parses "<number><unit>" with unit one of ns us ms s m h d ("1.5s", "30m",
// "104us"). Returns nullopt and sets *error on anything else, including a
// missing unit, a negative value or a value that is not a whole number of ns.
std::optional<Nanos> parse_duration(std::string_view text, std::string* error = nullptr);

// Shortest exact text in the largest unit that divides the value; parses back
// to the same value.
std::string format_duration(Nanos value);

constexpr double to_seconds(Nanos t) { return static_cast<double>(t) / 1e9; }
Nanos from_seconds(double seconds);  // rounded to the nearest nanosecond

}  // namespace gauntlet::sim
