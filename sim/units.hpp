#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gauntlet::sim {

// Parses a byte size: "2GB", "64MB", "512KiB", "1000B". Decimal units (KB MB
// GB TB) are powers of 1000, binary ones (KiB MiB GiB TiB) powers of 1024.
std::optional<std::uint64_t> parse_bytes(std::string_view text, std::string* error = nullptr);

}  // namespace gauntlet::sim
