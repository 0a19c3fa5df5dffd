// SampleRandom: the randomness of one sample, a pure function of a key
// (seed, epoch, position, stream). The loader never draws from a shared or
// per-thread generator, so batches are the same whatever the number of threads,
// and resuming at any position reproduces them exactly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>

namespace ffyolo {

// SplitMix64's finalizer: a bijective 64-bit mix.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A small counter-based generator (SplitMix64 over a keyed counter).
class SampleRandom {
 public:
  // Keys mix in order: SampleRandom({seed, epoch, position}).
  SampleRandom(std::initializer_list<uint64_t> key) {
    uint64_t s = 0x5eed5eed5eed5eedull;
    for (uint64_t k : key) s = Mix64(s ^ Mix64(k));
    state_ = s;
  }

  uint64_t Next() { return Mix64(state_ += 0x9e3779b97f4a7c15ull); }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, unbiased enough for n << 2^64).
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64); }
  // floor(Uniform() * n), at most n - 1, for n > 0: Python's random.randint(0, n - 1) and
  // random.choices as the Ultralytics 8 mode draws them (its tests feed Ultralytics the same uniforms).
  int64_t UniformIndex(int64_t n) { return std::min(static_cast<int64_t>(Uniform() * static_cast<double>(n)), n - 1); }
  // True with probability p.
  bool Bernoulli(double p) { return Uniform() < p; }
  // Beta(a, a) for integer a >= 1 (mixup uses Beta(32, 32)): the a-th order
  // statistic of 2a-1 uniforms.
  double BetaSymmetric(int a);

 private:
  uint64_t state_;
};

}  // namespace ffyolo
