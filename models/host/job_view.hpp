#pragma once
// What the hardware sampler reads of a running training job and the network:
// which GPUs the job computes on, which RNIC each GPU's traffic uses now
// (after any NCCL fallback) and whether each RNIC's link is up.
#include <map>
#include <memory>
#include <utility>

#include "models/telemetry/hardware_sampler.hpp"
#include "models/training_job.hpp"
#include "sim/network_engine.hpp"

namespace gauntlet::models {

// For the sample taken now: the callables read the job and engine as they are
// when called, and keep their own tables.
HardwareSampler::EndpointOf job_endpoints(const TrainingJob& job, const sim::Topology& topology);
SampleInputs job_sample_inputs(const TrainingJob& job, const sim::NetworkEngine& engine);

}  // namespace gauntlet::models
