#pragma once
// How long a probing detector takes to see a faulty component: a sampling
// model of its rounds, faster than simulating them and checked against
// simulation (tests/plan_probes_simulated_test.cpp).
//
// A detector probes in rounds of T seconds; a source RNIC runs its probes of
// a round one ping train (d seconds) after another, so a round has slots
// 0, d, 2d, ... A probe through a component losing packets at rate p fails
// when any ping of its train or any reply is lost (models::ProbeService: a
// link is crossed by the ping and its reply, a flow table once a round trip):
//   q = 1 - (1 - p)^(2 x pings) on a link, 1 - (1 - p)^pings on a flow table.
// In a slot, component c is crossed by m probes of the detector's fixed plan
// (`direct` of them enough alone to raise an alert; a lone failure of the
// others only when its confirming probe fails too, as a skeleton overlay
// probe whose ends other probes clear is confirmed by an underlay probe
// between them, while two failures are enough), and by the slot's random
// draws (pingmesh's inter-ToR sample), each crossing it with probability
// h(c). The slot misses the fault with probability
//   (1 - q)^m (1 + (m - direct) q) x (1 - q h)^draws.
// Where another link is crossed by exactly the same probes (`tied`), the
// skeleton detector probes the two apart before it alerts: `tie_s` more.
// A fault starts at a uniform time; the first slot after it whose probes
// see it is read at the next round boundary after its train ends, plus the
// detector's confirmation (`confirm_s`). The mean over onsets is exact for
// this model: a recursion over the slots of the cycle (detection_model.cpp).
#include <string>
#include <vector>

#include "sim/topology.hpp"

namespace gauntlet::harness {

enum class FaultSite { fabric_link, host_link, flow_table };

struct FaultClass {
  FaultSite site = FaultSite::fabric_link;
  double loss = 0.01;  // packet loss rate per crossing (1: every probe through it fails)
};

const char* fault_site_name(FaultSite site);
std::string fault_class_name(const FaultClass& fault);

// Probability that one probe of `pings` pings through the faulty component fails.
double train_failure_probability(const FaultClass& fault, int pings);

// One strategy's probing at given settings, as the model sees it. Components
// are numbered as in probe_list.hpp (links, then one flow table per endpoint).
struct SlotProbes {
  int slot = 0;  // in the cycle: round x slots_per_round + slot in the round
  int probes = 0;
  int direct = 0;
  bool tied = false;  // another link is crossed by the same probes of the round
};
struct ProbeSchedule {
  double round_seconds = 30;
  double slot_seconds = 2;  // one ping train
  int slots_per_round = 1;
  int cycle_rounds = 1;
  std::vector<std::vector<SlotProbes>> fixed;  // per component, by slot
  std::vector<double> draws_per_slot;          // over the cycle's slots (empty: no draws)
  std::vector<int> draw_slots;                 // the slots with draws, in order
  std::vector<double> draw_share;              // per component: chance one draw crosses it
  double confirm_s = 0;                        // the detector's confirmation after it reads the round
  double tie_s = 0;                            // the detector's time to probe tied links apart
  double slot_time(int slot) const {
    return (slot / slots_per_round) * round_seconds + (slot % slots_per_round) * slot_seconds;
  }
  double cycle_seconds() const { return cycle_rounds * round_seconds; }
};

// A chance to see the fault: at `time_s` into the cycle, with `probability`,
// read `read_s` after it.
struct Opportunity {
  double time_s = 0;
  double probability = 0;
  double read_s = 0;
};
// Mean time from a uniformly timed onset to the read of the first
// opportunity that sees it; infinity if none ever can. `chances` by time.
double mean_detection_s(const std::vector<Opportunity>& chances, double cycle_seconds);

struct ClassPrediction {
  FaultClass fault;
  int components = 0;    // of its site in the cluster
  int never_probed = 0;  // of them, crossed by no probe: never detected
  // Over the probed components, each one's mean detection latency: their mean and extremes.
  double mean_s = 0;
  double best_s = 0;
  double worst_s = 0;
};

// The mean detection latency of a fault on `component` (infinity when no probe crosses it).
double predicted_latency_s(const ProbeSchedule& schedule, int component, const FaultClass& fault, int pings);
ClassPrediction predict_class(const sim::Topology& t, const ProbeSchedule& schedule, const FaultClass& fault,
                              int pings);
// The components of a site, in the numbering above.
std::vector<int> site_components(const sim::Topology& t, FaultSite site);

}  // namespace gauntlet::harness
