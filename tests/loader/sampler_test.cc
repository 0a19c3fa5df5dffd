// DistributedSampler: PyTorch DistributedSampler semantics.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "ffyolo/random.h"
#include "ffyolo/sampler.h"

namespace ffyolo {
namespace {

SamplerOptions Opts(int64_t n, int rank, int world, uint64_t seed = 7) {
  SamplerOptions o;
  o.dataset_size = n;
  o.rank = rank;
  o.world_size = world;
  o.seed = seed;
  return o;
}

TEST(SamplerTest, RanksPartitionThePaddedEpoch) {
  const int64_t n = 103;
  const int world = 4;
  std::map<int64_t, int> seen;
  size_t per_rank = 0;
  for (int r = 0; r < world; ++r) {
    const auto idx = DistributedSampler(Opts(n, r, world)).EpochIndices(3);
    if (r == 0) per_rank = idx.size();
    EXPECT_EQ(idx.size(), per_rank) << "rank " << r;
    for (int64_t i : idx) ++seen[i];
  }
  EXPECT_EQ(per_rank, 26u);  // ceil(103 / 4)
  EXPECT_EQ(seen.size(), static_cast<size_t>(n));  // every sample is read
  int repeated = 0;
  for (auto& [i, count] : seen) {
    EXPECT_LE(count, 2);
    repeated += count - 1;
  }
  EXPECT_EQ(repeated, 26 * 4 - 103);  // only the padding repeats
}

TEST(SamplerTest, RankTakesEveryWorldthOfThePermutation) {
  DistributedSampler r1(Opts(10, 1, 3));
  const auto perm = r1.Permutation(5);
  const auto mine = r1.EpochIndices(5);
  // padded = perm + perm[0:2]; rank 1 takes positions 1, 4, 7, 10.
  ASSERT_EQ(mine.size(), 4u);
  EXPECT_EQ(mine[0], perm[1]);
  EXPECT_EQ(mine[1], perm[4]);
  EXPECT_EQ(mine[2], perm[7]);
  EXPECT_EQ(mine[3], perm[0]);  // padding repeats the head
}

TEST(SamplerTest, PermutationDependsOnSeedAndEpochOnly) {
  const auto a = DistributedSampler(Opts(50, 0, 2, 1)).Permutation(0);
  EXPECT_EQ(a, DistributedSampler(Opts(50, 1, 2, 1)).Permutation(0));  // same for every rank
  EXPECT_NE(a, DistributedSampler(Opts(50, 0, 2, 1)).Permutation(1));
  EXPECT_NE(a, DistributedSampler(Opts(50, 0, 2, 2)).Permutation(0));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
}

TEST(SamplerTest, NoShuffleIsTheIdentity) {
  SamplerOptions o = Opts(5, 0, 1);
  o.shuffle = false;
  EXPECT_EQ(DistributedSampler(o).EpochIndices(9), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(SamplerTest, TinyDatasetPadsRepeatedly) {
  // 2 samples over 5 ranks: the permutation is repeated to fill 5 slots.
  std::multiset<int64_t> all;
  for (int r = 0; r < 5; ++r) {
    const auto idx = DistributedSampler(Opts(2, r, 5)).EpochIndices(0);
    ASSERT_EQ(idx.size(), 1u);
    all.insert(idx[0]);
  }
  EXPECT_EQ(all.count(0) + all.count(1), 5u);
  EXPECT_GE(all.count(0), 2u);
  EXPECT_GE(all.count(1), 2u);
}

TEST(SampleRandomTest, SameKeySameStream) {
  SampleRandom a({1, 2, 3}), b({1, 2, 3}), c({1, 2, 4});
  for (int i = 0; i < 5; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    EXPECT_NE(x, c.Next());
  }
}

TEST(SampleRandomTest, UniformAndBelowStayInRange) {
  SampleRandom r({9});
  double sum = 0;
  for (int i = 0; i < 20000; ++i) {
    const double u = r.Uniform(2.0, 3.0);
    ASSERT_GE(u, 2.0);
    ASSERT_LT(u, 3.0);
    sum += u;
    ASSERT_LT(r.Below(7), 7u);
  }
  EXPECT_NEAR(sum / 20000, 2.5, 0.01);
}

TEST(SampleRandomTest, BetaSymmetricHasTheRightMoments) {
  // Beta(32, 32): mean 0.5, variance 1 / (4 * 65) = 0.003846.
  SampleRandom r({11});
  double sum = 0, sq = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double b = r.BetaSymmetric(32);
    sum += b;
    sq += b * b;
  }
  const double mean = sum / n;
  EXPECT_NEAR(mean, 0.5, 0.003);
  EXPECT_NEAR(sq / n - mean * mean, 1.0 / 260, 0.0004);
}

TEST(WeightedChoicesTest, DrawsInProportionToTheWeights) {
  std::vector<double> weights(4000, 0.0);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = i % 4 == 1 ? 1.0 : i % 4 == 3 ? 3.0 : 0.0;
  const std::vector<int64_t> drawn = WeightedChoices(weights, 11, 0);
  ASSERT_EQ(drawn.size(), weights.size());
  int64_t ones = 0, threes = 0;
  for (int64_t i : drawn) {
    ASSERT_GE(i, 0);
    ASSERT_LT(i, 4000);
    ASSERT_GT(weights[i], 0) << "drew " << i << ", of weight 0";
    (i % 4 == 1 ? ones : threes)++;
  }
  // Expected 1000 and 3000; a binomial's standard deviation here is about 27.
  EXPECT_NEAR(ones, 1000, 150);
  EXPECT_NEAR(threes, 3000, 150);
  EXPECT_EQ(drawn, WeightedChoices(weights, 11, 0));  // a function of (seed, epoch)
  EXPECT_NE(drawn, WeightedChoices(weights, 11, 1));
  EXPECT_NE(drawn, WeightedChoices(weights, 12, 0));
}

}  // namespace
}  // namespace ffyolo
