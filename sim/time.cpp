#include "sim/time.hpp"

#include <array>
#include <cctype>
#include <climits>
#include <charconv>
#include <cmath>
#include <utility>

namespace gauntlet::sim {
namespace {

struct Unit {
  std::string_view suffix;
  Nanos scale;
};
// Longest suffixes first so "ms" is not read as "m" + garbage.
constexpr std::array<Unit, 7> kUnits{{{"ns", kNanosecond},
                                      {"us", kMicrosecond},
                                      {"ms", kMillisecond},
                                      {"s", kSecond},
                                      {"m", kMinute},
                                      {"h", kHour},
                                      {"d", kDay}}};

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

}  // namespace

std::optional<Nanos> parse_duration(std::string_view text, std::string* error) {
  std::string quoted = "'" + std::string(text) + "'";
  std::size_t split = text.size();
  while (split > 0 && std::isalpha(static_cast<unsigned char>(text[split - 1]))) --split;
  std::string_view number = text.substr(0, split);
  std::string_view suffix = text.substr(split);
  if (number.empty()) {
    fail(error, "bad duration " + quoted + ": expected a number followed by a unit (ns us ms s m h d)");
    return std::nullopt;
  }
  const Unit* unit = nullptr;
  for (const Unit& u : kUnits)
    if (u.suffix == suffix) unit = &u;
  if (!unit) {
    fail(error, "bad duration " + quoted + ": unit must be one of ns us ms s m h d");
    return std::nullopt;
  }
  // Integer part and fraction are parsed separately so "0.1s" is exact.
  std::string_view integral = number, fraction;
  if (auto dot = number.find('.'); dot != std::string_view::npos) {
    integral = number.substr(0, dot);
    fraction = number.substr(dot + 1);
  }
  auto digits_only = [](std::string_view s) {
    for (char c : s)
      if (c < '0' || c > '9') return false;
    return true;
  };
  if ((integral.empty() && fraction.empty()) || !digits_only(integral) || !digits_only(fraction)) {
    fail(error, "bad duration " + quoted + ": expected a non-negative number before the unit");
    return std::nullopt;
  }
  Nanos whole = 0;
  if (!integral.empty()) {
    auto [ptr, ec] = std::from_chars(integral.data(), integral.data() + integral.size(), whole);
    if (ec != std::errc() || whole > kMaxDuration / unit->scale) {
      fail(error, "bad duration " + quoted + ": longer than the limit of " + format_duration(kMaxDuration));
      return std::nullopt;
    }
  }
  Nanos value = whole * unit->scale;
  Nanos place = unit->scale;
  for (char c : fraction) {
    if (place % 10 != 0) {
      if (c != '0') {
        fail(error, "bad duration " + quoted + ": finer than one nanosecond");
        return std::nullopt;
      }
      continue;
    }
    place /= 10;
    value += (c - '0') * place;  // below one unit of the whole part: cannot overflow
  }
  if (value > kMaxDuration) {
    fail(error, "bad duration " + quoted + ": longer than the limit of " + format_duration(kMaxDuration));
    return std::nullopt;
  }
  return value;
}

std::string format_duration(Nanos value) {
  if (value == 0) return "0s";
  for (auto it = kUnits.rbegin(); it != kUnits.rend(); ++it)
    if (value % it->scale == 0) return std::to_string(value / it->scale) + std::string(it->suffix);
  return std::to_string(value) + "ns";
}

Nanos from_seconds(double seconds) {
  const double ns = seconds * 1e9;
  // Out of range (or NaN) would be undefined behaviour in llround: clamp.
  if (!(ns < 9.2e18)) return ns > 0 ? INT64_MAX : 0;
  if (!(ns > -9.2e18)) return INT64_MIN;
  return static_cast<Nanos>(std::llround(ns));
}

}  // namespace gauntlet::sim
