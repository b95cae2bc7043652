#pragma once
// Runs a function in a forked child process and returns the bytes it
// produced. Each simulation gets a process of its own because SimGrid keeps
// one engine per process; independent runs (a fault-free counterfactual, one
// run per detector) then also use both cores.
//
// A child's error comes back with its type and place: an InputError stays an
// InputError with its file, line and column (bad input is exit code 2
// wherever it is found), a ContractViolation stays one with its source line
// and expression, and any other exception, a library's std::invalid_argument
// included, comes back as a std::runtime_error with the child's message: a
// failed run (exit code 1), never bad input. So does a child that dies
// without an answer.
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace gauntlet::sim {

// Called first in a forked child: the kernel kills it when the process that
// forked it (`parent`) ends, however it ends (SIGKILL included), and a
// parent already gone before this call ends it at once. A simulation must
// not outlive `gauntlet run` holding its results folder's lock.
void die_with_parent(pid_t parent);

std::string run_isolated(const std::function<std::string()>& body);

// Runs several bodies at most `parallel` at a time; results in input order.
// When several fail, the first one's error (in input order) is thrown, once
// every child has ended.
std::vector<std::string> run_isolated_all(const std::vector<std::function<std::string()>>& bodies, int parallel);

}  // namespace gauntlet::sim
