// Reader behaviour: round trips, backends, O_DIRECT, threads, corruption.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>

#include "ffr/reader.h"
#include "ffr/shard_writer.h"
#include "testing/faulty_env.h"
#include "testing/test_env.h"

namespace ffr {
namespace {

using ffyolo::testing::ReadFileToString;
using ffyolo::testing::ScratchDir;
using ffyolo::testing::WriteStringToFile;

std::string RandomBytes(std::mt19937* rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>((*rng)() & 0xff);
  return s;
}

std::string ShardName(int i) {
  char name[32];
  std::snprintf(name, sizeof(name), "PART_%05d.ffr", i);
  return name;
}

// Writes `samples` split over shards of `per_shard` samples into dir.
void WriteShards(const std::string& dir, const std::vector<std::string>& samples, size_t per_shard,
                 const ShardWriterOptions& options = ShardWriterOptions()) {
  size_t shard = 0;
  for (size_t begin = 0; begin < samples.size() || (samples.empty() && shard == 0); begin += per_shard, ++shard) {
    const size_t end = std::min(samples.size(), begin + per_shard);
    std::unique_ptr<ShardWriter> w;
    ASSERT_TRUE(ShardWriter::Create(dir + "/" + ShardName(static_cast<int>(shard)),
                                    static_cast<int64_t>(end - begin), options, &w)
                    .ok());
    for (size_t i = begin; i < end; ++i) ASSERT_TRUE(w->Append(samples[i].data(), samples[i].size()).ok());
    ASSERT_TRUE(w->Finish().ok());
    if (samples.empty()) break;
  }
}

std::vector<std::string> MakeSamples(size_t n, size_t max_size, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> samples;
  for (size_t i = 0; i < n; ++i) samples.push_back(RandomBytes(&rng, rng() % (max_size + 1)));
  return samples;
}

std::string AsString(const Sample& s) { return std::string(reinterpret_cast<const char*>(s.data), s.size); }

struct Config {
  IoBackend backend;
  bool direct;
};

class ReaderBackendTest : public ::testing::TestWithParam<Config> {
 protected:
  // Opens `path` with this test's configuration; skips where O_DIRECT is unsupported.
  std::unique_ptr<Reader> OpenOrSkip(const std::string& path) {
    ReaderOptions opts;
    opts.backend = GetParam().backend;
    opts.direct_io = GetParam().direct;
    opts.queue_depth = 8;  // smaller than the batches, so that batches run in waves
    std::unique_ptr<Reader> r;
    Status s = Reader::Open(path, opts, &r);
    if (s.IsNotSupported()) return nullptr;
    EXPECT_TRUE(s.ok()) << s.ToString();
    return r;
  }
};

TEST_P(ReaderBackendTest, RoundTripOverManyShards) {
  ScratchDir dir("many");
  const auto samples = MakeSamples(97, 9000, 1);
  WriteShards(dir.path(), samples, 10);
  auto r = OpenOrSkip(dir.path());
  if (!r) GTEST_SKIP() << "O_DIRECT or io_uring unsupported here";
  ASSERT_EQ(r->size(), 97);
  EXPECT_EQ(r->shard_paths().size(), 10u);
  ReadBuffer buf;
  for (int64_t i = 0; i < r->size(); ++i) {
    Sample s;
    ASSERT_TRUE(r->Read(i, &buf, &s).ok());
    EXPECT_EQ(AsString(s), samples[i]) << "sample " << i;
  }
  // A batch in random order with duplicates.
  std::vector<int64_t> idx;
  std::mt19937 rng(7);
  for (int k = 0; k < 200; ++k) idx.push_back(rng() % 97);
  std::vector<Sample> out(idx.size());
  ASSERT_TRUE(r->ReadBatch(idx.data(), idx.size(), &buf, out.data()).ok());
  for (size_t k = 0; k < idx.size(); ++k) EXPECT_EQ(AsString(out[k]), samples[idx[k]]) << "batch slot " << k;
  // Caller-provided destinations.
  std::vector<std::string> dst(idx.size());
  std::vector<uint8_t*> ptrs;
  for (size_t k = 0; k < idx.size(); ++k) {
    dst[k].resize(r->sample_size(idx[k]));
    ptrs.push_back(reinterpret_cast<uint8_t*>(dst[k].data()));
  }
  ASSERT_TRUE(r->ReadBatchInto(idx.data(), idx.size(), ptrs.data()).ok());
  for (size_t k = 0; k < idx.size(); ++k) EXPECT_EQ(dst[k], samples[idx[k]]);
}

TEST_P(ReaderBackendTest, ManyThreadsReadAtOnce) {
  ScratchDir dir("threads");
  const auto samples = MakeSamples(300, 20000, 2);
  WriteShards(dir.path(), samples, 64);
  auto r = OpenOrSkip(dir.path());
  if (!r) GTEST_SKIP() << "O_DIRECT or io_uring unsupported here";
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      ReadBuffer buf;
      for (int iter = 0; iter < 20; ++iter) {
        std::vector<int64_t> idx(32);
        for (auto& i : idx) i = rng() % 300;
        std::vector<Sample> out(idx.size());
        if (!r->ReadBatch(idx.data(), idx.size(), &buf, out.data()).ok()) {
          ++mismatches[t];
          continue;
        }
        for (size_t k = 0; k < idx.size(); ++k)
          if (AsString(out[k]) != samples[idx[k]]) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST_P(ReaderBackendTest, StreamDeliversEverySampleOnceWithItsBytes) {
  ScratchDir dir("stream");
  const auto samples = MakeSamples(150, 9000, 8);
  WriteShards(dir.path(), samples, 7);
  auto r = OpenOrSkip(dir.path());
  if (!r) GTEST_SKIP() << "O_DIRECT or io_uring unsupported here";
  std::vector<int64_t> idx;
  std::mt19937 rng(9);
  for (int k = 0; k < 400; ++k) idx.push_back(rng() % 150);  // many more than the 8 in flight, duplicates too
  std::vector<int> seen(idx.size(), 0);
  size_t wrong = 0;
  ASSERT_TRUE(r->ReadStream(idx.data(), idx.size(), [&](size_t k, const Sample& s) {
                 ++seen[k];
                 wrong += AsString(s) != samples[idx[k]];
                 return Status::OK();
               }).ok());
  EXPECT_EQ(wrong, 0u);
  for (size_t k = 0; k < idx.size(); ++k) EXPECT_EQ(seen[k], 1) << "position " << k;

  // The consumer's error stops the stream and comes back.
  size_t calls = 0;
  const Status stopped = r->ReadStream(idx.data(), idx.size(), [&](size_t, const Sample&) {
    return ++calls == 10 ? Status::Aborted("enough") : Status::OK();
  });
  EXPECT_TRUE(stopped.IsAborted()) << stopped.ToString();
  EXPECT_EQ(calls, 10u);
}

TEST_P(ReaderBackendTest, FlippedByteIsReportedWithFileAndSample) {
  ScratchDir dir("flip");
  const auto samples = MakeSamples(20, 3000, 3);
  WriteShards(dir.path(), samples, 20);
  const std::string path = dir / ShardName(0);
  std::string bytes = ReadFileToString(path);
  const uint64_t header = 12 + 12 * 20;
  uint64_t offset = header;
  for (int i = 0; i < 5; ++i) offset += samples[i].size();
  ASSERT_GT(samples[5].size(), 0u);
  bytes[offset] ^= 0x40;  // inside sample 5
  ASSERT_TRUE(WriteStringToFile(path, bytes));
  auto r = OpenOrSkip(path);
  if (!r) GTEST_SKIP() << "O_DIRECT or io_uring unsupported here";
  ReadBuffer buf;
  Sample s;
  Status st = r->Read(5, &buf, &s);
  ASSERT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("PART_00000.ffr sample 5"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("checksum"), std::string::npos);
  EXPECT_TRUE(r->Read(4, &buf, &s).ok());
  const int64_t batch[3] = {1, 5, 2};
  Sample out[3];
  EXPECT_TRUE(r->ReadBatch(batch, 3, &buf, out).IsCorruption());
  EXPECT_TRUE(r->ReadStream(batch, 3, [](size_t, const Sample&) { return Status::OK(); }).IsCorruption());
}

// What an aligned shard's reader returns: each sample followed by its zero
// padding, except the last of each shard.
std::vector<std::string> PaddedSamples(const std::vector<std::string>& samples, size_t per_shard, size_t alignment) {
  std::vector<std::string> padded = samples;
  for (size_t i = 0; i < padded.size(); ++i)
    if ((i + 1) % per_shard != 0 && i + 1 != padded.size())
      padded[i].resize((padded[i].size() + alignment - 1) / alignment * alignment, '\0');
  return padded;
}

TEST_P(ReaderBackendTest, AlignedShardsReadBackSamplesWithTheirPadding) {
  ScratchDir dir("aligned");
  const auto samples = MakeSamples(60, 9000, 13);
  ShardWriterOptions options;
  options.sample_alignment = 4096;
  WriteShards(dir.path(), samples, 25, options);
  const std::vector<std::string> expected = PaddedSamples(samples, 25, 4096);
  auto r = OpenOrSkip(dir.path());
  if (!r) GTEST_SKIP() << "O_DIRECT or io_uring unsupported here";
  ASSERT_EQ(r->size(), 60);
  ReadBuffer buf;
  for (int64_t i = 0; i < r->size(); ++i) {
    Sample s;
    ASSERT_TRUE(r->Read(i, &buf, &s).ok()) << "sample " << i;
    EXPECT_EQ(AsString(s), expected[i]) << "sample " << i;
  }
  std::vector<int64_t> idx;
  std::mt19937 rng(14);
  for (int k = 0; k < 100; ++k) idx.push_back(rng() % 60);
  std::vector<Sample> out(idx.size());
  ASSERT_TRUE(r->ReadBatch(idx.data(), idx.size(), &buf, out.data()).ok());
  for (size_t k = 0; k < idx.size(); ++k) EXPECT_EQ(AsString(out[k]), expected[idx[k]]) << "batch slot " << k;
  size_t wrong = 0;
  ASSERT_TRUE(r->ReadStream(idx.data(), idx.size(), [&](size_t k, const Sample& s) {
                 wrong += AsString(s) != expected[idx[k]];
                 return Status::OK();
               }).ok());
  EXPECT_EQ(wrong, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, ReaderBackendTest,
                         ::testing::Values(Config{IoBackend::kPread, false}, Config{IoBackend::kIoUring, false},
                                           Config{IoBackend::kPread, true}, Config{IoBackend::kIoUring, true},
                                           Config{IoBackend::kMmap, false}),
                         [](const auto& info) {
                           return std::string(IoBackendName(info.param.backend)) +
                                  (info.param.direct ? "_direct" : "_buffered");
                         });

TEST(ReaderTest, MmapViewsPointIntoTheMappedShardAndNeedNoBuffer) {
  ScratchDir dir("mmap");
  const auto samples = MakeSamples(6, 500, 11);
  WriteShards(dir.path(), samples, 2);
  ReaderOptions opts;
  opts.backend = IoBackend::kMmap;
  std::unique_ptr<Reader> r;
  ASSERT_TRUE(Reader::Open(dir.path(), opts, &r).ok());
  EXPECT_EQ(r->backend(), IoBackend::kMmap);
  ReadBuffer buf;
  const int64_t idx[3] = {5, 0, 5};
  Sample out[3];
  ASSERT_TRUE(r->ReadBatch(idx, 3, &buf, out).ok());
  EXPECT_EQ(buf.capacity(), 0u) << "views of the mapping fill no buffer";
  EXPECT_EQ(out[0].data, out[2].data) << "the same sample is the same place in the page cache";
  // Views stay valid across later reads (they are not in a reused buffer).
  Sample again;
  ASSERT_TRUE(r->Read(1, &buf, &again).ok());
  EXPECT_EQ(AsString(out[1]), samples[0]);
  EXPECT_EQ(AsString(out[0]), samples[5]);
}

// What sample_alignment is for: with O_DIRECT, an aligned sample costs its own
// blocks and no more, where the same sample packed back to back costs one more.
TEST(ReaderTest, DirectReadOfAnAlignedSampleFetchesOnlyItsBlocks) {
  const std::vector<std::string> samples = {std::string(16384, 'a'), std::string(10000, 'b'),
                                            std::string(16384, 'c'), std::string(7000, 'd')};
  for (const uint64_t alignment : {uint64_t{0}, uint64_t{4096}}) {
    ScratchDir dir("direct_blocks");
    ShardWriterOptions writer_options;
    writer_options.sample_alignment = alignment;
    WriteShards(dir.path(), samples, samples.size(), writer_options);
    ffyolo::testing::FaultyEnv env;  // records the reads
    ReaderOptions options;
    options.backend = IoBackend::kPread;
    options.direct_io = true;
    options.env = &env;
    std::unique_ptr<Reader> r;
    const Status s = Reader::Open(dir.path(), options, &r);
    if (s.IsNotSupported()) GTEST_SKIP() << "O_DIRECT unsupported here";
    ASSERT_TRUE(s.ok()) << s.ToString();
    ReadBuffer buf;
    for (int64_t i : {0, 2}) {  // the 16 KiB samples
      env.ClearReads();
      Sample sample;
      ASSERT_TRUE(r->Read(i, &buf, &sample).ok());
      ASSERT_EQ(env.reads().size(), 1u);
      EXPECT_EQ(env.reads()[0].n, alignment > 0 ? 16384u : 20480u) << "sample " << i << ", alignment " << alignment;
      EXPECT_EQ(AsString(sample), samples[i]);
    }
  }
}

TEST(ReaderTest, MmapAndDirectIoAreRefusedTogether) {
  ScratchDir dir("mmap_direct");
  WriteShards(dir.path(), MakeSamples(2, 10, 12), 2);
  ReaderOptions opts;
  opts.backend = IoBackend::kMmap;
  opts.direct_io = true;
  std::unique_ptr<Reader> r;
  const Status s = Reader::Open(dir.path(), opts, &r);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

TEST(ReaderTest, AutoBackendPicksIoUringWhenAvailable) {
  ScratchDir dir("auto");
  WriteShards(dir.path(), MakeSamples(3, 10, 4), 3);
  std::unique_ptr<Reader> r;
  ASSERT_TRUE(Reader::Open(dir.path(), ReaderOptions(), &r).ok());
  EXPECT_NE(r->backend(), IoBackend::kAuto);
  ReaderOptions uring;
  uring.backend = IoBackend::kIoUring;
  std::unique_ptr<Reader> r2;
  if (Reader::Open(dir.path(), uring, &r2).ok()) {
    EXPECT_EQ(r->backend(), IoBackend::kIoUring);
  }
}

TEST(ReaderTest, EmptyShardHasNoSamples) {
  ScratchDir dir("empty");
  WriteShards(dir.path(), {}, 10);
  std::unique_ptr<Reader> r;
  ASSERT_TRUE(Reader::Open(dir.path(), ReaderOptions(), &r).ok());
  EXPECT_EQ(r->size(), 0);
  ReadBuffer buf;
  Sample s;
  EXPECT_TRUE(r->Read(0, &buf, &s).IsInvalidArgument());
}

TEST(ReaderTest, OutOfRangeIndexIsInvalidArgument) {
  ScratchDir dir("range");
  WriteShards(dir.path(), MakeSamples(4, 10, 5), 4);
  std::unique_ptr<Reader> r;
  ASSERT_TRUE(Reader::Open(dir.path(), ReaderOptions(), &r).ok());
  ReadBuffer buf;
  Sample s;
  Status st = r->Read(4, &buf, &s);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("out of range"), std::string::npos);
  EXPECT_TRUE(r->Read(-1, &buf, &s).IsInvalidArgument());
}

TEST(ReaderTest, TruncatedShardIsRejectedAtOpen) {
  ScratchDir dir("trunc");
  WriteShards(dir.path(), MakeSamples(10, 1000, 6), 10);
  const std::string path = dir / ShardName(0);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  std::unique_ptr<Reader> r;
  Status st = Reader::Open(path, ReaderOptions(), &r);
  ASSERT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find(path), std::string::npos);
}

TEST(ReaderTest, EmptyDirectoryAndMissingPathAreNotFound) {
  ScratchDir dir("none");
  std::unique_ptr<Reader> r;
  EXPECT_TRUE(Reader::Open(dir.path(), ReaderOptions(), &r).IsNotFound());
  EXPECT_TRUE(Reader::Open(dir / "nope.ffr", ReaderOptions(), &r).IsNotFound());
}

TEST(ShardWriterTest, AbandonedWriterLeavesNoShard) {
  ScratchDir dir("abandon");
  const std::string path = dir / ShardName(0);
  {
    std::unique_ptr<ShardWriter> w;
    ASSERT_TRUE(ShardWriter::Create(path, 2, nullptr, &w).ok());
    ASSERT_TRUE(w->Append("x", 1).ok());
    EXPECT_TRUE(std::filesystem::exists(path + ".tmp"));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(ShardWriterTest, KilledWriterLeavesNothingThatOpens) {
  ScratchDir dir("killed");
  const std::string path = dir / ShardName(0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::unique_ptr<ShardWriter> w;
    if (!ShardWriter::Create(path, 1000, nullptr, &w).ok()) _exit(1);
    std::string sample(4096, 'k');
    for (int i = 0; i < 500; ++i) w->Append(sample.data(), sample.size());
    _exit(0);  // dies without Finish and without running destructors, like a kill
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::exists(path + ".tmp"));
  std::unique_ptr<Reader> r;
  EXPECT_TRUE(Reader::Open(dir.path(), ReaderOptions(), &r).IsNotFound());
  // Even opened by name, the temporary file is refused: its header was never written.
  EXPECT_TRUE(Reader::Open(path + ".tmp", ReaderOptions(), &r).IsCorruption());
}

TEST(ShardWriterTest, CountMismatchFailsFinish) {
  ScratchDir dir("count");
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(dir / ShardName(0), 2, nullptr, &w).ok());
  ASSERT_TRUE(w->Append("a", 1).ok());
  EXPECT_TRUE(w->Finish().IsInvalidArgument());
  ASSERT_TRUE(w->Append("b", 1).ok());
  EXPECT_TRUE(w->Append("c", 1).IsInvalidArgument());
}

}  // namespace
}  // namespace ffr
