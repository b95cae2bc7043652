#pragma once
// Runs a function in a forked child process and returns the bytes it
// produced. Each simulation gets a process of its own because SimGrid keeps
// one engine per process; independent runs (a fault-free counterfactual, one
// run per detector) then also use both cores.
#include <functional>
#include <string>
#include <vector>

namespace gauntlet::sim {

// Throws std::runtime_error with the child's message if it failed.
std::string run_isolated(const std::function<std::string()>& body);

// Runs several bodies at most `parallel` at a time; results in input order.
std::vector<std::string> run_isolated_all(const std::vector<std::function<std::string()>>& bodies, int parallel);

}  // namespace gauntlet::sim
