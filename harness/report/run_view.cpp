#include "harness/report/run_view.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "harness/report/json_file.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scoring/records.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "harness/scoring/summary.hpp"
#include "sim/input_file.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// Only a regular file: a FIFO or /dev/zero in a results folder would be
// read without end.
std::ifstream open_or_fail(const fs::path& path) {
  sim::check_regular_file(path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), 1, 1, "cannot read the file");
  return in;
}

sim::Nanos seconds_text_to_nanos(const std::string& text, const std::string& file, int line, int column) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) throw InputError(file, line, column, "expected seconds, got '" + text + "'");
  return static_cast<sim::Nanos>(std::llround(value * 1e9));
}

}  // namespace

RunView view_of(const RunReport& report) {
  RunView view;
  view.scenario = report.scenario.name;
  view.seed = report.scenario.seed;
  view.sim_seconds = sim::to_seconds(report.scenario.duration);
  view.iterations_fault_free = report.fault_free.iterations();
  view.iterations_faulty = report.faulty.iterations();
  view.timeline = report.faulty.timeline;
  view.collectives = report.faulty.collectives;
  for (const FaultEpisode& f : report.faults) {
    if (f.background)
      ++view.background_not_listed;
    else
      view.faults.push_back(f);
  }
  view.detector_order = report.detector_order;
  for (const auto& [name, score] : report.scores) view.scores.emplace(name, with_scored_outcomes_only(score));
  for (const std::string& name : report.detector_order) {
    auto it = report.faulty.detectors.find(name);
    view.alerts[name] = it != report.faulty.detectors.end() ? it->second.alerts : std::vector<Alert>{};
  }
  return view;
}

std::vector<models::IterationSpan> read_timeline_csv(std::istream& in, const std::string& file_name,
                                                     std::string* job_read) {
  std::vector<models::IterationSpan> spans;
  std::string line;
  int line_number = 0;
  bool per_job = false;  // several tenants: a job column first, the first job's rows read
  std::string first_job;
  while (std::getline(in, line)) {
    ++line_number;
    if (line_number == 1) {
      per_job = line.rfind("job,iteration,start_s,end_s,duration_s", 0) == 0;
      if (!per_job && line.rfind("iteration,start_s,end_s,duration_s", 0) != 0)
        throw InputError(file_name, 1, 1, "expected the header iteration,start_s,end_s,duration_s");
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::vector<int> columns;
    std::size_t from = 0;
    while (true) {
      const std::size_t comma = line.find(',', from);
      columns.push_back(static_cast<int>(from) + 1);
      cells.push_back(line.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    if (per_job) {
      if (cells.size() < 2) throw InputError(file_name, line_number, 1, "expected 5 comma-separated values");
      if (first_job.empty()) first_job = cells[0];
      if (job_read) *job_read = first_job;
      if (cells[0] != first_job) continue;
      cells.erase(cells.begin());
      columns.erase(columns.begin());
    }
    if (cells.size() < 4) throw InputError(file_name, line_number, 1, "expected 4 comma-separated values");
    std::uint64_t index = 0;
    try {
      std::size_t used = 0;
      index = std::stoull(cells[0], &used);
      if (used != cells[0].size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw InputError(file_name, line_number, 1, "expected an iteration number, got '" + cells[0] + "'");
    }
    const sim::Nanos start = seconds_text_to_nanos(cells[1], file_name, line_number, columns[1]);
    const sim::Nanos duration = seconds_text_to_nanos(cells[3], file_name, line_number, columns[3]);
    if (!spans.empty()) {
      models::IterationSpan& last = spans.back();
      const sim::Nanos last_end = last.start + static_cast<sim::Nanos>(last.count) * last.duration;
      if (last.duration == duration && last_end == start && last.first + last.count == index) {
        ++last.count;
        continue;
      }
    }
    spans.push_back({index, 1, start, duration});
  }
  return spans;
}

RunView read_run_folder(const fs::path& dir) {
  RunView view;
  const fs::path summary_path = dir / "summary.json";
  const json summary = read_json_file(summary_path);
  auto need = [&](const json& j, const char* key) -> const json& {
    auto it = j.find(key);
    if (it == j.end()) throw InputError(summary_path.string(), 1, 1, std::string("missing key '") + key + "'");
    return *it;
  };
  try {
    view.scenario = need(summary, "scenario").get<std::string>();
    view.seed = need(summary, "seed").get<std::uint64_t>();
    view.sim_seconds = need(summary, "sim_seconds").get<double>();
    const json& iterations = need(summary, "iterations");
    view.iterations_fault_free = need(iterations, "fault_free").get<std::uint64_t>();
    view.iterations_faulty = need(iterations, "no_detector").get<std::uint64_t>();
  } catch (const json::type_error& e) {
    throw InputError(summary_path.string(), 1, 1, std::string("wrong type: ") + e.what());
  }

  {
    std::istringstream in(sim::read_input_file((dir / "faults.jsonl").string(), sim::kMaxRecordFileBytes));
    const injectors::FaultCatalog catalog = injectors::builtin_fault_catalog();
    view.faults = read_faults_jsonl(in, (dir / "faults.jsonl").string(), [&catalog](std::string_view type) {
      const injectors::FaultDescriptor* d = catalog.find(type);
      return d && d->spec.benign;
    });
  }
  if (auto it = summary.find("faults"); it != summary.end() && it->is_array())
    for (const json& flags : *it)
      for (FaultEpisode& f : view.faults)
        if (flags.value("id", std::string()) == f.id) {
          f.affected_job = flags.value("affected_job", f.affected_job);
          f.benign = flags.value("benign", f.benign);
        }
  std::vector<Alert> alerts;
  std::string job;
  {
    std::istringstream in(sim::read_input_file((dir / "alerts.jsonl").string(), sim::kMaxRecordFileBytes));
    alerts = read_alerts_jsonl(in, (dir / "alerts.jsonl").string());
  }
  {
    std::ifstream in = open_or_fail(dir / "timeline.csv");
    view.timeline = read_timeline_csv(in, (dir / "timeline.csv").string(), &job);
  }
  // Several tenants: the view is the first job's (its detectors go by JOB/NAME
  // in alerts.jsonl, and it is scored on the faults that touched it).
  if (!job.empty())
    std::erase_if(view.faults, [&](const FaultEpisode& f) {
      return !f.jobs.empty() && std::find(f.jobs.begin(), f.jobs.end(), job) == f.jobs.end();
    });

  ScoringOptions scoring;
  scoring.run_end_s = view.sim_seconds;
  const json& detectors = need(summary, "detectors");
  for (const auto& [name, d] : detectors.items()) {
    view.detector_order.push_back(name);
    std::vector<Alert>& mine = view.alerts[name];
    for (const Alert& a : alerts)
      if (a.detector == (job.empty() ? name : job + "/" + name)) mine.push_back(a);
    DetectorScore score = score_detector(view.faults, mine, scoring);
    // The summary is authoritative for the aggregates (mitigation runs score
    // each detector on a run of its own); the outcomes per fault come from here.
    DetectorScore written = detector_score_from_json(d);
    written.faults = std::move(score.faults);
    score = std::move(written);
    view.scores[name] = score;
  }
  return view;
}

}  // namespace gauntlet::harness
