#include "harness/runner/collective_sample.hpp"

#include <algorithm>

namespace gauntlet::harness {

std::vector<std::string> sample_workers(const models::Placement& placement, const std::vector<std::string>& targets) {
  const int ranks = placement.ranks();
  std::vector<int> chosen;
  for (int r = 0; r < ranks; ++r)
    if (std::find(targets.begin(), targets.end(), placement.worker_name(r)) != targets.end() &&
        chosen.size() < kMaxSampledRanks)
      chosen.push_back(r);
  // Evenly spread ranks fill the rest; one the targets already took is
  // passed over for the next.
  const auto slots = static_cast<int>(std::min<std::size_t>(kMaxSampledRanks, static_cast<std::size_t>(ranks)));
  for (int i = 0; i < slots && chosen.size() < static_cast<std::size_t>(slots); ++i) {
    const int r = static_cast<int>(static_cast<long long>(i) * ranks / slots);
    if (std::find(chosen.begin(), chosen.end(), r) == chosen.end()) chosen.push_back(r);
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<std::string> out;
  for (int r : chosen) out.push_back(placement.worker_name(r));
  return out;
}

CollectiveSampler::CollectiveSampler(std::vector<std::string> workers, int ranks_total) {
  sample_.workers = std::move(workers);
  sample_.ranks_total = ranks_total;
  sampled_.insert(sample_.workers.begin(), sample_.workers.end());
}

// Iterations are taken whole while the budget lasts; the first one that
// finds it spent and every later one are counted as skipped.
bool CollectiveSampler::take_iteration(std::uint64_t iteration, std::size_t slices_needed) {
  if (iteration == last_taken_) return true;
  if (sample_.slices.size() + slices_needed > kMaxCollectiveSlices) {
    ++sample_.iterations_skipped;
    return false;
  }
  last_taken_ = iteration;
  ++sample_.iterations_sampled;
  return true;
}

void CollectiveSampler::add(const telemetry::CollectiveRecord& c) {
  sample_.slices.push_back({c.worker(), c.communicator(), c.op(), c.sequence(), c.bytes(),
                            static_cast<sim::Nanos>(c.start_ns()), static_cast<sim::Nanos>(c.end_ns())});
}

void CollectiveSampler::observe(const telemetry::Batch& batch) {
  // Tens of thousands of records per iteration at scale: a hash lookup each.
  const auto sampled = [this](const telemetry::CollectiveRecord& c) { return sampled_.count(c.worker()) > 0; };
  // Records of one iteration arrive together; count its sampled slices first
  // so an iteration is either in whole or out.
  const auto& records = batch.records();
  for (int i = 0; i < records.size();) {
    if (!records[i].has_collective()) {
      ++i;
      continue;
    }
    const std::uint64_t iteration = records[i].collective().sequence();
    int j = i;
    std::size_t needed = 0;
    for (; j < records.size() && (!records[j].has_collective() || records[j].collective().sequence() == iteration); ++j)
      needed += records[j].has_collective() && sampled(records[j].collective()) ? 1 : 0;
    if (needed > 0 && take_iteration(iteration, needed))
      for (int k = i; k < j; ++k)
        if (records[k].has_collective() && sampled(records[k].collective())) add(records[k].collective());
    i = j;
  }
  // A steady run repeats one iteration's records: its first iteration stands
  // for the run.
  for (const telemetry::SteadyRun& run : batch.steady()) {
    if (run.records_version() == 0 || run.records_version() != counted_version_) {
      counted_slices_ = 0;
      for (const telemetry::Record& r : run.records())
        counted_slices_ += r.has_collective() && sampled(r.collective()) ? 1 : 0;
      counted_version_ = run.records_version();
    }
    const std::size_t needed = counted_slices_;
    if (needed == 0 || !take_iteration(run.first_iteration(), needed)) continue;
    for (const telemetry::Record& r : run.records())
      if (r.has_collective() && sampled(r.collective())) add(r.collective());
  }
}

}  // namespace gauntlet::harness
