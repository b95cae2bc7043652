#pragma once
// The record files every run writes and `gauntlet score` reads:
//   faults.jsonl  {"id","type","target","start_s","end_s"}  (end_s null when open-ended)
//   alerts.jsonl  {"time_s","detector","kind","suspects":[{"id","score"}]}
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "harness/scoring/score.hpp"

namespace gauntlet::harness {

void write_fault_line(std::ostream& out, const FaultEpisode& fault);
void write_alert_line(std::ostream& out, const Alert& alert);

// Read whole files; malformed lines throw InputError naming file:line:col.
std::vector<FaultEpisode> read_faults_jsonl(std::istream& in, const std::string& file_name);
std::vector<Alert> read_alerts_jsonl(std::istream& in, const std::string& file_name);

}  // namespace gauntlet::harness
