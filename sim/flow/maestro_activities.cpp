#include "sim/flow/maestro_activities.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/version.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace gauntlet::sim {
namespace {

using ActivityList = std::list<simgrid::kernel::activity::ActivityImplPtr>;

// The list member sits inside maestro's ActorImpl in 3.32 (after the
// actor's name, host, mailboxes and context; its simcall follows). That
// object is 360 bytes in Debian's 3.32: the scan stays within it, since
// the bytes past its end belong to another heap block.
constexpr std::size_t kScannedBytes = 360;
constexpr std::size_t kWords = kScannedBytes / sizeof(std::uintptr_t);

std::array<std::uintptr_t, kWords> words_of(const void* object) {
  std::array<std::uintptr_t, kWords> words{};
  std::memcpy(words.data(), object, kScannedBytes);
  return words;
}

// libstdc++ lays a list out as {first node, last node, size}; a node as
// {next, previous, value}. A list that grew by one at the back, ending with
// the comm just created, whose last node links back to the list itself.
ActivityList* grown_list(const unsigned char* maestro, const std::array<std::uintptr_t, kWords>& before,
                         const std::array<std::uintptr_t, kWords>& after, const void* created) {
  static_assert(sizeof(ActivityList) == 3 * sizeof(std::uintptr_t), "a list is {next, prev, size}");
  ActivityList* found = nullptr;
  for (std::size_t w = 0; w + 2 < kWords; ++w) {
    if (after[w + 2] != before[w + 2] + 1 || after[w + 1] == before[w + 1] || after[w + 1] == 0) continue;
    const auto* last = reinterpret_cast<const std::uintptr_t*>(after[w + 1]);
    const auto header = reinterpret_cast<std::uintptr_t>(maestro + w * sizeof(std::uintptr_t));
    if (last[0] != header || last[2] != reinterpret_cast<std::uintptr_t>(created)) continue;
    if (found != nullptr) return nullptr;  // two candidates: not certain
    found = reinterpret_cast<ActivityList*>(header);
  }
  return found;
}

}  // namespace

MaestroActivities::MaestroActivities() {
#if SIMGRID_VERSION_MAJOR == 3 && SIMGRID_VERSION_MINOR <= 32
  simgrid::s4u::Actor* self = simgrid::s4u::Actor::self();
  if (self == nullptr || self->get_impl() == nullptr) return;
  const auto* maestro = reinterpret_cast<const unsigned char*>(self->get_impl());
  const std::array<std::uintptr_t, kWords> before = words_of(maestro);
  simgrid::s4u::CommPtr probe = simgrid::s4u::Comm::sendto_init();  // recorded, never started
  const std::array<std::uintptr_t, kWords> after = words_of(maestro);
  maestro_list_ = grown_list(maestro, before, after, probe->get_impl());
  // The probe's entry leaves with the probe (held, then dropped here).
  if (std::optional<Entry> entry = take(*probe)) held_.erase(*entry);
#endif
}

std::optional<MaestroActivities::Entry> MaestroActivities::take(const simgrid::s4u::Activity& activity) {
  if (maestro_list_ == nullptr || maestro_list_->empty() || maestro_list_->back().get() != activity.get_impl())
    return std::nullopt;
  held_.splice(held_.end(), *maestro_list_, std::prev(maestro_list_->end()));
  return std::prev(held_.end());
}

void MaestroActivities::retire(Entry entry) { retired_.splice(retired_.end(), held_, entry); }

}  // namespace gauntlet::sim
