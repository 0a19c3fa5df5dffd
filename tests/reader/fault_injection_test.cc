// Faults injected through the Env seam: I/O errors, short reads, failed fsync and rename.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "ffr/env.h"
#include "ffr/reader.h"
#include "ffr/shard_writer.h"
#include "testing/faulty_env.h"
#include "testing/test_env.h"

namespace ffr {
namespace {

using ffyolo::testing::FaultyEnv;
using ffyolo::testing::ScratchDir;
using ffyolo::testing::WriteOp;

void WriteFour(const std::string& path, Env* env) {
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, 4, env, &w).ok());
  for (const char* s : {"alpha", "beta", "gamma", "delta"}) ASSERT_TRUE(w->Append(s, std::strlen(s)).ok());
  ASSERT_TRUE(w->Finish().ok());
}

// Read faults reach the reader whichever backend reads: pread through the Env's files, io_uring
// through its read queues. Each test reads the four samples of `path` through `reader`.
class ReadFaultTest : public ::testing::TestWithParam<IoBackend> {
 protected:
  ReadFaultTest() : dir("read_fault"), path(dir / "PART_00000.ffr") {}

  void SetUp() override {
    WriteFour(path, &env);
    ReaderOptions opts;
    opts.backend = GetParam();
    opts.env = &env;
    const Status opened = Reader::Open(path, opts, &reader);
    if (opened.IsNotSupported()) GTEST_SKIP() << "io_uring unavailable here: " << opened.ToString();
    ASSERT_TRUE(opened.ok()) << opened.ToString();
    ASSERT_EQ(reader->backend(), GetParam());
  }

  ScratchDir dir;
  std::string path;
  FaultyEnv env;
  std::unique_ptr<Reader> reader;
};

TEST_P(ReadFaultTest, ReadErrorNamesFile) {
  env.fail_reads_after_open = true;
  ReadBuffer buf;
  Sample s;
  Status st = reader->Read(2, &buf, &s);
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_NE(st.message().find(path + " sample 2"), std::string::npos) << st.ToString();
  // A batch fails as a whole, and the reader reads again once the fault is gone.
  const int64_t batch[] = {0, 1, 2, 3};
  Sample out[4];
  EXPECT_TRUE(reader->ReadBatch(batch, 4, &buf, out).IsIOError());
  env.fail_reads_after_open = false;
  ASSERT_TRUE(reader->ReadBatch(batch, 4, &buf, out).ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(out[3].data), out[3].size), "delta");
}

TEST_P(ReadFaultTest, ShortReadIsCorruption) {
  env.reads_end_at = reader->sample_size(0) + 60 + 2;  // the file cut inside sample 1 (the header is 60 bytes)
  ReadBuffer buf;
  Sample s;
  Status st = reader->Read(1, &buf, &s);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("short read"), std::string::npos);
  EXPECT_NE(st.message().find("sample 1"), std::string::npos);
  ASSERT_TRUE(reader->Read(0, &buf, &s).ok()) << "sample 0 lies before the cut";
}

INSTANTIATE_TEST_SUITE_P(Backends, ReadFaultTest, ::testing::Values(IoBackend::kPread, IoBackend::kIoUring),
                         [](const ::testing::TestParamInfo<IoBackend>& info) {
                           return std::string(IoBackendName(info.param)) == "io_uring" ? "IoUring" : "Pread";
                         });

TEST(FaultInjectionTest, FailedMapNamesFile) {
  ScratchDir dir("map");
  FaultyEnv env;
  const std::string path = dir / "PART_00000.ffr";
  WriteFour(path, &env);
  env.fail_map = true;
  ReaderOptions opts;
  opts.backend = IoBackend::kMmap;
  opts.env = &env;
  std::unique_ptr<Reader> r;
  const Status st = Reader::Open(path, opts, &r);
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_NE(st.message().find("mmap " + path), std::string::npos) << st.ToString();
}

// A mapped shard whose pages vanished (cut while mapped) is refused, not read as zeros.
TEST(FaultInjectionTest, ShrunkMappingIsCorruption) {
  ScratchDir dir("map_shrink");
  FaultyEnv env;
  const std::string path = dir / "PART_00000.ffr";
  WriteFour(path, &env);
  ReaderOptions opts;
  opts.backend = IoBackend::kMmap;
  opts.env = &env;
  std::unique_ptr<Reader> r;
  ASSERT_TRUE(Reader::Open(path, opts, &r).ok());
  ReadBuffer buf;
  Sample s;
  ASSERT_TRUE(r->Read(3, &buf, &s).ok());
  env.maps_shrink = true;
  const Status st = r->Read(3, &buf, &s);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find(path + " sample 3"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("shrank"), std::string::npos) << st.ToString();
}

TEST(FaultInjectionTest, FailedSyncLeavesNoShard) {
  ScratchDir dir("sync");
  FaultyEnv env;
  env.FailFrom(WriteOp::kSync, 0);
  const std::string path = dir / "PART_00000.ffr";
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, 1, &env, &w).ok());
  ASSERT_TRUE(w->Append("x", 1).ok());
  EXPECT_TRUE(w->Finish().IsIOError());
  w.reset();
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(FaultInjectionTest, FailedRenameLeavesNoShard) {
  ScratchDir dir("rename");
  FaultyEnv env;
  env.FailFrom(WriteOp::kRename, 0);
  const std::string path = dir / "PART_00000.ffr";
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, 1, &env, &w).ok());
  ASSERT_TRUE(w->Append("x", 1).ok());
  EXPECT_TRUE(w->Finish().IsIOError());
  w.reset();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(FaultInjectionTest, AtomicFileWriteKeepsOldContentOnFailure) {
  ScratchDir dir("atomic");
  FaultyEnv env;
  const std::string path = dir / "dataset.yaml";
  ASSERT_TRUE(WriteFileAtomically(&env, path, "old").ok());
  env.FailFrom(WriteOp::kRename, env.calls(WriteOp::kRename));  // the next rename and later ones
  EXPECT_FALSE(WriteFileAtomically(&env, path, "new").ok());
  std::string content;
  ASSERT_TRUE(ReadFileToString(&env, path, &content).ok());
  EXPECT_EQ(content, "old");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace ffr
