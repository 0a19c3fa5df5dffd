#include "ffyolo/sampler.h"

#include <algorithm>
#include <numeric>

#include "ffyolo/random.h"

namespace ffyolo {

DistributedSampler::DistributedSampler(const SamplerOptions& options) : options_(options) {
  if (options_.world_size < 1) options_.world_size = 1;
  per_rank_ = (options_.dataset_size + options_.world_size - 1) / options_.world_size;
}

std::vector<int64_t> DistributedSampler::Permutation(int64_t epoch) const {
  std::vector<int64_t> perm(options_.dataset_size);
  std::iota(perm.begin(), perm.end(), 0);
  if (!options_.shuffle) return perm;
  // Fisher-Yates from a generator keyed by (seed, epoch) only: every rank draws the same permutation.
  SampleRandom rng({options_.seed, static_cast<uint64_t>(epoch), 0x5a3d1e5ull});
  for (int64_t i = options_.dataset_size - 1; i > 0; --i) std::swap(perm[i], perm[rng.Below(i + 1)]);
  return perm;
}

std::vector<int64_t> DistributedSampler::EpochIndices(int64_t epoch) const {
  std::vector<int64_t> perm = Permutation(epoch);
  const int64_t total = per_rank_ * options_.world_size;
  if (perm.empty()) return {};
  // Pad by repeating the head of the permutation (as often as needed for tiny datasets).
  for (int64_t i = options_.dataset_size; i < total; ++i) perm.push_back(perm[i - options_.dataset_size]);
  std::vector<int64_t> mine;
  mine.reserve(per_rank_);
  for (int64_t i = options_.rank; i < total; i += options_.world_size) mine.push_back(perm[i]);
  return mine;
}

std::vector<int64_t> WeightedChoices(const std::vector<double>& weights, uint64_t seed, int64_t epoch) {
  std::vector<double> cumulative(weights.size());
  std::partial_sum(weights.begin(), weights.end(), cumulative.begin());
  SampleRandom rng({seed, static_cast<uint64_t>(epoch), 0x1ae19ull});
  std::vector<int64_t> out(weights.size());
  if (weights.empty()) return out;
  const double total = cumulative.back();
  // bisect_right(cum_weights, random() * total): the first bin whose cumulative weight exceeds the draw.
  for (int64_t& i : out)
    i = std::min<int64_t>(std::upper_bound(cumulative.begin(), cumulative.end(), rng.Uniform() * total) -
                              cumulative.begin(),
                          static_cast<int64_t>(weights.size()) - 1);
  return out;
}

}  // namespace ffyolo
