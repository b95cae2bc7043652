#include "sim/units.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace gauntlet::sim {

std::optional<std::uint64_t> parse_bytes(std::string_view text, std::string* error) {
  struct Unit {
    std::string_view suffix;
    double scale;
  };
  static constexpr std::array<Unit, 9> kUnits{{{"TiB", 1099511627776.0},
                                               {"GiB", 1073741824.0},
                                               {"MiB", 1048576.0},
                                               {"KiB", 1024.0},
                                               {"TB", 1e12},
                                               {"GB", 1e9},
                                               {"MB", 1e6},
                                               {"KB", 1e3},
                                               {"B", 1.0}}};
  for (const Unit& u : kUnits) {
    if (text.size() <= u.suffix.size() || !text.ends_with(u.suffix)) continue;
    std::string_view number = text.substr(0, text.size() - u.suffix.size());
    double value = 0;
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec == std::errc() && ptr == number.data() + number.size() && value >= 0 && std::isfinite(value))
      return static_cast<std::uint64_t>(std::llround(value * u.scale));
    break;
  }
  if (error)
    *error =
        "bad size '" + std::string(text) + "': expected a number followed by B, KB, MB, GB, TB, KiB, MiB, GiB or TiB";
  return std::nullopt;
}

}  // namespace gauntlet::sim
