// read_batch: reads random batches from FFRecord shards with the C++ API and
// reports the throughput; the pattern a training loader uses.
//
//   ffr_read_batch <shard.ffr | dir> [batch_size=64] [batches=100] [--direct]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "ffr/reader.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <shard.ffr | dir> [batch_size=64] [batches=100] [--direct]\n", argv[0]);
    return 2;
  }
  const size_t batch_size = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 64;
  const int batches = argc > 3 ? std::atoi(argv[3]) : 100;
  ffr::ReaderOptions options;
  options.direct_io = argc > 4 && std::strcmp(argv[4], "--direct") == 0;

  std::unique_ptr<ffr::Reader> reader;
  ffr::Status s = ffr::Reader::Open(argv[1], options, &reader);
  if (!s.ok() || reader->size() == 0) {
    std::fprintf(stderr, "%s\n", s.ok() ? "no samples" : s.ToString().c_str());
    return 1;
  }

  // One buffer and one index vector for all batches: steady-state reads allocate nothing.
  ffr::ReadBuffer buffer;
  std::vector<int64_t> indices(batch_size);
  std::vector<ffr::Sample> samples(batch_size);
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> pick(0, reader->size() - 1);
  uint64_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int b = 0; b < batches; ++b) {
    for (int64_t& i : indices) i = pick(rng);
    s = reader->ReadBatch(indices.data(), indices.size(), &buffer, samples.data());
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    for (const ffr::Sample& sample : samples) bytes += sample.size;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s%s: %d batches of %zu samples, %.1f MB/s, %.0f samples/s\n", ffr::IoBackendName(reader->backend()),
              options.direct_io ? " O_DIRECT" : "", batches, batch_size, bytes / seconds / 1e6,
              batches * batch_size / seconds);
  return 0;
}
