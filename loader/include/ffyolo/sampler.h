// DistributedSampler: which samples a rank reads in an epoch, with PyTorch's
// DistributedSampler semantics: a permutation of all samples drawn from
// (seed, epoch) (or the identity without shuffling), padded by repeating its
// head so every rank gets the same count, and rank r taking every world-th
// index starting at r. It is a pure function of its arguments: resuming needs
// only (epoch, position).
#pragma once

#include <cstdint>
#include <vector>

namespace ffyolo {

struct SamplerOptions {
  int64_t dataset_size = 0;
  int rank = 0;
  int world_size = 1;
  uint64_t seed = 0;
  bool shuffle = true;
};

class DistributedSampler {
 public:
  explicit DistributedSampler(const SamplerOptions& options);

  // Samples per rank per epoch: ceil(dataset_size / world_size).
  int64_t samples_per_rank() const { return per_rank_; }
  // This rank's dataset indices for `epoch`, in reading order.
  std::vector<int64_t> EpochIndices(int64_t epoch) const;
  // The permutation of the whole dataset for `epoch`, before padding and striding.
  std::vector<int64_t> Permutation(int64_t epoch) const;

 private:
  SamplerOptions options_;
  int64_t per_rank_;
};

// n = weights.size() indices drawn with replacement, i with probability
// weights[i] / sum (random.choices(range(n), weights, k=n): a uniform draw
// into the cumulative weights), from (seed, epoch) alone. The weights are
// finite, non-negative and not all 0.
std::vector<int64_t> WeightedChoices(const std::vector<double>& weights, uint64_t seed, int64_t epoch);

}  // namespace ffyolo
