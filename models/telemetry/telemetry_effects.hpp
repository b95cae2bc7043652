#pragma once
// What faults do to the telemetry a cluster emits, beyond the data path the
// fault scheduler changes: which GPUs run at a lowered clock, which hosts'
// CPUs are contended, how much background traffic shares a link, whose
// monitoring agent is silent and whose clock is skewed. Plain windows in the
// models' vocabulary, filled from fault specs by injectors/sim and read by the
// samplers as pure functions of time, so a sample never depends on when it
// was computed. Windows are half-open: active at start, not at end.
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "models/telemetry/gpu_errors.hpp"
#include "sim/network_engine.hpp"
#include "sim/time.hpp"

namespace gauntlet::models {

class TelemetryEffects {
 public:
  // `reasons`: the NVML throttle reason bits the throttle's cause sets.
  void add_gpu_throttle(int host, int gpu, sim::Nanos start, sim::Nanos end, double slowdown,
                        std::uint32_t reasons = 0);
  // The driver logs XID `code` for the GPU at `at` (the gauge keeps it).
  void add_xid(int host, int gpu, sim::Nanos at, std::uint32_t code);
  // A fault's mark on a GPU's error fields at event.at (ECC counts, and its
  // XID, which the gauge keeps as add_xid's).
  void add_gpu_error(int host, int gpu, const GpuErrorEvent& event);
  void add_cpu_contention(int host, sim::Nanos start, sim::Nanos end, double slowdown);
  void add_background_load(sim::LinkId link, sim::Nanos start, sim::Nanos end, double load);
  void add_link_loss(sim::LinkId link, sim::Nanos start, sim::Nanos end, double rate);
  void add_agent_hang(int host, sim::Nanos start, sim::Nanos end);
  // The GPU stops answering DCGM over [start, end): no sample of it then.
  void add_gpu_silence(int host, int gpu, sim::Nanos start, sim::Nanos end);
  void add_clock_skew(int host, sim::Nanos start, sim::Nanos end, sim::Nanos offset);

  // Overlapping windows compose as the fault scheduler composes them:
  // speed factors multiply, background shares multiply their free capacity.
  double clock_factor(int host, int gpu, sim::Nanos at) const;             // 1 = nominal clock
  std::uint32_t throttle_reasons(int host, int gpu, sim::Nanos at) const;  // the throttles' bits, or-ed
  std::uint32_t last_xid(int host, int gpu, sim::Nanos at) const;          // 0: none logged by then
  double cpu_factor(int host, sim::Nanos at) const;                        // share of the CPU the job gets
  double background_load(sim::LinkId link, sim::Nanos at) const;           // fraction of capacity, < 1
  double link_loss(sim::LinkId link, sim::Nanos at) const;                 // per-packet loss probability, each way
  // The GPU's error counts in (after, until], summed; row_remap_failure
  // holds from its event on.
  GpuErrorEvent gpu_errors(int host, int gpu, sim::Nanos after, sim::Nanos until) const;
  bool any_gpu_errors() const { return !gpu_errors_.empty(); }
  bool agent_hung(int host, sim::Nanos at) const;
  bool gpu_silent(int host, int gpu, sim::Nanos at) const;
  struct GpuWindow {
    int host = 0, gpu = 0;
    sim::Nanos start = 0, end = 0;
  };
  std::vector<GpuWindow> gpu_silences() const;  // every silence window
  bool any_gpu_silence() const { return !silence_.empty(); }
  sim::Nanos clock_offset(int host, sim::Nanos at) const;

  const std::vector<sim::LinkId>& loaded_links() const { return loaded_links_; }
  const std::vector<sim::LinkId>& lossy_links() const { return lossy_links_; }
  // The first window edge strictly after `now`, or the far future: of any
  // window, of a host's or GPU's only, of a link's only. A healthy fleet's
  // month holds hundreds of thousands of edges, each touching one
  // component, so readers ask about the kind they read.
  sim::Nanos next_change(sim::Nanos now) const;
  sim::Nanos next_host_change(sim::Nanos now) const;
  sim::Nanos next_link_change(sim::Nanos now) const;
  // The hosts with an edge of theirs (or of one of their GPUs) in
  // (after, until], sorted and unique.
  std::vector<int> hosts_changed(sim::Nanos after, sim::Nanos until) const;
  // The edges of `link`'s background and loss windows strictly inside
  // (from, to), sorted.
  std::vector<sim::Nanos> link_change_times(sim::LinkId link, sim::Nanos from, sim::Nanos to) const;

 private:
  struct Window {
    sim::Nanos start = 0;
    sim::Nanos end = 0;
    double value = 0;
    std::uint32_t bits = 0;
    bool covers(sim::Nanos at) const { return start <= at && at < end; }
  };
  struct Edge {
    sim::Nanos at = 0;
    int owner = 0;  // the host, or the link
    bool operator<(const Edge& o) const { return at < o.at || (at == o.at && owner < o.owner); }
  };
  // Edges are appended unsorted while windows are added and sorted on the
  // first query (a simulation adds every window before it samples).
  struct Edges {
    void add(sim::Nanos at, int owner);
    const std::vector<Edge>& sorted() const;
    sim::Nanos next_after(sim::Nanos now) const;

   private:
    mutable std::vector<Edge> edges_;
    mutable bool sorted_ = true;
  };
  void add_host_window(std::map<std::pair<int, int>, std::vector<Window>>& into, std::pair<int, int> key, Window w);
  void add_link_window(std::map<std::pair<int, int>, std::vector<Window>>& into, sim::LinkId link, Window w);
  static double product_of_complements(const std::vector<Window>* windows, sim::Nanos at);
  static const std::vector<Window>* find(const std::map<std::pair<int, int>, std::vector<Window>>& in,
                                         std::pair<int, int> key);

  std::map<std::pair<int, int>, std::vector<Window>> throttle_;                            // (host, gpu)
  std::map<std::pair<int, int>, std::vector<GpuErrorEvent>> gpu_errors_;                   // (host, gpu)
  std::map<std::pair<int, int>, std::vector<Window>> contention_;                          // (host, 0)
  std::map<std::pair<int, int>, std::vector<Window>> background_;                          // (link, 0)
  std::map<std::pair<int, int>, std::vector<Window>> loss_;                                // (link, 0)
  std::map<std::pair<int, int>, std::vector<Window>> hang_;                                // (host, 0)
  std::map<std::pair<int, int>, std::vector<Window>> silence_;                             // (host, gpu)
  std::map<std::pair<int, int>, std::vector<Window>> skew_;                                // (host, 0)
  std::map<std::pair<int, int>, std::vector<std::pair<sim::Nanos, std::uint32_t>>> xids_;  // (host, gpu): sorted
  std::vector<sim::LinkId> loaded_links_;                                                  // in first-added order
  std::vector<sim::LinkId> lossy_links_;
  std::set<sim::LinkId> loaded_set_, lossy_set_;
  Edges host_edges_, link_edges_;
};

}  // namespace gauntlet::models
