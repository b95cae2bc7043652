#pragma once
// The traffic skeleton a SkeletonHunter-style prober infers without the
// tenant's parallelism config: the RNIC endpoints of each communication group
// whose traffic repeats every iteration. Its only evidence is what an
// operator reads off the RNICs' flow tables (FlowTableSample, FlowTableRun):
// bytes per entry (sender RNIC -> receiver RNIC) per second. No ranks,
// communicator names or collective records.
//
// Bursts. An entry's consecutive seconds with traffic (a packet's payload,
// 4 KiB, or more) form one burst; its
// onset is the first of them. A flow is periodic when its latest (at least
// min_repeats) onsets fit one period of at least two seconds: onset k lies
// within one sampling interval (the counters' resolution) of the fitted
// onset first + k * period. A one-off transfer or irregular traffic never
// fits. A flow once periodic stays in the skeleton while it keeps bursting;
// silent for stale_after, it ages out (its container stopped or moved).
//
// Groups. Synchronous training makes every flow of one communication group
// burst alike: at the same phase of each iteration, with the same bytes per
// burst (a ring allreduce moves 2(n-1)/n of the gradients over every edge, a
// pipeline boundary the activations of every micro-batch). Periodic flows
// are split by that signature: the same period (within a sampling interval,
// or 2% of it), the same phase within it (onsets within 1.5 intervals of each
// other, modulo the period) and bytes per burst within 25% of each other
// (median of the latest bursts). Each signature's flows are then split into
// connected components over their endpoints, and each component is a group.
// An RNIC may be in several groups (its ring and its pipeline pair). Phase
// alone does not separate them here: a step's pipeline sends leave right
// after the previous step's allreduce, within one sampling interval.
//
// Versions. The skeleton (groups and directed edges) gets a new version
// whenever it changes: new periodic flows (containers started elsewhere, a
// restart on spares) or flows aged out. Age is counted on the evidence's own
// clock (the latest interval any flow was seen in), so a flow ages out when
// others went on bursting without it; while nothing bursts (the job is down,
// or a steady stretch not yet reported) nothing ages and the last skeleton
// stays.
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/network_engine.hpp"
#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

class SkeletonInference {
 public:
  SkeletonInference(const sim::Topology* topology, int min_repeats, sim::Nanos stale_after,
                    sim::Nanos interval = sim::kSecond)
      : topology_(topology),
        min_repeats_(min_repeats),
        stale_after_(stale_after),
        interval_(interval),
        last_sent_(static_cast<std::size_t>(topology->endpoints()), kNeverSent) {}

  // One table's counters for the interval ending at sample.time_ns().
  void add(const telemetry::FlowTableSample& sample);
  // A steady stretch's bursts, repeated (see telemetry.proto).
  void add(const telemetry::FlowTableRun& run);
  // The scheduler stopped a container (ContainerEvent STOP): flows through
  // its RNICs that have not burst since leave at the next refresh instead of
  // aging out. Only a shortcut: without these events the bursts suffice.
  void container_stopped(const telemetry::ContainerEvent& event);

  // Recomputes the skeleton as of `now`; true when its version changed.
  bool refresh(sim::Nanos now);

  // Whether `endpoint`'s traffic moved to a sibling RNIC of its host and it
  // has sent nothing since: a peer it used to send to started receiving from
  // the sibling within a few intervals of its last burst there (NCCL's silent
  // fallback off a dead RNIC, the seed's "the remaining adapter sends far
  // more"). Healthy rings never cross rails, so a sibling reaching the same
  // peer is new.
  bool failed_over(sim::EndpointId endpoint) const;

  int version() const { return version_; }
  // Groups of RNIC endpoints, each sorted; the groups in lexicographic order.
  const std::vector<std::vector<sim::EndpointId>>& groups() const { return groups_; }
  // Directed endpoint pairs (sender, receiver) of the periodic flows.
  const std::set<std::pair<sim::EndpointId, sim::EndpointId>>& edges() const { return edges_; }

 private:
  using Interval = long long;  // sampling interval index: interval i ends at i * interval_
  using FlowKey = std::pair<sim::EndpointId, sim::EndpointId>;
  struct Burst {
    Interval first = 0, last = 0;
    double bytes = 0;
  };
  struct FlowEvidence {
    std::deque<Burst> bursts;  // ordered, the latest kKeptBursts
    Interval last_seen = 0;
    bool member = false;  // periodic at some refresh and not aged out since
    double period = 0;    // in intervals, from the latest fit
    double onset = 0;     // fitted onset of the latest burst, in intervals
    double volume = 0;    // bytes per burst, from the latest fit
    bool changed = true;  // bursts changed since the latest fit
    sim::EndpointId src = -1, dst = -1;
    bool seen = false;  // any interval added yet
  };
  struct Fit {
    double period = 0, onset = 0, volume = 0;
  };
  static constexpr std::size_t kKeptBursts = 16;
  // Less than one RoCE packet's payload in a second is a trickle (a transfer
  // stuck on a dead link creeping on), not a burst of collective traffic.
  static constexpr std::uint64_t kMinBurstBytes = 4096;

  FlowEvidence* evidence_of(const std::string& table, const std::string& peer);
  void add_interval(FlowEvidence& e, Interval interval, double bytes);
  void note_new_flow(const FlowEvidence& e, Interval interval);
  bool fit(const FlowEvidence& e, Fit* out) const;
  int endpoint_of(const std::string& name, bool table);
  void group(const std::vector<std::pair<FlowKey, const FlowEvidence*>>& members,
             std::vector<std::vector<sim::EndpointId>>* groups) const;

  const sim::Topology* topology_;
  int min_repeats_;
  sim::Nanos stale_after_;
  sim::Nanos interval_;
  std::map<FlowKey, FlowEvidence> evidence_;
  std::unordered_map<std::string, int> endpoints_;  // parsed names
  Interval newest_ = 0;                             // the latest interval any flow was seen in
  bool members_changed_ = false;                    // flows joined or left since the latest refresh
  std::map<sim::EndpointId, Interval> stopped_;     // RNIC -> when a container on it last stopped
  // RNIC -> the latest interval it sent in (kNeverSent: none yet), by
  // endpoint: every interval of every burst updates it.
  static constexpr Interval kNeverSent = -1;
  std::vector<Interval> last_sent_;
  std::map<sim::EndpointId, Interval> taken_over_;  // RNIC -> when a sibling took over one of its peers
  int version_ = 0;
  std::vector<std::vector<sim::EndpointId>> groups_;
  std::set<std::pair<sim::EndpointId, sim::EndpointId>> edges_;
};

}  // namespace gauntlet::harness
