#pragma once
// `falcon` (after Falcon-Detect): watch the job's iteration time with
// Bayesian online changepoint detection; when it slows down, profile the
// workers as a group to find who is slow.
//
// Series: synchronous training makes every worker's iteration last as long as
// the slowest one, so each iteration contributes one observation, the longest
// worker duration, divided by the first iteration's so the model's prior is
// scale-free. A steady run feeds at most `steady_copies` copies of its
// iteration: enough to confirm a change, after which the state just holds.
//
// Guard against spurious changepoints: a changepoint is accepted only when
// its new segment has lasted min_gap iterations, it lies at least min_gap
// iterations after the previous accepted one, and the segment means before
// and after differ by at least min_shift (relative). Each accepted slowdown
// raises one fail_slow alert; accepted speed-ups (recoveries) only move the
// baseline.
//
// Localization: each worker's compute time after the change, relative to its
// own compute before it, is compared with the median of the same ratio over
// its peers. The telemetry does not say which workers form a group (pipeline
// stages differ in compute), so a worker is compared with its own past rather
// than with its peers' absolute times. Workers at or above compute_ratio
// (allowing three standard errors of measurement noise) are suspects, best
// first, scored by that ratio. When no compute stands out the
// slowdown is communication: the same test on each worker's time inside
// collectives (threshold comm_ratio); the suspect list stays empty when
// nothing stands out.
//
// Validation (validate=1): instead of alerting on the profile alone, falcon
// asks for benchmarks that pause training, a GEMM on every GPU and an
// allreduce on every data-parallel communicator, and alerts when they
// report (or after validation_timeout without them, on the profile):
//  * a GEMM above gemm_ratio x the median: compute; those GPUs (fail_slow);
//  * else an allreduce above allreduce_ratio x the median: communication
//    (network); the profile's suspects in the slow communicators first,
//    then their other members;
//  * else the profile stands, checked against the GEMMs: a compute suspect
//    whose GEMM accounts for at least half of its profiled slowdown stays
//    (a GPU slow below the GEMM threshold); one whose GEMM is normal is not
//    the GPU, and its host's CPU is named instead (h<N>.cpu: data loading
//    and kernel launch starved, as under CPU contention);
//  * when compute grew for every worker alike (nobody stands out from its
//    peers), each GEMM is compared with the GPU's own healthy one, measured
//    in one GEMM round (one short pause) once the job runs steadily, with
//    the same rule.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/detectors/bocd.hpp"
#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"

namespace gauntlet::harness {

struct FalconConfig {
  double hazard = 0.005;
  std::uint64_t min_gap = 10;
  double min_shift = 0.1;
  double compute_ratio = 1.2;
  double comm_ratio = 1.2;
  std::size_t max_run = 512;
  std::size_t steady_copies = 64;
  bool validate = true;
  double gemm_ratio = 2.0;
  double allreduce_ratio = 1.1;
  sim::Nanos validation_timeout = 5 * sim::kMinute;
  std::string name = "falcon";  // whose benchmark results to read
};

class FalconDetector : public Detector {
 public:
  static constexpr const char* kName = "falcon";
  explicit FalconDetector(FalconConfig config);
  // Its name, summary, parameters and how to make one: its registry entry.
  static DetectorInfo info();
  static FalconConfig config_from(const DetectorParams& params);

  void observe(const telemetry::Batch& batch) override;
  bool reads_heartbeats() const override { return false; }
  bool reads_samples() const override { return false; }

  // Iterations fed to the changepoint model so far (steady runs count at most
  // steady_copies each).
  std::uint64_t observations() const { return bocd_.observations(); }
  std::uint64_t accepted_changepoints() const { return accepted_; }
  std::uint64_t validations_requested() const { return validations_; }

 private:
  struct Span {  // a worker's per-iteration times over iterations first..last
    std::uint64_t first = 0, last = 0;
    double compute_ns = 0, comm_ns = 0;
  };
  struct Worker {
    std::string id;
    std::deque<Span> history;
    double comm_open_ns = 0;  // collective time since the worker's last iteration record
  };
  struct PendingIteration {
    sim::Nanos duration_ns = 0;
    sim::Nanos end_ns = 0;
    std::size_t reports = 0;
  };
  struct Observation {
    std::uint64_t index = 0;  // position in the model's series
    std::uint64_t iteration = 0;
    double value = 0;
    sim::Nanos end_ns = 0;
  };

  struct Verdict {
    std::vector<Suspect> suspects;
    bool compute = false;         // compute stood out (else communication, or nothing)
    std::vector<Suspect> slowed;  // when nobody stands out: compute grown against its own past
  };
  struct Validation {
    sim::Nanos requested_ns = 0;
    Verdict profiled;
    std::map<std::string, double> gemm;       // worker -> ns
    std::map<std::string, double> allreduce;  // communicator -> ns
    bool have_gemm = false, have_allreduce = false;
  };

  Worker& worker(const std::string& id);
  void on_collective(const telemetry::CollectiveRecord& c);
  void on_benchmark(const telemetry::BenchmarkResult& b);
  void conclude(sim::Nanos now);
  void add_span(Worker& w, Span span);
  void on_iteration(const telemetry::IterationRecord& r);
  void on_steady(const telemetry::SteadyRun& run);
  void finalize_before(std::uint64_t iteration);
  void feed(std::uint64_t iteration, sim::Nanos duration_ns, sim::Nanos end_ns);
  void consider(std::uint64_t changepoint);
  Verdict localize(std::uint64_t from_iteration, std::uint64_t to_iteration, std::uint64_t baseline_from) const;

  FalconConfig config_;
  Bocd bocd_;
  std::vector<Worker> workers_;
  std::map<std::string, std::size_t> worker_index_;
  std::map<std::uint64_t, PendingIteration> pending_;
  std::optional<std::uint64_t> last_finalized_;
  bool stable_ = false;  // a whole iteration has been seen, so the worker count is known
  double reference_ns_ = 0;
  std::deque<Observation> series_;          // the latest observations, enough to cover the model's runs
  std::optional<Observation> accepted_at_;  // first observation after the last accepted changepoint
  std::uint64_t accepted_ = 0;
  std::map<std::string, std::set<std::string>> communicators_;  // data-parallel communicator -> its workers
  std::optional<Validation> validation_;
  std::uint64_t validations_ = 0;
  bool calibration_requested_ = false, calibrating_ = false;
  std::map<std::string, double> gemm_reference_;  // worker -> healthy GEMM ns
};

}  // namespace gauntlet::harness
