#pragma once
// `timeout`: the status quo most clusters run. Nothing is noticed until a
// collective has hung past the NCCL watchdog's timeout or the job reports a
// crash; a person then spends `manual_diagnosis` reading logs before naming
// the broken node. Fail-slow faults never trip it.
//
// Alerts (both kind fail_stop):
//  * at the moment the timeout (or the crash) fires, when page_on_timeout is
//    true: no suspects. This is when the on-call learns the job is down.
//  * manual_diagnosis later: the suspects the logs point to. The evidence is
//    the telemetry at fire time: members of a hung communicator that never
//    entered the hung collective; failing that, workers whose last finished
//    iteration lags the others'. With suspect=auto a lone GPU is named as
//    the GPU (then its host); several GPUs of one host as the host (then the
//    GPUs); several hosts as hosts, most hung GPUs first. suspect=gpu or
//    suspect=host forces one level.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"

namespace gauntlet::harness {

struct TimeoutConfig {
  sim::Nanos collective_timeout = 30 * sim::kMinute;
  sim::Nanos manual_diagnosis = 3 * sim::kHour;
  bool page_on_timeout = true;
  enum class Level { automatic, gpu, host } suspect = Level::automatic;
};

class TimeoutDetector : public Detector {
 public:
  static constexpr const char* kName = "timeout";
  explicit TimeoutDetector(TimeoutConfig config) : config_(config) {}
  // Its name, summary, parameters and how to make one: its registry entry.
  static DetectorInfo info();
  static TimeoutConfig config_from(const DetectorParams& params);

  void observe(const telemetry::Batch& batch) override;
  bool reads_heartbeats() const override { return false; }
  bool reads_samples() const override { return false; }

 private:
  using CollKey = std::pair<std::string, std::uint64_t>;  // communicator, sequence
  struct Diagnosis {
    sim::Nanos due_ns;
    std::vector<Suspect> suspects;
  };
  // What the detector knows of one communicator. A 4,096-GPU job publishes
  // tens of thousands of collective records per steady stretch, so each is
  // folded in with a few vector and small-map operations.
  struct Communicator {
    std::string name;
    std::vector<std::string> members;  // by rank; empty: no record from that rank yet
    // Ranks that published a record for each recent sequence.
    std::map<std::uint64_t, std::vector<bool>> entered;
    std::uint64_t max_sequence = 0;  // newest sequence seen since the last restart
    std::size_t pending = 0;         // its entries in pending_
    // The entry of `entered` written last, kept while no sequence is erased.
    std::uint64_t cached_sequence = 0;
    std::vector<bool>* cached_entered = nullptr;
  };
  // A steady run's records resolved once per records_version: a month
  // repeats one run's tens of thousands of records thousands of times, and
  // a string lookup per record would cost more than the rest of the run.
  struct SteadyPlan {
    static constexpr std::size_t kNoCommunicator = SIZE_MAX;
    std::uint64_t version = 0;                   // 0: none
    std::vector<std::size_t> communicator;       // per record, or kNoCommunicator
    std::vector<std::uint64_t*> last_iteration;  // per record: its worker's entry, or nullptr
    std::uint64_t members_writes_when_applied = UINT64_MAX;
  };

  void on_record(const telemetry::Record& record);
  void on_steady(const telemetry::SteadyRun& run);
  void plan_steady(const telemetry::SteadyRun& run);
  void on_collective(const telemetry::CollectiveRecord& c);
  // `members_known`: this rank's member is already c.worker().
  void on_collective(Communicator& comm, const telemetry::CollectiveRecord& c, bool members_known);
  Communicator& communicator(const std::string& name);
  void advance_to(sim::Nanos now);
  void emit_diagnoses(sim::Nanos now);
  void fire(sim::Nanos at);
  std::vector<Suspect> suspects() const;
  std::vector<Suspect> to_components(const std::vector<std::string>& workers) const;
  void prune_sequences(Communicator& comm);
  void reset_collectives();

  TimeoutConfig config_;
  std::vector<Communicator> comms_;
  std::unordered_map<std::string, std::size_t> comm_index_;
  std::size_t last_comm_ = SIZE_MAX;  // records of one communicator come in runs
  // Collectives started and not finished: (communicator, sequence, rank) -> start.
  std::map<std::pair<CollKey, std::uint32_t>, sim::Nanos> pending_;
  std::multiset<sim::Nanos> pending_starts_;                       // the starts of pending_, for the oldest hang
  std::unordered_map<std::string, std::uint64_t> last_iteration_;  // worker -> last finished iteration
  bool tripped_ = false;              // a fault has been announced and the job has not recovered since
  std::uint64_t members_writes_ = 0;  // counts changes of any communicator's members
  SteadyPlan plan_;
  std::vector<Diagnosis> diagnoses_;  // due in order
};

}  // namespace gauntlet::harness
