#pragma once
// Scale scenarios drawn from a seed, for the scale benchmark: an hour of one
// job on a whole rail-optimized spine-leaf cluster, anywhere in the envelope
// planners size (the shipped scale scenarios are one point of it each):
//   micro-batches 4 to 32, gradients 1 to 8 GB, activations 32 to 256 MB,
//   128 to 1,024 leaves per 16,384 GPUs, TP 2-8 x PP 1-16 x DP the rest,
//   1 to 6 faults of any type the flow engine acts out, all six detectors.
// The text is what a user would write; the scenario loader judges it.
#include <cstdint>
#include <string>

namespace gauntlet::bench {

struct ScaleDraw {
  std::string yaml;
  std::string summary;  // one line: shape, volumes and faults drawn
};

// Draw `draw` under `seed` for a job of `gpus` GPUs (a multiple of 16,384);
// the same arguments give the same text.
ScaleDraw scale_scenario(std::uint64_t seed, std::uint64_t draw, int gpus);

}  // namespace gauntlet::bench
