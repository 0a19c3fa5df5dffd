// The random source of the synthetic dataset: SplitMix64 with distributions written out
// here rather than taken from <random>, whose distributions differ between standard
// libraries, so that a (seed, split, index) triple yields the same image everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace ffyolo {

class SynthRng {
 public:
  explicit SynthRng(uint64_t seed) : state_(seed) {}

  // The SplitMix64 finaliser: a bijective 64-bit hash, also used to derive seeds.
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // FNV-1a of a string, to fold a split name into a seed.
  static uint64_t HashString(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    return h;
  }

  uint64_t Next() { return Mix(state_ += 0x9e3779b97f4a7c15ULL); }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  // Log-uniform in [lo, hi]: as many small objects per octave as large ones.
  double LogUniform(double lo, double hi) { return std::exp(Uniform(std::log(lo), std::log(hi))); }
  // Uniform integer in [lo, hi], both inclusive.
  int UniformInt(int lo, int hi) {
    const uint64_t span = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo + 1);
    // Lemire's multiply-shift: the high word of Next() * span lies in [0, span).
    const auto offset = static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * span) >> 64);
    return static_cast<int>(lo + static_cast<int64_t>(offset));
  }
  bool Bernoulli(double p) { return Uniform() < p; }

 private:
  uint64_t state_;
};

}  // namespace ffyolo
