#pragma once
// What must hold of every run, whatever the scenario; each check returns the
// problems it found, one sentence each, and nothing when the invariant holds.
#include <set>
#include <string>
#include <vector>

#include "harness/runner/simulation.hpp"
#include "models/job_status.hpp"

namespace gauntlet::harness::soak {

// Iterations only go forward in time, each span holds some, and none is
// skipped: a span starts where the last ended or, after a rollback to a
// checkpoint, at an earlier iteration (lost work is redone, never invented).
std::vector<std::string> timeline_problems(const std::vector<models::IterationSpan>& timeline);

// Fast-forwarding a steady stretch must give the iterations simulating every
// one of them gives, to the nanosecond.
std::vector<std::string> timeline_differences(const std::vector<models::IterationSpan>& fast_forwarded,
                                              const std::vector<models::IterationSpan>& step_by_step);

// Alerts come within the run, at the end of an observation interval (but
// for the detectors that time an alert at the record that showed them the
// fault: the timeout detector at a crash, Falcon at an iteration), and
// before the first fault begins a detector has seen exactly what it sees in
// the fault-free run, so it must have raised exactly the same alerts there.
std::vector<std::string> alert_problems(const SimulationOutcome& faulty, const SimulationOutcome& fault_free,
                                        sim::Nanos first_onset, sim::Nanos observe_interval, sim::Nanos duration);

// Every byte an RNIC sent was received by an RNIC: over the run, the RNICs'
// transmitted and received byte counters (as the exporters show them in the
// OpenMetrics text) add up to the same total, and the run had some traffic.
// PAUSE frames go one hop: where the octet counters count them
// (`octets_count_pauses`: the packet engine's ports do, the flow model's
// byte counts the hybrid engine shows do not), they are taken out of the
// totals, as many as the leaves' PFC counters show. Frames the fabric
// dropped (errors, discards, a PFC watchdog's drops) are the only bytes it
// may keep.
// Per link, each RNIC's sent bytes are the bytes its host link carried toward
// the leaf and its received bytes those carried toward it, as the leaf's port
// counts them; except on `skewed_hosts` ("h3"), whose samples carry a wrong
// clock, so that the run's last second may fall outside it.
std::vector<std::string> byte_balance_problems(const std::string& openmetrics,
                                               const std::set<std::string>& skewed_hosts = {},
                                               bool octets_count_pauses = true);

}  // namespace gauntlet::harness::soak
