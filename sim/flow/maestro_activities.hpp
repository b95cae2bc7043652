#pragma once
// SimGrid 3.32, the version Debian 12 ships, records every activity that
// maestro starts (each host-to-host comm) in one std::list of maestro's and,
// when a comm finishes, takes it out with list::remove: a scan of every comm
// in flight, so the cost per completed transfer grows with the transfers in
// flight and a 65,536-GPU ring allreduce costs their square. SimGrid 3.33
// keeps that record in a std::set (upstream commit 5f8fc2c, "Replaced
// std::list by std::set to keep track of activities").
//
// With 3.32, the flow engine moves each comm's entry out of that list as
// soon as the comm exists and holds the reference itself; SimGrid's remove
// then scans a list that stays empty. Nothing else reads the list while the
// engine lives (maestro is never suspended nor killed), and which list holds
// the reference changes no simulated outcome. SimGrid's headers do not expose
// the list, so it is found by watching which list of maestro's grows by one,
// ending with the new comm, when a comm is created; if none does (another
// SimGrid), the holder does nothing and SimGrid keeps its entries.
#include <simgrid/forward.h>

#include <list>
#include <optional>

namespace gauntlet::sim {

class MaestroActivities {
 public:
  using Entry = std::list<simgrid::kernel::activity::ActivityImplPtr>::iterator;

  // Must run in maestro once the SimGrid engine exists.
  MaestroActivities();
  MaestroActivities(const MaestroActivities&) = delete;
  MaestroActivities& operator=(const MaestroActivities&) = delete;

  // Whether maestro's list was found (then every comm's entry is held here).
  bool active() const { return maestro_list_ != nullptr; }

  // Takes the entry SimGrid has just recorded for this newly created comm;
  // nothing if the holder is inactive or the entry is not the list's last.
  std::optional<Entry> take(const simgrid::s4u::Activity& activity);
  // The comm has finished: its reference goes at the next release(), once
  // SimGrid is done handling it.
  void retire(Entry entry);
  // Drops retired references; call between SimGrid runs only.
  void release() { retired_.clear(); }

 private:
  std::list<simgrid::kernel::activity::ActivityImplPtr>* maestro_list_ = nullptr;
  std::list<simgrid::kernel::activity::ActivityImplPtr> held_;
  std::list<simgrid::kernel::activity::ActivityImplPtr> retired_;
};

}  // namespace gauntlet::sim
