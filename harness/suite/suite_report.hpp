#pragma once
// What a suite's reader sees: the leaderboard in the terminal, report.html
// (the same tables and detection-against-magnitude plots drawn by gnuplot)
// and the paired comparison of two suite results.
#include <string>

#include "harness/suite/suite_aggregate.hpp"

namespace gauntlet::harness {

std::string suite_leaderboard(const SuiteResult& result);
std::string suite_report_html(const SuiteResult& result);

// Paired by episode: for every detector in both results, the episodes only
// A detected and only B detected, McNemar's exact p, and whether the
// difference is significant at 5%. Throws InputError when the results are
// not of the same suite and version, or their episodes differ.
std::string compare_suites(const SuiteResult& a, const std::string& a_name, const SuiteResult& b,
                           const std::string& b_name);

}  // namespace gauntlet::harness
