#include "harness/detectors/name_table.hpp"

#include <functional>

namespace gauntlet::harness {

std::size_t NameTable::locate(std::string_view name, std::uint64_t hash) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id == kEmpty || (s.hash == hash && names_[s.id] == name)) return i;
  }
}

void NameTable::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id == kEmpty) continue;
    std::size_t i = s.hash & mask;
    while (slots_[i].id != kEmpty) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

NameTable::Id NameTable::intern(std::string_view name) {
  if (2 * (names_.size() + 1) > slots_.size()) grow();
  const std::uint64_t hash = std::hash<std::string_view>{}(name);
  Slot& slot = slots_[locate(name, hash)];
  if (slot.id == kEmpty) {
    slot = {hash, static_cast<Id>(names_.size())};
    names_.emplace_back(name);
  }
  return slot.id;
}

std::optional<NameTable::Id> NameTable::find(std::string_view name) const {
  if (slots_.empty()) return std::nullopt;
  const Slot& slot = slots_[locate(name, std::hash<std::string_view>{}(name))];
  if (slot.id == kEmpty) return std::nullopt;
  return slot.id;
}

}  // namespace gauntlet::harness
