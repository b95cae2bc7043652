#pragma once
// The record files every run writes and `gauntlet score` reads:
//   faults.jsonl  {"id","type","target","start_s","end_s","affected_job","benign"[,"cause"][,"background"]}
//                 (end_s null when open-ended; a chaos run adds "t0_unix_s", the
//                 Unix time its times count from)
//   alerts.jsonl  {"time_s","detector","kind","suspects":[{"id","score"}]}
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "harness/scoring/score.hpp"

namespace gauntlet::harness {

void write_fault_line(std::ostream& out, const FaultEpisode& fault);
void write_alert_line(std::ostream& out, const Alert& alert);

struct FaultRecords {
  std::vector<FaultEpisode> faults;
  std::optional<double> t0_unix_s;  // where the file's times count from, when it says
};
struct AlertRecords {
  std::vector<Alert> alerts;
  std::vector<int> lines;  // each alert's line in the file
};

// Whether a fault type is benign by definition (its descriptor in the
// fault catalog says so): a line of that type is benign unless it says not.
using BenignByType = std::function<bool(std::string_view type)>;

// Read whole files; malformed lines, repeated keys, repeated fault ids and
// suspects that are not component ids throw InputError naming file:line:col.
FaultRecords read_fault_records(std::istream& in, const std::string& file_name, const BenignByType& benign_type);
AlertRecords read_alert_records(std::istream& in, const std::string& file_name);
std::vector<FaultEpisode> read_faults_jsonl(std::istream& in, const std::string& file_name,
                                            const BenignByType& benign_type);
std::vector<Alert> read_alerts_jsonl(std::istream& in, const std::string& file_name);

}  // namespace gauntlet::harness
