#include "harness/suite/suite_runner.hpp"

#include "harness/report/json_file.hpp"
#include "harness/runner/outputs.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

constexpr const char* kRecordFile = "episode.json";

std::string describe(const SuiteSpec& spec, const Episode& episode) {
  std::string text = "episode " + std::to_string(episode.index) + " " + spec.shapes[episode.shape].name + " ";
  if (!episode.fault) return text + "healthy";
  text += episode.fault->type + (episode.fault->target.empty() ? "" : " " + episode.fault->target);
  for (const auto& [name, value] : episode.fault->params) text += " " + name + "=" + value;
  return text;
}

bool same_draw(const EpisodeRecord& record, const Episode& episode) {
  if (record.seed != episode.seed) return false;
  if (!episode.fault) return record.type == "healthy";
  return record.type == episode.fault->type && record.target == episode.fault->target &&
         record.params == episode.fault->params && record.magnitude == episode.fault->magnitude;
}

}  // namespace

std::filesystem::path episode_folder(const std::filesystem::path& out, std::size_t index) {
  return out / "episodes" / ("e" + std::to_string(index));
}

int run_episode(const SuiteSpec& spec, const Episode& episode, const DetectorRegistry& registry,
                const std::filesystem::path& folder, int parallel_runs, EpisodeRecord* record) {
  const std::string what = describe(spec, episode);
  RunReport report;
  EpisodeRecord own;
  const int ran = worker_step(what, "run failed", [&] {
    RunOptions options;
    options.parallel_runs = parallel_runs;
    report = run_observed(episode_scenario(spec, episode, registry), registry, options);
    own = episode_record(spec, episode, report);
  });
  if (ran != kWorkerOk) return ran;
  const int wrote = worker_step(what, "cannot write results", [&] {
    write_run_outputs(report, ClaimedFolder::claim(folder), {{kRecordFile, record_json(own).dump(2) + "\n"}});
  });
  if (wrote == kWorkerOk && record != nullptr) *record = std::move(own);
  return wrote;
}

WorkerPoolResult run_episodes(const SuiteSpec& spec, const std::vector<Episode>& episodes,
                              const DetectorRegistry& registry, std::size_t jobs, const ProgressOptions& progress) {
  ProgressDisplay display(progress, episodes.size(), "episodes");
  // With several workers each runs its simulations one after the other.
  const int parallel_runs = jobs > 1 ? 1 : 2;
  return run_in_workers(
      episodes.size(), jobs,
      [&](std::size_t i) {
        return run_episode(spec, episodes[i], registry, episode_folder(spec.out, episodes[i].index), parallel_runs);
      },
      [&](std::size_t i, bool ok, std::size_t running, const WorkerPoolResult& so_far) {
        display.update(describe(spec, episodes[i]), ok, running, so_far);
      });
}

MergedSuite merge_episodes(const SuiteSpec& spec, const std::filesystem::path& out) {
  MergedSuite merged;
  std::vector<EpisodeRecord> records;
  for (const Episode& episode : expand_episodes(spec)) {
    const std::filesystem::path file = episode_folder(out, episode.index) / kRecordFile;
    if (!std::filesystem::exists(file)) {
      merged.missing.push_back(episode.index);
      continue;
    }
    EpisodeRecord record;
    try {
      record = record_from_json(read_json_file(file));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(file.string(), 0, 0, std::string("not an episode record: ") + e.what());
    }
    // A record another suite (or an edited one) left there is not this episode's.
    if (!same_draw(record, episode)) {
      merged.missing.push_back(episode.index);
      continue;
    }
    records.push_back(std::move(record));
  }
  merged.result = aggregate_suite(spec, std::move(records));
  return merged;
}

}  // namespace gauntlet::harness
