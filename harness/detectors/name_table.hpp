#pragma once
// Names interned to dense ids (0, 1, 2, ... in order of first sight), for
// detectors that meet the same component names in every record of a large
// stream. An open-addressed table with each name's hash beside its slot, so
// a lookup reads one slot and, for a hit, one name: probe rounds intern a
// million names a round against tens of thousands known, and a node-based
// map spent most of that time following pointers.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::harness {

class NameTable {
 public:
  using Id = std::uint32_t;

  // The name's id, added when new.
  Id intern(std::string_view name);
  std::optional<Id> find(std::string_view name) const;
  const std::string& name(Id id) const { return names_[id]; }
  std::size_t size() const { return names_.size(); }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    Id id = kEmpty;
  };
  static constexpr Id kEmpty = ~Id{0};

  // The slot holding `name`, or the empty one where it would go.
  std::size_t locate(std::string_view name, std::uint64_t hash) const;
  void grow();

  std::vector<Slot> slots_;  // a power of two long, at most half full
  std::vector<std::string> names_;
};

}  // namespace gauntlet::harness
