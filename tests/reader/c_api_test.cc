// The C API (ffr.h): round trips through every backend, codes and messages.
#include "ffr/ffr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "testing/test_env.h"

namespace {

using ffyolo::testing::ReadFileToString;
using ffyolo::testing::ScratchDir;
using ffyolo::testing::WriteStringToFile;

std::string LastError() { return ffr_last_error(); }

// Writes `samples` as one shard through the C API.
void WriteShard(const std::string& path, const std::vector<std::string>& samples) {
  ffr_writer* w = nullptr;
  ASSERT_EQ(ffr_writer_create(path.c_str(), static_cast<int64_t>(samples.size()), &w), FFR_OK) << LastError();
  for (const std::string& s : samples) ASSERT_EQ(ffr_writer_append(w, s.data(), s.size()), FFR_OK) << LastError();
  ASSERT_EQ(ffr_writer_finish(w), FFR_OK) << LastError();
}

std::vector<std::string> RandomSamples(size_t n, size_t max_size, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> samples;
  for (size_t i = 0; i < n; ++i) {
    std::string s(rng() % (max_size + 1), '\0');
    for (char& c : s) c = static_cast<char>(rng() & 0xff);
    samples.push_back(std::move(s));
  }
  samples[1].clear();  // an empty sample is legal
  return samples;
}

// A reader that the test closes even when an assertion fails.
struct ReaderHandle {
  ffr_reader* r = nullptr;
  ~ReaderHandle() { ffr_reader_close(r); }
};

TEST(CApiTest, Crc32IsZlibCrc) {
  EXPECT_EQ(ffr_crc32("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(ffr_crc32(nullptr, 0), 0u);
}

// The golden vector of the FFRecord notes (§1.4), checked by the reference C++ writer.
TEST(CApiTest, WriterMatchesTheReferenceBytes) {
  ScratchDir dir("golden");
  const std::string path = dir / "golden.ffr";
  WriteShard(path, {"abc", "hello", ""});
  const unsigned char expected[] = {
      0x6b, 0x93, 0x1b, 0xd4, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc2, 0x41, 0x24, 0x35,
      0x86, 0xa6, 0x10, 0x36, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x33, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x38, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x61, 0x62, 0x63, 0x68, 0x65, 0x6c, 0x6c, 0x6f};
  EXPECT_EQ(ReadFileToString(path), std::string(reinterpret_cast<const char*>(expected), sizeof(expected)));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

struct Config {
  const char* name;
  ffr_backend backend;
  int direct_io;
  const char* backend_name;  // what ffr_reader_backend says
};

class CApiRoundTripTest : public ::testing::TestWithParam<Config> {};

TEST_P(CApiRoundTripTest, ReadsBackWhatWasWritten) {
  ScratchDir dir("roundtrip");
  const std::vector<std::string> samples = RandomSamples(60, 9000, 7);
  const std::vector<std::string> first(samples.begin(), samples.begin() + 25);
  const std::vector<std::string> second(samples.begin() + 25, samples.end());
  WriteShard(dir / "PART_00001.ffr", second);  // written out of order: the reader sorts by name
  WriteShard(dir / "PART_00000.ffr", first);

  ffr_reader_options options;
  ffr_reader_options_init(&options);
  EXPECT_EQ(options.backend, FFR_BACKEND_AUTO);
  EXPECT_EQ(options.direct_io, 0);
  EXPECT_NE(options.verify_checksums, 0);
  options.backend = GetParam().backend;
  options.direct_io = GetParam().direct_io;
  options.queue_depth = 8;  // smaller than the batch, so that it runs in waves
  ReaderHandle h;
  const int rc = ffr_reader_open(dir.path().c_str(), &options, &h.r);
  if (rc == FFR_NOT_SUPPORTED) GTEST_SKIP() << LastError();
  ASSERT_EQ(rc, FFR_OK) << LastError();
  if (GetParam().backend != FFR_BACKEND_AUTO) {
    EXPECT_STREQ(ffr_reader_backend(h.r), GetParam().backend_name);
  }
  ASSERT_EQ(ffr_reader_size(h.r), static_cast<int64_t>(samples.size()));

  for (size_t i = 0; i < samples.size(); ++i) {
    uint64_t size = 0;
    uint32_t crc = 0;
    ASSERT_EQ(ffr_reader_sample_size(h.r, static_cast<int64_t>(i), &size), FFR_OK) << LastError();
    ASSERT_EQ(ffr_reader_sample_crc(h.r, static_cast<int64_t>(i), &crc), FFR_OK) << LastError();
    EXPECT_EQ(size, samples[i].size());
    EXPECT_EQ(crc, ffr_crc32(samples[i].data(), samples[i].size()));
    std::string got(samples[i].size() + 10, 'x');  // a larger buffer is fine
    uint64_t read = 0;
    ASSERT_EQ(ffr_reader_read(h.r, static_cast<int64_t>(i), got.data(), got.size(), &read), FFR_OK) << LastError();
    ASSERT_EQ(read, samples[i].size());
    got.resize(read);
    EXPECT_EQ(got, samples[i]) << "sample " << i;
  }

  // One batch over both shards, shuffled, with a duplicate.
  std::vector<int64_t> indices(samples.size());
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<int64_t>(i);
  std::shuffle(indices.begin(), indices.end(), std::mt19937(3));
  indices.push_back(indices.front());
  std::vector<std::string> outs;
  std::vector<void*> dsts;
  std::vector<uint64_t> capacities;
  for (int64_t i : indices) outs.emplace_back(samples[i].size(), '\0');
  for (std::string& o : outs) {
    dsts.push_back(o.data());
    capacities.push_back(o.size());
  }
  ASSERT_EQ(ffr_reader_read_batch(h.r, indices.data(), indices.size(), dsts.data(), capacities.data()), FFR_OK)
      << LastError();
  for (size_t k = 0; k < indices.size(); ++k) EXPECT_EQ(outs[k], samples[indices[k]]) << "batch slot " << k;
  EXPECT_EQ(ffr_reader_read_batch(h.r, nullptr, 0, nullptr, nullptr), FFR_OK);

  // The same list as a stream: every position once, with its bytes; a consumer may stop it.
  struct Seen {
    const std::vector<std::string>* samples;
    const std::vector<int64_t>* indices;
    std::vector<int> count;
    size_t wrong = 0;
  } seen{&samples, &indices, std::vector<int>(indices.size(), 0)};
  auto consume = [](void* user, size_t k, const void* data, uint64_t size) {
    Seen* s = static_cast<Seen*>(user);
    ++s->count[k];
    s->wrong += std::string(static_cast<const char*>(data), size) != (*s->samples)[(*s->indices)[k]];
    return 0;
  };
  ASSERT_EQ(ffr_reader_read_stream(h.r, indices.data(), indices.size(), consume, &seen), FFR_OK) << LastError();
  EXPECT_EQ(seen.wrong, 0u);
  EXPECT_EQ(seen.count, std::vector<int>(indices.size(), 1));
  auto stop = [](void*, size_t, const void*, uint64_t) { return 5; };
  EXPECT_EQ(ffr_reader_read_stream(h.r, indices.data(), indices.size(), stop, nullptr), FFR_ABORTED);
  EXPECT_NE(LastError().find("consumer stopped"), std::string::npos) << LastError();
}

// Found by shard_reader_fuzz: an empty sample read into caller memory given as
// NULL (capacity 0) was taken for a streamed read and popped a stream buffer
// that did not exist.
TEST_P(CApiRoundTripTest, AnEmptySampleReadsIntoNull) {
  ScratchDir dir("empty");
  WriteShard(dir / "PART_00000.ffr", {"abc", "", "de"});
  ffr_reader_options options;
  ffr_reader_options_init(&options);
  options.backend = GetParam().backend;
  options.direct_io = GetParam().direct_io;
  ReaderHandle h;
  const int rc = ffr_reader_open(dir.path().c_str(), &options, &h.r);
  if (rc == FFR_NOT_SUPPORTED) GTEST_SKIP() << LastError();
  ASSERT_EQ(rc, FFR_OK) << LastError();
  uint64_t size = 7;
  ASSERT_EQ(ffr_reader_read(h.r, 1, nullptr, 0, &size), FFR_OK) << LastError();
  EXPECT_EQ(size, 0u);
  const int64_t indices[] = {1, 1};
  void* const dsts[] = {nullptr, nullptr};
  const uint64_t capacities[] = {0, 0};
  EXPECT_EQ(ffr_reader_read_batch(h.r, indices, 2, dsts, capacities), FFR_OK) << LastError();
}

INSTANTIATE_TEST_SUITE_P(Backends, CApiRoundTripTest,
                         ::testing::Values(Config{"auto", FFR_BACKEND_AUTO, 0, ""},
                                           Config{"pread", FFR_BACKEND_PREAD, 0, "pread"},
                                           Config{"io_uring", FFR_BACKEND_IO_URING, 0, "io_uring"},
                                           Config{"io_uring_direct", FFR_BACKEND_IO_URING, 1, "io_uring"},
                                           Config{"pread_direct", FFR_BACKEND_PREAD, 1, "pread"},
                                           Config{"mmap", FFR_BACKEND_MMAP, 0, "mmap"}),
                         [](const ::testing::TestParamInfo<Config>& info) { return std::string(info.param.name); });

TEST(CApiTest, CodeNamesMatchTheStatusNames) {
  EXPECT_STREQ(ffr_code_name(FFR_OK), "OK");
  EXPECT_STREQ(ffr_code_name(FFR_CORRUPTION), "Corruption");
  EXPECT_STREQ(ffr_code_name(FFR_NOT_SUPPORTED), "Not supported");
  EXPECT_STREQ(ffr_code_name(99), "Unknown");
}

TEST(CApiTest, OpenErrorsNameThePath) {
  ScratchDir dir("open");
  ffr_reader* r = nullptr;
  const std::string missing = dir / "missing.ffr";
  EXPECT_EQ(ffr_reader_open(missing.c_str(), nullptr, &r), FFR_NOT_FOUND);
  EXPECT_NE(LastError().find(missing), std::string::npos) << LastError();
  EXPECT_EQ(LastError().rfind("Not found: ", 0), 0u) << LastError();
  EXPECT_EQ(r, nullptr);

  EXPECT_EQ(ffr_reader_open(dir.path().c_str(), nullptr, &r), FFR_NOT_FOUND);
  EXPECT_NE(LastError().find("no *.ffr shard"), std::string::npos) << LastError();

  EXPECT_EQ(ffr_reader_open(nullptr, nullptr, &r), FFR_INVALID_ARGUMENT);

  const std::string truncated = dir / "truncated.ffr";
  WriteShard(truncated, {"abc", "hello"});
  std::filesystem::resize_file(truncated, 20);
  EXPECT_EQ(ffr_reader_open(truncated.c_str(), nullptr, &r), FFR_CORRUPTION);
  EXPECT_NE(LastError().find(truncated), std::string::npos) << LastError();

  ffr_reader_options options;
  ffr_reader_options_init(&options);
  options.backend = static_cast<ffr_backend>(7);
  const std::string good = dir / "good.ffr";
  WriteShard(good, {"abc"});
  EXPECT_EQ(ffr_reader_open(good.c_str(), &options, &r), FFR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("unknown backend 7"), std::string::npos) << LastError();
  EXPECT_EQ(r, nullptr);
}

TEST(CApiTest, BadIndicesAndSmallBuffersReadNothing) {
  ScratchDir dir("args");
  const std::string path = dir / "s.ffr";
  WriteShard(path, {"abc", "hello"});
  ReaderHandle h;
  ASSERT_EQ(ffr_reader_open(path.c_str(), nullptr, &h.r), FFR_OK) << LastError();

  uint64_t size = 0;
  EXPECT_EQ(ffr_reader_sample_size(h.r, 2, &size), FFR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("sample index 2 out of range [0, 2)"), std::string::npos) << LastError();
  uint32_t crc = 0;
  EXPECT_EQ(ffr_reader_sample_crc(h.r, -1, &crc), FFR_INVALID_ARGUMENT);

  std::string buf(4, '#');
  EXPECT_EQ(ffr_reader_read(h.r, 1, buf.data(), buf.size(), &size), FFR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find(path + " sample 1"), std::string::npos) << LastError();
  EXPECT_NE(LastError().find("5 bytes do not fit"), std::string::npos) << LastError();
  EXPECT_EQ(buf, "####");

  const int64_t indices[] = {0, 1};
  std::string a(3, '#'), b(4, '#');
  void* dsts[] = {a.data(), b.data()};
  const uint64_t capacities[] = {3, 4};
  EXPECT_EQ(ffr_reader_read_batch(h.r, indices, 2, dsts, capacities), FFR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("dsts[1]"), std::string::npos) << LastError();
  EXPECT_EQ(a + b, "#######");
  const int64_t bad[] = {0, 5};
  EXPECT_EQ(ffr_reader_read_batch(h.r, bad, 2, dsts, capacities), FFR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("sample index 5"), std::string::npos) << LastError();
  EXPECT_EQ(ffr_reader_read_batch(h.r, indices, 2, nullptr, capacities), FFR_INVALID_ARGUMENT);
}

TEST(CApiTest, FlippedByteIsCorruptionUnlessChecksumsAreOff) {
  ScratchDir dir("flip");
  const std::string path = dir / "s.ffr";
  WriteShard(path, {"abc", "hello"});
  std::string bytes = ReadFileToString(path);
  bytes[bytes.size() - 2] ^= 0x20;  // "hello" -> "helLo"
  ASSERT_TRUE(WriteStringToFile(path, bytes));

  ReaderHandle checked;
  ASSERT_EQ(ffr_reader_open(path.c_str(), nullptr, &checked.r), FFR_OK) << LastError();
  std::string buf(5, '\0');
  EXPECT_EQ(ffr_reader_read(checked.r, 1, buf.data(), buf.size(), nullptr), FFR_CORRUPTION);
  EXPECT_NE(LastError().find(path + " sample 1 (index 1): checksum mismatch"), std::string::npos) << LastError();
  uint64_t size = 0;
  EXPECT_EQ(ffr_reader_read(checked.r, 0, buf.data(), buf.size(), &size), FFR_OK) << LastError();
  EXPECT_EQ(buf.substr(0, size), "abc");
  // A bad sample inside a batch fails the batch and leaves the reader usable.
  std::string a(3, '\0'), b(5, '\0'), c(3, '\0');
  void* dsts[] = {a.data(), b.data(), c.data()};
  const uint64_t capacities[] = {3, 5, 3};
  const int64_t with_bad[] = {0, 1, 0};
  EXPECT_EQ(ffr_reader_read_batch(checked.r, with_bad, 3, dsts, capacities), FFR_CORRUPTION);
  EXPECT_NE(LastError().find("sample 1 (index 1): checksum mismatch"), std::string::npos) << LastError();
  const int64_t good[] = {0, 0};
  void* good_dsts[] = {a.data(), c.data()};
  EXPECT_EQ(ffr_reader_read_batch(checked.r, good, 2, good_dsts, capacities), FFR_OK) << LastError();
  EXPECT_EQ(a + c, "abcabc");

  ffr_reader_options options;
  ffr_reader_options_init(&options);
  options.verify_checksums = 0;
  ReaderHandle unchecked;
  ASSERT_EQ(ffr_reader_open(path.c_str(), &options, &unchecked.r), FFR_OK) << LastError();
  EXPECT_EQ(ffr_reader_read(unchecked.r, 1, buf.data(), buf.size(), nullptr), FFR_OK) << LastError();
  EXPECT_EQ(buf, "helLo");
}

// Aligned shards read back as their samples plus zero padding up to the
// alignment (the last sample unpadded), and a bad alignment is refused.
TEST(CApiTest, AlignedWriterPadsSamples) {
  ScratchDir dir("aligned");
  const std::string path = dir / "a.ffr";
  const std::vector<std::string> samples = RandomSamples(6, 5000, 9);
  ffr_writer* w = nullptr;
  ASSERT_EQ(ffr_writer_create_aligned(path.c_str(), static_cast<int64_t>(samples.size()), 4096, &w), FFR_OK)
      << LastError();
  for (const std::string& s : samples) ASSERT_EQ(ffr_writer_append(w, s.data(), s.size()), FFR_OK) << LastError();
  ASSERT_EQ(ffr_writer_finish(w), FFR_OK) << LastError();

  ReaderHandle reader;
  ASSERT_EQ(ffr_reader_open(path.c_str(), nullptr, &reader.r), FFR_OK) << LastError();
  ASSERT_EQ(ffr_reader_size(reader.r), 6);
  for (int64_t i = 0; i < 6; ++i) {
    uint64_t size = 0;
    ASSERT_EQ(ffr_reader_sample_size(reader.r, i, &size), FFR_OK) << LastError();
    const std::string& want = samples[static_cast<size_t>(i)];
    if (i < 5) {
      EXPECT_EQ(size, (want.size() + 4095) / 4096 * 4096) << "sample " << i;  // the empty one stays empty
    } else {
      EXPECT_EQ(size, want.size());
    }
    std::string got(size, 'x');
    ASSERT_EQ(ffr_reader_read(reader.r, i, got.data(), size, &size), FFR_OK) << LastError();
    EXPECT_EQ(got.substr(0, want.size()), want) << "sample " << i;
    EXPECT_EQ(got.find_first_not_of('\0', want.size()), std::string::npos) << "padding of sample " << i;
  }

  EXPECT_EQ(ffr_writer_create_aligned((dir / "b.ffr").c_str(), 1, 1000, &w), FFR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("1000"), std::string::npos) << LastError();
}

TEST(CApiTest, WriterErrorsLeaveNoShard) {
  ScratchDir dir("writer");
  const std::string path = dir / "w.ffr";
  namespace fs = std::filesystem;

  ffr_writer* w = nullptr;
  ASSERT_EQ(ffr_writer_create(path.c_str(), 2, &w), FFR_OK) << LastError();
  ASSERT_EQ(ffr_writer_append(w, "a", 1), FFR_OK) << LastError();
  EXPECT_EQ(ffr_writer_finish(w), FFR_INVALID_ARGUMENT);  // frees w
  EXPECT_NE(LastError().find(path + ": 1 samples appended, 2 announced"), std::string::npos) << LastError();
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  ASSERT_EQ(ffr_writer_create(path.c_str(), 1, &w), FFR_OK) << LastError();
  ASSERT_EQ(ffr_writer_append(w, "a", 1), FFR_OK) << LastError();
  EXPECT_EQ(ffr_writer_append(w, "b", 1), FFR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("more than the 1 samples announced"), std::string::npos) << LastError();
  EXPECT_EQ(ffr_writer_append(w, nullptr, 3), FFR_INVALID_ARGUMENT);
  EXPECT_TRUE(fs::exists(path + ".tmp"));
  ffr_writer_abort(w);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_FALSE(fs::exists(path));
  ffr_writer_abort(nullptr);

  const std::string nowhere = dir / "no/such/dir/w.ffr";
  EXPECT_EQ(ffr_writer_create(nowhere.c_str(), 1, &w), FFR_IO_ERROR);
  EXPECT_NE(LastError().find(nowhere), std::string::npos) << LastError();
  EXPECT_EQ(ffr_writer_create(path.c_str(), -1, &w), FFR_INVALID_ARGUMENT);
}

TEST(CApiTest, LastErrorIsPerThreadAndKeptBySuccessfulCalls) {
  ffr_reader* r = nullptr;
  ASSERT_EQ(ffr_reader_open("/nonexistent/main.ffr", nullptr, &r), FFR_NOT_FOUND);
  const std::string mine = LastError();
  ASSERT_NE(mine.find("/nonexistent/main.ffr"), std::string::npos) << mine;

  std::string before, after;
  std::thread other([&] {
    before = LastError();
    ffr_reader* r2 = nullptr;
    ffr_reader_open("/nonexistent/other.ffr", nullptr, &r2);
    after = LastError();
  });
  other.join();
  EXPECT_EQ(before, "");
  EXPECT_NE(after.find("/nonexistent/other.ffr"), std::string::npos) << after;
  EXPECT_EQ(LastError(), mine);

  ScratchDir dir("kept");
  WriteShard(dir / "ok.ffr", {"abc"});
  ReaderHandle h;
  ASSERT_EQ(ffr_reader_open((dir / "ok.ffr").c_str(), nullptr, &h.r), FFR_OK);
  EXPECT_EQ(LastError(), mine);
}

}  // namespace
