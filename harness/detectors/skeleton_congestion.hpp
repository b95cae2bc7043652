#pragma once
// Congestion evidence for the skeleton prober. A probe that comes back, but
// later than its own best by more than a margin, waited somewhere; the
// switch ports' queues (PortCounters.queue_depth, the switch queue state
// SkeletonHunter reads to rule congestion in or out) say whether that was a
// fabric link's queue. A stale flow table delays probes as much with every
// queue empty (the seed case: 16 -> 120 us, no queue growth), so queue state
// is what tells the two apart.
#include <map>
#include <string>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

// The latest queue of every switch port, and the least it held while it
// carried traffic.
class LinkQueues {
 public:
  explicit LinkQueues(const sim::Topology* topology) : topology_(topology) {}
  void add(const telemetry::PortCounters& port);
  // How much longer a packet crossing `link` waits in its queue now than
  // when that queue held least, in the direction where that is longer (a
  // ring's traffic may cross a link one way only; a probe's ping or its
  // reply meets that queue).
  sim::Nanos added_wait(int link) const;
  // The job's traffic moved (a new skeleton): the least queue each port
  // holds is the new traffic's, measured afresh from what it holds now.
  void forget_floors();

 private:
  struct Port {
    double now = 0;     // bytes queued, the latest sample
    double floor = -1;  // fewest bytes queued while carrying traffic; -1: none seen
  };
  const sim::Topology* topology_;
  std::map<std::pair<int, bool>, Port> ports_;  // link, upward
};

// Fabric links that inflated probes share and whose queues grew: for each
// fabric link on the known path of at least `min_probes` inflated probes,
// kept if its queue makes a packet wait more than `margin` longer and most probes
// crossing it were inflated. Score: share of its probes inflated x share of
// the inflated probes crossing it, best first (ties by name). When two or
// more kept links hang off one spine with alike queues (the second longest
// at least 2/3 of the longest), that spine comes first, its links after it:
// a congested switch congests every port that carries traffic.
std::vector<Suspect> rank_congested_links(const sim::Topology& topology,
                                          const std::vector<const telemetry::ProbeResult*>& inflated,
                                          const std::vector<const telemetry::ProbeResult*>& clear,
                                          const LinkQueues& queues, sim::Nanos margin, int min_probes);

}  // namespace gauntlet::harness
