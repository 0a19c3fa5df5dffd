// The FFRecord v1 byte layout, checked against the reference writer's output.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "ffr/format.h"
#include "ffr/reader.h"
#include "ffr/shard_writer.h"
#include "testing/test_env.h"

namespace ffr {
namespace {

using ffyolo::testing::ReadFileToString;
using ffyolo::testing::ScratchDir;
using ffyolo::testing::WriteStringToFile;

// HFAiLab/ffrecord's FileWriter output for the samples "abc", "hello", "".
const unsigned char kGoldenVector[56] = {
    0x6b, 0x93, 0x1b, 0xd4, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc2, 0x41, 0x24, 0x35,
    0x86, 0xa6, 0x10, 0x36, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x33, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x38, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x61, 0x62, 0x63, 0x68, 0x65, 0x6c, 0x6c, 0x6f};

TEST(Crc32Test, MatchesZlibCheckValue) { EXPECT_EQ(Crc32("123456789", 9), 0xCBF43926u); }

TEST(Crc32Test, EqualsZlibForAnyLengthAndAlignment) {
  // The reader may use ISA-L's CRC; its values must be zlib's (FFRecord's).
  std::string data(70000, '\0');
  uint32_t x = 12345;
  for (char& c : data) c = static_cast<char>((x = x * 1103515245 + 12345) >> 16);
  for (size_t len : {0, 1, 7, 15, 16, 63, 64, 255, 4096, 65537, 69999})
    for (size_t off : {0, 1, 3}) {
      const auto* p = reinterpret_cast<const Bytef*>(data.data()) + off;
      EXPECT_EQ(Crc32(p, len), static_cast<uint32_t>(::crc32(0, p, static_cast<uInt>(len))))
          << "len " << len << " offset " << off;
      EXPECT_EQ(Crc32Extend(Crc32(p, len / 2), p + len / 2, len - len / 2),
                static_cast<uint32_t>(::crc32(0, p, static_cast<uInt>(len))));
    }
}

TEST(Crc32Test, ExtendEqualsOneShot) {
  const std::string s = "hello, world";
  EXPECT_EQ(Crc32Extend(Crc32(s.data(), 5), s.data() + 5, s.size() - 5), Crc32(s.data(), s.size()));
}

TEST(FormatTest, WriterReproducesGoldenVector) {
  ScratchDir dir("golden");
  const std::string path = dir / "PART_00000.ffr";
  // Both ways of creating a writer; sample_alignment 0 is FFRecord's own layout.
  for (const bool with_options : {false, true}) {
    std::unique_ptr<ShardWriter> w;
    ASSERT_TRUE((with_options ? ShardWriter::Create(path, 3, ShardWriterOptions(), &w)
                              : ShardWriter::Create(path, 3, nullptr, &w))
                    .ok());
    ASSERT_TRUE(w->Append("abc", 3).ok());
    ASSERT_TRUE(w->Append("hello", 5).ok());
    ASSERT_TRUE(w->Append("", 0).ok());
    ASSERT_TRUE(w->Finish().ok());
    EXPECT_EQ(w->bytes(), 56u);
    EXPECT_EQ(ReadFileToString(path), std::string(reinterpret_cast<const char*>(kGoldenVector), 56)) << with_options;
  }
}

bool AllZero(const std::string& bytes) { return bytes.find_first_not_of('\0') == std::string::npos; }

// The aligned layout of docs/format.md, section 1: the first sample at the
// header's end rounded up, zeros after every sample but the last, CRCs over
// the padded samples.
TEST(FormatTest, AlignedWriterPadsEverySampleButTheLast) {
  ScratchDir dir("aligned");
  const std::string path = dir / "PART_00000.ffr";
  const std::vector<std::string> samples = {"abc", std::string(4096, 'x'), "", std::string(5000, 'y'), "hello"};
  ShardWriterOptions options;
  options.sample_alignment = 4096;
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, 5, options, &w).ok());
  for (const std::string& sample : samples) ASSERT_TRUE(w->Append(sample.data(), sample.size()).ok());
  ASSERT_TRUE(w->Finish().ok());

  const std::string file = ReadFileToString(path);
  EXPECT_EQ(w->bytes(), file.size());
  ShardHeader h;
  const Status s =
      ParseShardHeader(path, reinterpret_cast<const uint8_t*>(file.data()), file.size(), file.size(), true, &h);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // "abc" pads to 4096, the 4096-byte sample needs none, the empty one has no bytes, 5000 pads to 8192, and the
  // last ("hello") ends the file unpadded.
  EXPECT_EQ(h.offsets, (std::vector<uint64_t>{4096, 8192, 12288, 12288, 20480, 20485}));
  EXPECT_TRUE(AllZero(file.substr(ShardHeader::EncodedSize(5), 4096 - ShardHeader::EncodedSize(5))))
      << "the gap after the header";
  for (int64_t i = 0; i < h.count(); ++i) {
    const std::string bytes = file.substr(h.offsets[i], h.sample_size(i));
    EXPECT_EQ(bytes.substr(0, samples[i].size()), samples[i]) << "sample " << i;
    EXPECT_TRUE(AllZero(bytes.substr(samples[i].size()))) << "padding of sample " << i;
    EXPECT_EQ(h.crcs[i], static_cast<uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(bytes.data()),
                                                       static_cast<uInt>(bytes.size()))))
        << "sample " << i;
  }
}

TEST(FormatTest, AlignedFirstSampleFollowsALongHeader) {
  ScratchDir dir("aligned_header");
  const std::string path = dir / "PART_00000.ffr";
  ShardWriterOptions options;
  options.sample_alignment = 512;
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, 50, options, &w).ok());  // a 612-byte header
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(w->Append("s", 1).ok());
  ASSERT_TRUE(w->Finish().ok());
  const std::string file = ReadFileToString(path);
  ShardHeader h;
  ASSERT_TRUE(
      ParseShardHeader(path, reinterpret_cast<const uint8_t*>(file.data()), file.size(), file.size(), true, &h).ok());
  EXPECT_EQ(h.offsets[0], 1024u);
  for (int64_t i = 0; i + 1 < h.count(); ++i) EXPECT_EQ(h.sample_size(i), 512u) << "sample " << i;
  EXPECT_EQ(file.size(), 1024u + 49 * 512 + 1);
}

TEST(FormatTest, AlignedEmptyShardIsTheUsualTwelveBytes) {
  ScratchDir dir("aligned_empty");
  const std::string path = dir / "PART_00000.ffr";
  ShardWriterOptions options;
  options.sample_alignment = 4096;
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, 0, options, &w).ok());
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(ReadFileToString(path), EncodeShardHeader({}, {}));
}

TEST(FormatTest, WriterRefusesInvalidAlignments) {
  ScratchDir dir("bad_alignment");
  const std::string path = dir / "PART_00000.ffr";
  for (uint64_t alignment : {uint64_t{1}, uint64_t{256}, uint64_t{3000}, uint64_t{4097}, uint64_t{2} << 20}) {
    ShardWriterOptions options;
    options.sample_alignment = alignment;
    std::unique_ptr<ShardWriter> w;
    const Status s = ShardWriter::Create(path, 1, options, &w);
    EXPECT_TRUE(s.IsInvalidArgument()) << alignment << ": " << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("alignment " + std::to_string(alignment)), std::string::npos) << s.message();
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  }
  for (uint64_t alignment : {uint64_t{0}, uint64_t{512}, uint64_t{4096}, uint64_t{1} << 20})
    EXPECT_TRUE(CheckSampleAlignment(alignment).ok()) << alignment;
}

// The samples a shard holds, read back through the reader with CRCs checked.
std::vector<std::string> ReadAllSamples(const std::string& path) {
  std::unique_ptr<Reader> r;
  const Status opened = Reader::Open(path, ReaderOptions(), &r);
  EXPECT_TRUE(opened.ok()) << opened.ToString();
  std::vector<std::string> samples;
  ReadBuffer buf;
  for (int64_t i = 0; opened.ok() && i < r->size(); ++i) {
    Sample sample;
    const Status s = r->Read(i, &buf, &sample);
    EXPECT_TRUE(s.ok()) << s.ToString();
    samples.emplace_back(reinterpret_cast<const char*>(sample.data), sample.size);
  }
  return samples;
}

// A packer that drops bad images learns so only while it writes: the header
// keeps the room of the skipped samples as a gap, the last sample appended
// ends the file even when skipped ones were announced after it.
TEST(FormatTest, SkippedSamplesLeaveAGapAfterTheHeader) {
  ScratchDir dir("skipped");
  for (const uint64_t alignment : {uint64_t{0}, uint64_t{4096}}) {
    const std::string path = dir / ("PART_" + std::to_string(alignment) + ".ffr");
    ShardWriterOptions options;
    options.sample_alignment = alignment;
    std::unique_ptr<ShardWriter> w;
    ASSERT_TRUE(ShardWriter::Create(path, 5, options, &w).ok());
    ASSERT_TRUE(w->Skip().ok());
    ASSERT_TRUE(w->Append("abc", 3).ok());
    ASSERT_TRUE(w->Skip().ok());
    ASSERT_TRUE(w->Append("hello", 5).ok());
    ASSERT_TRUE(w->Skip().ok());
    ASSERT_TRUE(w->Finish().ok()) << alignment;
    EXPECT_EQ(w->skipped(), 3);

    const std::string file = ReadFileToString(path);
    EXPECT_EQ(w->bytes(), file.size());
    ShardHeader h;
    ASSERT_TRUE(
        ParseShardHeader(path, reinterpret_cast<const uint8_t*>(file.data()), file.size(), file.size(), true, &h)
            .ok());
    const uint64_t first = alignment > 0 ? alignment : ShardHeader::EncodedSize(5);
    const uint64_t second = alignment > 0 ? 2 * alignment : first + 3;
    EXPECT_EQ(h.offsets, (std::vector<uint64_t>{first, second, second + 5})) << alignment;
    EXPECT_TRUE(AllZero(file.substr(ShardHeader::EncodedSize(2), first - ShardHeader::EncodedSize(2))));
    const std::vector<std::string> samples = ReadAllSamples(path);
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0].substr(0, 3), "abc");
    EXPECT_EQ(samples[1], "hello") << "the last sample appended ends the file, unpadded";
  }
}

TEST(FormatTest, ShardOfSkippedSamplesOnlyIsAnEmptyShard) {
  ScratchDir dir("all_skipped");
  const std::string path = dir / "PART_00000.ffr";
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, 2, nullptr, &w).ok());
  ASSERT_TRUE(w->Skip().ok());
  ASSERT_TRUE(w->Skip().ok());
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(ReadFileToString(path), EncodeShardHeader({}, {}));
  EXPECT_EQ(w->bytes(), 12u);
}

TEST(FormatTest, WriterCountsSkippedSamplesAgainstTheAnnounced) {
  ScratchDir dir("skip_count");
  const std::string path = dir / "PART_00000.ffr";
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, 2, nullptr, &w).ok());
  ASSERT_TRUE(w->Skip().ok());
  Status s = w->Finish();
  EXPECT_NE(s.message().find(path + ": 0 samples appended and 1 skipped, 2 announced"), std::string::npos)
      << s.ToString();
  ASSERT_TRUE(w->Append("a", 1).ok());
  s = w->Skip();
  EXPECT_NE(s.message().find("more than the 2 samples announced"), std::string::npos) << s.ToString();
  EXPECT_TRUE(w->Finish().ok());
}

// Records every StartWriteback of the files it creates.
class WritebackRecordingEnv : public EnvWrapper {
 public:
  WritebackRecordingEnv() : EnvWrapper(Env::Default()) {}
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // offset, length

  Status NewWritableFile(const std::string& path, bool direct, std::unique_ptr<WritableFile>* out) override {
    std::unique_ptr<WritableFile> inner;
    FFR_RETURN_IF_ERROR(EnvWrapper::NewWritableFile(path, direct, &inner));
    out->reset(new File(std::move(inner), this));
    return Status::OK();
  }

 private:
  class File : public WritableFile {
   public:
    File(std::unique_ptr<WritableFile> inner, WritebackRecordingEnv* env) : inner_(std::move(inner)), env_(env) {}
    Status Append(const void* d, size_t n) override { return inner_->Append(d, n); }
    Status WriteAt(uint64_t o, const void* d, size_t n) override { return inner_->WriteAt(o, d, n); }
    Status Seek(uint64_t o) override { return inner_->Seek(o); }
    Status StartWriteback(uint64_t o, uint64_t n) override {
      env_->ranges.emplace_back(o, n);
      return inner_->StartWriteback(o, n);
    }
    Status Sync() override { return inner_->Sync(); }
    Status Close() override { return inner_->Close(); }

   private:
    std::unique_ptr<WritableFile> inner_;
    WritebackRecordingEnv* env_;
  };
};

// The disk writes while samples are appended: every writeback_bytes, the
// bytes since the last writeback, back to back from the first sample on.
TEST(FormatTest, WriterStartsWritebackEveryFewBytes) {
  ScratchDir dir("writeback");
  WritebackRecordingEnv env;
  ShardWriterOptions options;
  options.env = &env;
  options.writeback_bytes = 1000;
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(dir / "PART_00000.ffr", 10, options, &w).ok());
  const std::string sample(300, 's');
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(w->Append(sample.data(), sample.size()).ok());
  ASSERT_TRUE(w->Finish().ok());
  const uint64_t start = ShardHeader::EncodedSize(10);
  // After samples 4 (1200 bytes), 8 (another 1200); the last 600 are left to Finish's fsync.
  EXPECT_EQ(env.ranges, (std::vector<std::pair<uint64_t, uint64_t>>{{start, 1200}, {start + 1200, 1200}}));
  EXPECT_EQ(ReadAllSamples(dir / "PART_00000.ffr"), std::vector<std::string>(10, sample));

  env.ranges.clear();
  options.writeback_bytes = 0;
  ASSERT_TRUE(ShardWriter::Create(dir / "PART_00001.ffr", 10, options, &w).ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(w->Append(sample.data(), sample.size()).ok());
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_TRUE(env.ranges.empty()) << "0: all left to Finish";
}

// Refuses O_DIRECT, as some file systems do.
class NoDirectEnv : public EnvWrapper {
 public:
  NoDirectEnv() : EnvWrapper(Env::Default()) {}
  int direct_refused = 0;
  Status NewWritableFile(const std::string& path, bool direct, std::unique_ptr<WritableFile>* out) override {
    if (direct) {
      ++direct_refused;
      return Status::NotSupported(path + ": no O_DIRECT here");
    }
    return EnvWrapper::NewWritableFile(path, false, out);
  }
};

// Past the page cache or through it, the same shard; buffered where direct is refused.
TEST(FormatTest, DirectWriterWritesTheSameShard) {
  ScratchDir dir("direct");
  const std::vector<std::string> samples = {"abc", std::string(4096, 'x'), "", std::string(5 << 20, 'y'), "hello"};
  NoDirectEnv no_direct;
  for (const uint64_t alignment : {uint64_t{0}, uint64_t{4096}}) {
    std::string files[3];
    for (int way = 0; way < 3; ++way) {
      const std::string path = dir / ("PART_" + std::to_string(way) + ".ffr");
      ShardWriterOptions options;
      options.sample_alignment = alignment;
      options.direct_io = way > 0;
      if (way == 2) options.env = &no_direct;
      std::unique_ptr<ShardWriter> w;
      ASSERT_TRUE(ShardWriter::Create(path, 6, options, &w).ok());
      for (const std::string& sample : samples) ASSERT_TRUE(w->Append(sample.data(), sample.size()).ok());
      ASSERT_TRUE(w->Skip().ok());
      const Status s = w->Finish();
      ASSERT_TRUE(s.ok()) << s.ToString();
      files[way] = ReadFileToString(path);
      EXPECT_EQ(w->bytes(), files[way].size());
    }
    EXPECT_TRUE(files[1] == files[0]) << "direct, alignment " << alignment;
    EXPECT_TRUE(files[2] == files[0]) << "direct refused, alignment " << alignment;
    EXPECT_EQ(ReadAllSamples(dir / "PART_1.ffr").size(), samples.size());
  }
  EXPECT_EQ(no_direct.direct_refused, 2);
}

TEST(FormatTest, ReaderReadsGoldenVector) {
  ScratchDir dir("golden_read");
  const std::string path = dir / "golden.ffr";
  ASSERT_TRUE(WriteStringToFile(path, std::string(reinterpret_cast<const char*>(kGoldenVector), 56)));
  for (IoBackend backend : {IoBackend::kPread, IoBackend::kAuto}) {
    ReaderOptions opts;
    opts.backend = backend;
    std::unique_ptr<Reader> r;
    ASSERT_TRUE(Reader::Open(path, opts, &r).ok());
    ASSERT_EQ(r->size(), 3);
    EXPECT_EQ(r->sample_size(0), 3u);
    EXPECT_EQ(r->sample_size(1), 5u);
    EXPECT_EQ(r->sample_size(2), 0u);
    EXPECT_EQ(r->sample_crc(0), 0x352441c2u);
    ReadBuffer buf;
    const int64_t idx[3] = {2, 1, 0};
    Sample out[3];
    ASSERT_TRUE(r->ReadBatch(idx, 3, &buf, out).ok());
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(out[1].data), out[1].size), "hello");
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(out[2].data), out[2].size), "abc");
    EXPECT_EQ(out[0].size, 0u);
  }
}

TEST(FormatTest, EmptyShardIsTwelveBytesWithKnownCrc) {
  const std::string h = EncodeShardHeader({}, {});
  ASSERT_EQ(h.size(), 12u);
  const unsigned char expected_crc[4] = {0x69, 0xdf, 0x22, 0x65};  // crc32 of 8 zero bytes
  EXPECT_EQ(h.substr(0, 4), std::string(reinterpret_cast<const char*>(expected_crc), 4));
}

TEST(FormatTest, LegacyZeroMetaCrcIsAccepted) {
  std::string h(reinterpret_cast<const char*>(kGoldenVector), 56);
  h[0] = h[1] = h[2] = h[3] = 0;
  ShardHeader parsed;
  EXPECT_TRUE(ParseShardHeader("legacy.ffr", reinterpret_cast<const uint8_t*>(h.data()), h.size(), 56, true, &parsed)
                  .ok());
  EXPECT_EQ(parsed.count(), 3);
}

TEST(FormatTest, RejectsUnfinishedWriterOutput) {
  std::string h(60, '\0');  // zero header (writer died before finish) followed by data
  ShardHeader parsed;
  Status s = ParseShardHeader("dead.ffr", reinterpret_cast<const uint8_t*>(h.data()), h.size(), 60, true, &parsed);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("dead.ffr"), std::string::npos);
  EXPECT_NE(s.message().find("did not finish"), std::string::npos);
}

TEST(FormatTest, RejectsOffsetsOutOfOrder) {
  const std::string h = EncodeShardHeader({0, 0}, {40, 36});
  ShardHeader parsed;
  Status s = ParseShardHeader("bad.ffr", reinterpret_cast<const uint8_t*>(h.data()), h.size(), 50, true, &parsed);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("sample 1"), std::string::npos) << s.message();
}

TEST(FormatTest, RejectsCountLargerThanFile) {
  std::string h = EncodeShardHeader({0, 0, 0}, {48, 48, 48});
  ShardHeader parsed;
  Status s = ParseShardHeader("short.ffr", reinterpret_cast<const uint8_t*>(h.data()), h.size(), 30, true, &parsed);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("more than"), std::string::npos) << s.message();
}

TEST(FormatTest, RejectsMetaCrcMismatch) {
  std::string h(reinterpret_cast<const char*>(kGoldenVector), 56);
  h[20] ^= 1;  // a byte inside crc[2]
  ShardHeader parsed;
  Status s = ParseShardHeader("flip.ffr", reinterpret_cast<const uint8_t*>(h.data()), 48, 56, true, &parsed);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("header checksum"), std::string::npos);
  EXPECT_TRUE(ParseShardHeader("flip.ffr", reinterpret_cast<const uint8_t*>(h.data()), 48, 56, false, &parsed).ok());
}

}  // namespace
}  // namespace ffr
