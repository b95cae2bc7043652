// A detector that reads the job model: what the include rule must catch.
#include "harness/detectors/detector.hpp"
#include "harness/probe_plan/probe_list.hpp"
#include "models/training_job.hpp"
