#include "sim/rfc3339.hpp"

#include <cstdint>

namespace gauntlet::sim {
namespace {

// Reads `count` ASCII digits at text[at]; nullopt when any is not a digit.
std::optional<int> digits(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

bool is_leap(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
}

// Days from 1970-01-01 to the given proleptic Gregorian date.
std::int64_t days_from_civil(int year, int month, int day) {
  const int y = month <= 2 ? year - 1 : year;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int year_of_era = y - era * 400;
  const int day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return std::int64_t{era} * 146097 + day_of_era - 719468;
}

bool separator_at(std::string_view text, std::size_t at, char expected) {
  return at < text.size() && text[at] == expected;
}

}  // namespace

std::optional<double> parse_rfc3339(std::string_view text) {
  // 2023-11-14T22:13:55 is 19 characters; a fraction and a zone add at most 1 + 9 + 6.
  if (text.size() < 20 || text.size() > 19 + 1 + kMaxFractionDigits + 6) return std::nullopt;
  const auto year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
  const auto hour = digits(text, 11, 2), minute = digits(text, 14, 2), second = digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  const char t = text[10];
  if (!separator_at(text, 4, '-') || !separator_at(text, 7, '-') || (t != 'T' && t != 't' && t != ' ') ||
      !separator_at(text, 13, ':') || !separator_at(text, 16, ':'))
    return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > days_in_month(*year, *month) || *hour > 23 || *minute > 59 ||
      *second > 60)
    return std::nullopt;
  double fraction = 0;
  std::size_t at = 19;
  if (separator_at(text, at, '.')) {
    ++at;
    const std::size_t first = at;
    std::int64_t numerator = 0, denominator = 1;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9' && at - first < kMaxFractionDigits) {
      numerator = numerator * 10 + (text[at] - '0');
      denominator *= 10;
      ++at;
    }
    if (at == first) return std::nullopt;
    // Both exact, so the quotient is the fraction correctly rounded.
    fraction = static_cast<double>(numerator) / static_cast<double>(denominator);
  }
  int offset_s = 0;
  const std::string_view zone = text.substr(at);
  if (zone == "Z" || zone == "z") {
    offset_s = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    const auto zone_hours = digits(zone, 1, 2), zone_minutes = digits(zone, 4, 2);
    if (!zone_hours || !zone_minutes || *zone_hours > 23 || *zone_minutes > 59) return std::nullopt;
    offset_s = (zone[0] == '-' ? -1 : 1) * (*zone_hours * 3600 + *zone_minutes * 60);
  } else {
    return std::nullopt;
  }
  const std::int64_t seconds =
      days_from_civil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 + *second - offset_s;
  return static_cast<double>(seconds) + fraction;
}

}  // namespace gauntlet::sim
