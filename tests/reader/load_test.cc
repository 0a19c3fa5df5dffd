// The reader under load while another process truncates and rewrites one of
// its shards: 16 threads of mixed Read / ReadBatch / ReadBatchInto /
// ReadStream on every backend. No crash (the mmap backend's SIGBUS included),
// every error names the abused shard and the sample, and every sample
// returned as good is checked against the bytes written.
//
// Each backend runs FFYOLO_READER_LOAD_SECONDS seconds (default 2, so that CI
// stays short; docs/reliability.md records a 60-s run).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "ffr/reader.h"
#include "ffr/shard_writer.h"
#include "testing/test_env.h"

namespace ffr {
namespace {

using ffyolo::testing::ReadFileToString;
using ffyolo::testing::ScratchDir;
using ffyolo::testing::WriteStringToFile;

std::vector<std::string> MakeSamples(size_t n, size_t max_size, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> samples;
  for (size_t i = 0; i < n; ++i) {
    std::string s(rng() % (max_size + 1), '\0');
    for (char& c : s) c = static_cast<char>(rng() & 0xff);
    samples.push_back(s);
  }
  return samples;
}

void WriteShard(const std::string& path, const std::vector<std::string>& samples, size_t begin, size_t end) {
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, static_cast<int64_t>(end - begin), ShardWriterOptions(), &w).ok());
  for (size_t i = begin; i < end; ++i) ASSERT_TRUE(w->Append(samples[i].data(), samples[i].size()).ok());
  ASSERT_TRUE(w->Finish().ok());
}

std::string AsString(const Sample& s) { return std::string(reinterpret_cast<const char*>(s.data), s.size); }

// A whole-file write in place (same inode, as an editor or `cp` over it does).
void WriteInPlace(const std::string& path, const std::string& bytes) {
  const int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0) return;
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
}

// The other process: until killed, truncates the shard in place to a random
// length and writes it back, replaces it by rename, or (`damage`) writes it
// back with one sample byte flipped for a moment. Each change bumps
// *generation first, so that the readers know when a view may have changed.
[[noreturn]] void AbuseShard(const std::string& path, const std::string& pristine, uint64_t data_begin,
                             bool damage, std::atomic<uint64_t>* generation) {
  std::mt19937 rng(14);
  const auto pause = [&] { std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000)); };
  for (;;) {
    const unsigned action = rng() % (damage ? 3 : 2);
    generation->fetch_add(1);
    if (action == 0) {
      if (truncate(path.c_str(), static_cast<off_t>(rng() % pristine.size())) != 0) _exit(2);
      pause();
      WriteInPlace(path, pristine);
    } else if (action == 1) {
      const std::string tmp = path + ".tmp";
      if (!WriteStringToFile(tmp, pristine) || rename(tmp.c_str(), path.c_str()) != 0) _exit(3);
    } else {
      std::string bad = pristine;
      bad[data_begin + rng() % (bad.size() - data_begin)] ^= 0x20;
      WriteInPlace(path, bad);
      pause();
      WriteInPlace(path, pristine);
    }
    generation->fetch_add(1);
    pause();
  }
}

double LoadSeconds() {
  const char* s = std::getenv("FFYOLO_READER_LOAD_SECONDS");
  return s && std::atof(s) > 0 ? std::atof(s) : 2.0;
}

struct Config {
  IoBackend backend;
  bool direct;
};

class ReaderUnderLoadTest : public ::testing::TestWithParam<Config> {};

TEST_P(ReaderUnderLoadTest, TruncatedAndReplacedShardGivesNamedErrorsNeverWrongBytes) {
  const Config c = GetParam();
  ScratchDir dir("load");
  const auto samples = MakeSamples(240, 12000, 5);
  const std::string stable = dir / "PART_00000.ffr", abused = dir / "PART_00001.ffr";
  WriteShard(stable, samples, 0, 120);
  WriteShard(abused, samples, 120, 240);
  const std::string pristine = ReadFileToString(abused);
  ReaderOptions opts;
  opts.backend = c.backend;
  opts.direct_io = c.direct;
  opts.queue_depth = 16;
  std::shared_ptr<Reader> reader;
  {
    std::unique_ptr<Reader> r;
    const Status s = Reader::Open(dir.path(), opts, &r);
    if (s.IsNotSupported() || s.IsInvalidArgument()) GTEST_SKIP() << s.ToString();
    ASSERT_TRUE(s.ok()) << s.ToString();
    reader = std::move(r);
  }

  // Shared with the child: the count of changes begun and finished.
  auto* generation = static_cast<std::atomic<uint64_t>*>(
      mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(generation, MAP_FAILED);
  new (generation) std::atomic<uint64_t>(0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  // The mmap backend's views are the file itself: a sample damaged in place
  // after its check would change under the caller (documented in reader.h).
  if (child == 0) AbuseShard(abused, pristine, 12 + 12 * 120, c.backend != IoBackend::kMmap, generation);

  std::mutex mu;  // guards reader swaps and the failure list
  std::vector<std::string> failures;
  std::atomic<int64_t> good{0}, errors{0}, open_errors{0}, changed_views{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(LoadSeconds());
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    if (failures.size() < 20) failures.push_back(what);
  };
  // A sample handed out as good: compared with what was written. An mmap
  // view may change after it was handed out only while the file changed: a
  // change under way when the read began (an odd count) or begun since.
  auto check = [&](int64_t index, const uint8_t* data, size_t size, uint64_t gen_before, const char* how) {
    const std::string got(reinterpret_cast<const char*>(data), size);
    if (got == samples[index]) {
      ++good;
      return;
    }
    const uint64_t gen_now = generation->load();
    if (c.backend == IoBackend::kMmap && (gen_before % 2 == 1 || gen_now != gen_before)) {
      ++changed_views;
      return;
    }
    size_t first = 0, differ = 0, zeros = 0;
    for (size_t i = 0; i < std::min(got.size(), samples[index].size()); ++i) {
      if (got[i] == samples[index][i]) continue;
      if (differ++ == 0) first = i;
      zeros += got[i] == 0 ? 1 : 0;
    }
    fail("sample " + std::to_string(index) + " returned as good with wrong bytes by " + how + " (" +
         std::to_string(got.size()) + " bytes for " + std::to_string(samples[index].size()) + ", " +
         std::to_string(differ) + " differ from byte " + std::to_string(first) + ", " + std::to_string(zeros) +
         " of them zeros; shard changes " + std::to_string(gen_before) + " -> " + std::to_string(gen_now) + ")");
  };
  auto check_error = [&](const Status& s) {
    ++errors;
    if (s.message().find(abused + " sample ") == std::string::npos) fail("error without the shard and sample: " + s.ToString());
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      ReadBuffer buf;
      std::vector<uint8_t> into_bytes;
      for (int64_t op = 0; std::chrono::steady_clock::now() < deadline; ++op) {
        std::shared_ptr<Reader> r;
        if (t == 0 && op % 20 == 0) {  // a fresh reader now and then sees the replaced file
          std::unique_ptr<Reader> fresh;
          const Status s = Reader::Open(dir.path(), opts, &fresh);
          if (s.ok()) {
            std::lock_guard<std::mutex> lock(mu);
            reader = std::move(fresh);
          } else {
            ++open_errors;
            if (s.message().find(abused) == std::string::npos) fail("open error without the shard: " + s.ToString());
          }
        }
        {
          std::lock_guard<std::mutex> lock(mu);
          r = reader;
        }
        const uint64_t gen = generation->load();
        std::vector<int64_t> idx(1 + rng() % 24);
        for (int64_t& i : idx) i = static_cast<int64_t>(rng() % samples.size());
        Status s;
        switch (rng() % 4) {
          case 0: {
            Sample out;
            s = r->Read(idx[0], &buf, &out);
            if (s.ok()) check(idx[0], out.data, out.size, gen, "Read");
            break;
          }
          case 1: {
            std::vector<Sample> out(idx.size());
            s = r->ReadBatch(idx.data(), idx.size(), &buf, out.data());
            if (s.ok())
              for (size_t k = 0; k < idx.size(); ++k) check(idx[k], out[k].data, out[k].size, gen, "ReadBatch");
            break;
          }
          case 2: {
            std::vector<std::vector<uint8_t>> dst(idx.size());
            std::vector<uint8_t*> ptrs;
            for (size_t k = 0; k < idx.size(); ++k) {
              dst[k].resize(std::max<size_t>(r->sample_size(idx[k]), 1));
              ptrs.push_back(dst[k].data());
            }
            s = r->ReadBatchInto(idx.data(), idx.size(), ptrs.data());
            if (s.ok())
              for (size_t k = 0; k < idx.size(); ++k) check(idx[k], dst[k].data(), samples[idx[k]].size(), gen, "ReadBatchInto");
            break;
          }
          default:
            s = r->ReadStream(idx.data(), idx.size(), [&](size_t k, const Sample& sample) {
              check(idx[k], sample.data, sample.size, gen, "ReadStream");
              return Status::OK();
            });
        }
        if (!s.ok()) check_error(s);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the truncating process stopped: " << status;
  const uint64_t changes = generation->load() / 2;
  munmap(generation, sizeof(std::atomic<uint64_t>));
  for (const std::string& f : failures) ADD_FAILURE() << f;
  std::printf("%s%s, %.0f s: %lld samples good, %lld reads refused, %lld opens refused, %lld mmap views changed "
              "after return, %llu changes to the shard\n",
              IoBackendName(c.backend), c.direct ? " O_DIRECT" : "", LoadSeconds(), static_cast<long long>(good.load()),
              static_cast<long long>(errors.load()), static_cast<long long>(open_errors.load()),
              static_cast<long long>(changed_views.load()), static_cast<unsigned long long>(changes));
  EXPECT_GT(good.load(), 0);
  EXPECT_GT(changes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, ReaderUnderLoadTest,
                         ::testing::Values(Config{IoBackend::kIoUring, false}, Config{IoBackend::kIoUring, true},
                                           Config{IoBackend::kPread, false}, Config{IoBackend::kPread, true},
                                           Config{IoBackend::kMmap, false}),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           return std::string(IoBackendName(info.param.backend)) + (info.param.direct ? "_direct" : "");
                         });

// The mmap backend used to die of SIGBUS on a shard truncated after Open.
TEST(ReaderUnderLoadTest, MappedShardTruncatedAfterOpenIsRefusedNotACrash) {
  ScratchDir dir("shrunk");
  const auto samples = MakeSamples(64, 9000, 6);
  const std::string path = dir / "PART_00000.ffr";
  WriteShard(path, samples, 0, samples.size());
  const std::string pristine = ReadFileToString(path);
  ReaderOptions opts;
  opts.backend = IoBackend::kMmap;
  std::unique_ptr<Reader> r;
  ASSERT_TRUE(Reader::Open(path, opts, &r).ok());
  ASSERT_EQ(truncate(path.c_str(), 8192), 0);
  ReadBuffer buf;
  Sample s;
  const Status st = r->Read(63, &buf, &s);  // its pages are gone
  ASSERT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find(path + " sample 63"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("shrank"), std::string::npos) << st.message();
  // Written back whole, the shard is still refused by this reader (its lost
  // pages read as zeros now) and read again by a fresh one.
  WriteInPlace(path, pristine);
  EXPECT_TRUE(r->Read(62, &buf, &s).IsCorruption());
  r.reset();
  ASSERT_TRUE(Reader::Open(path, opts, &r).ok());
  ASSERT_TRUE(r->Read(63, &buf, &s).ok());
  EXPECT_EQ(AsString(s), samples[63]);
}

}  // namespace
}  // namespace ffr
