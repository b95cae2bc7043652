#include "fuzz/readers.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness/chaos/alertmanager.hpp"
#include "harness/chaos/plan.hpp"
#include "harness/detectors/detector_reply.hpp"
#include "harness/detectors/registry.hpp"
#include "harness/metrics/prom_rules_detector.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/report/json_file.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scoring/records.hpp"
#include "harness/suite/episode_record.hpp"
#include "harness/suite/suite_aggregate.hpp"
#include "harness/suite/suite_spec.hpp"
#include "harness/sweep/sweep_spec.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "injectors/real/journal.hpp"
#include "sim/component_id.hpp"
#include "sim/network_calibration.hpp"
#include "sim/rfc3339.hpp"
#include "sim/topology.hpp"

namespace gauntlet::fuzz {
namespace {

namespace fs = std::filesystem;
using harness::InputError;

const harness::DetectorRegistry& registry() {
  static const harness::DetectorRegistry builtin = harness::builtin_detectors();
  return builtin;
}

// Readers that take a path get the bytes in a folder of this process's own,
// removed when it exits.
class ScratchFolder {
 public:
  ScratchFolder() : path_(fs::temp_directory_path() / ("gauntlet-fuzz-" + std::to_string(::getpid()))) {
    fs::create_directories(path_ / "sweeps");
    // The shipped sweeps name ../demo.yaml.
    fs::copy_file(fs::path(GAUNTLET_SOURCE_DIR) / "scenarios" / "demo.yaml", path_ / "demo.yaml",
                  fs::copy_options::overwrite_existing);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const fs::path& scratch_folder() {
  static const ScratchFolder folder;
  return folder.path();
}

std::string write_scratch(const std::string& relative, std::string_view bytes) {
  const std::string path = (scratch_folder() / relative).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

void read_scenario(std::string_view bytes) {
  try {
    harness::parse_scenario(std::string(bytes), "fuzz.yaml", registry());
  } catch (const InputError&) {
  }
}

void read_chaos_plan(std::string_view bytes) {
  try {
    harness::parse_chaos_plan(std::string(bytes), "fuzz.yaml");
  } catch (const InputError&) {
  }
}

void read_sweep(std::string_view bytes) {
  try {
    harness::load_sweep(write_scratch("sweeps/fuzz.yaml", bytes), registry());
  } catch (const InputError&) {
  }
}

void read_suite(std::string_view bytes) {
  try {
    harness::load_suite(write_scratch("suite.yaml", bytes), registry());
  } catch (const InputError&) {
  }
}

void read_network_calibration(std::string_view bytes) {
  try {
    sim::parse_network_calibration(bytes, "network.json");
  } catch (const InputError&) {
  }
}

void read_score_records(std::string_view bytes) {
  try {
    std::istringstream in{std::string(bytes)};
    const injectors::FaultCatalog catalog = injectors::builtin_fault_catalog();
    harness::read_faults_jsonl(in, "faults.jsonl", [&catalog](std::string_view type) {
      const injectors::FaultDescriptor* d = catalog.find(type);
      return d && d->spec.benign;
    });
  } catch (const InputError&) {
  }
  try {
    std::istringstream in{std::string(bytes)};
    harness::read_alerts_jsonl(in, "alerts.jsonl");
  } catch (const InputError&) {
  }
}

void read_alertmanager(std::string_view bytes) {
  const std::string text(bytes);
  sim::parse_rfc3339(text);
  harness::looks_like_alertmanager(text);
  try {
    harness::parse_alertmanager(text, "alerts.json", {});
  } catch (const InputError&) {
  }
}

void read_chaos_journal(std::string_view bytes) {
  try {
    injectors::real::read_journal(write_scratch("journal.jsonl", bytes));
  } catch (const injectors::real::JournalError&) {
  }
}

// A detector's stdout: frames until the bytes end or one is malformed, each
// reply checked against a four-host cluster.
void read_detector_replies(std::string_view bytes) {
  static const sim::Topology topology = [] {
    sim::ClusterShape shape;
    shape.spines = 2;
    shape.leaves = 2;
    shape.hosts = 4;
    shape.gpus_per_host = 2;
    shape.rnics_per_host = 2;
    return sim::Topology(shape);
  }();
  const auto cluster_has = [](const std::string& id) {
    const auto parsed = sim::ComponentId::parse(id);
    return parsed && topology.contains(*parsed);
  };
  while (!bytes.empty()) {
    std::uint64_t length = 0;
    std::size_t prefix = 0;
    if (harness::read_length_prefix(bytes, &length, &prefix) != harness::LengthPrefix::complete) {
      harness::describe_stray_text(bytes);
      return;
    }
    bytes.remove_prefix(prefix);
    if (length > bytes.size()) return;
    const std::string payload(bytes.substr(0, length));
    bytes.remove_prefix(length);
    protocol::DetectorReply reply;
    std::string problem;
    if (harness::parse_reply(payload, &reply, &problem))
      harness::reply_problem(reply, cluster_has);
    else
      harness::describe_stray_text(payload);
  }
}

// A run folder's summary.json, then its cell.json, as `report` reads them.
void read_run_summary(std::string_view bytes) {
  fs::create_directories(scratch_folder() / "run");
  fs::remove(scratch_folder() / "run" / "cell.json");
  write_scratch("run/summary.json", bytes);
  try {
    harness::aggregate_runs({scratch_folder() / "run"});
  } catch (const InputError&) {
  }
}

void read_cell(std::string_view bytes) {
  fs::create_directories(scratch_folder() / "cell");
  write_scratch("cell/summary.json", R"({"scenario": "demo", "seed": 1, "detectors": {}})");
  write_scratch("cell/cell.json", bytes);
  try {
    harness::aggregate_runs({scratch_folder() / "cell"});
  } catch (const InputError&) {
  }
}

// An episode record as `suite --merge` reads it: a record that is JSON but
// not a record is reported from nlohmann's exception, as merge_episodes does.
void read_episode(std::string_view bytes) {
  try {
    harness::record_from_json(harness::read_json_file(write_scratch("episode.json", bytes)));
  } catch (const InputError&) {
  } catch (const nlohmann::json::exception&) {
  }
}

void read_suite_summary(std::string_view bytes) {
  try {
    harness::read_suite_summary(write_scratch("suite-summary.json", bytes));
  } catch (const InputError&) {
  }
}

// A prom: rule file, and the same bytes as promtool's output.
void read_prom_rules(std::string_view bytes) {
  try {
    harness::read_prom_rules(write_scratch("rules.yaml", bytes));
  } catch (const InputError&) {
  }
  harness::parse_promtool_output(std::string(bytes));
}

}  // namespace

const std::vector<Reader>& readers() {
  static const std::vector<Reader> all = {
      {"scenario_loader", read_scenario},
      {"chaos_plan", read_chaos_plan},
      {"sweep_loader", read_sweep},
      {"score_records", read_score_records},
      {"alertmanager", read_alertmanager},
      {"chaos_journal", read_chaos_journal},
      {"detector_reply", read_detector_replies},
      {"suite_loader", read_suite},
      {"network_calibration", read_network_calibration},
      {"run_summary", read_run_summary},
      {"cell", read_cell},
      {"episode", read_episode},
      {"suite_summary", read_suite_summary},
      {"prom_rules", read_prom_rules},
  };
  return all;
}

const Reader& reader(std::string_view name) {
  for (const Reader& r : readers())
    if (r.name == name) return r;
  throw std::invalid_argument("no fuzzed reader is called '" + std::string(name) + "'");
}

}  // namespace gauntlet::fuzz
