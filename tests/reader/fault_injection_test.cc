// Faults injected through the Env seam: I/O errors, short reads, failed fsync and rename.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ffr/env.h"
#include "ffr/reader.h"
#include "ffr/shard_writer.h"
#include "testing/test_env.h"

namespace ffr {
namespace {

using ffyolo::testing::ScratchDir;

// An Env that fails chosen operations.
class FaultyEnv : public Env {
 public:
  bool fail_reads_after_open = false;  // EIO on data reads
  bool short_reads = false;            // data reads return half
  bool fail_sync = false;
  bool fail_rename = false;
  bool fail_map = false;               // mmap fails (ENOMEM)

  Status Pread(int fd, void* buf, size_t n, uint64_t offset, size_t* read, const std::string& path) override {
    if (offset >= 12 + 12 * 4 && fail_reads_after_open) return Status::IOError("read " + path + ": injected EIO");
    Status s = Env::Pread(fd, buf, n, offset, read, path);
    if (s.ok() && short_reads && offset >= 12 + 12 * 4) *read /= 2;
    return s;
  }

  Status MapFile(int fd, uint64_t size, const std::string& path, const uint8_t** addr) override {
    if (fail_map) return Status::FromErrno("mmap " + path, ENOMEM);
    return Env::MapFile(fd, size, path, addr);
  }

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* out) override {
    std::unique_ptr<WritableFile> inner;
    FFR_RETURN_IF_ERROR(Env::NewWritableFile(path, &inner));
    out->reset(new File(std::move(inner), this));
    return Status::OK();
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (fail_rename) return Status::IOError("rename " + from + ": injected failure");
    return Env::RenameFile(from, to);
  }

 private:
  class File : public WritableFile {
   public:
    File(std::unique_ptr<WritableFile> inner, FaultyEnv* env) : inner_(std::move(inner)), env_(env) {}
    Status Append(const void* d, size_t n) override { return inner_->Append(d, n); }
    Status WriteAt(uint64_t o, const void* d, size_t n) override { return inner_->WriteAt(o, d, n); }
    Status Seek(uint64_t o) override { return inner_->Seek(o); }
    Status Sync() override { return env_->fail_sync ? Status::IOError("fsync: injected failure") : inner_->Sync(); }
    Status Close() override { return inner_->Close(); }

   private:
    std::unique_ptr<WritableFile> inner_;
    FaultyEnv* env_;
  };
};

void WriteFour(const std::string& path, Env* env) {
  std::unique_ptr<ShardWriter> w;
  ASSERT_TRUE(ShardWriter::Create(path, 4, env, &w).ok());
  for (const char* s : {"alpha", "beta", "gamma", "delta"}) ASSERT_TRUE(w->Append(s, std::strlen(s)).ok());
  ASSERT_TRUE(w->Finish().ok());
}

std::unique_ptr<Reader> OpenWith(const std::string& path, FaultyEnv* env) {
  ReaderOptions opts;
  opts.backend = IoBackend::kPread;
  opts.env = env;
  std::unique_ptr<Reader> r;
  EXPECT_TRUE(Reader::Open(path, opts, &r).ok());
  return r;
}

TEST(FaultInjectionTest, ReadErrorNamesFile) {
  ScratchDir dir("eio");
  FaultyEnv env;
  const std::string path = dir / "PART_00000.ffr";
  WriteFour(path, &env);
  auto r = OpenWith(path, &env);
  env.fail_reads_after_open = true;
  ReadBuffer buf;
  Sample s;
  Status st = r->Read(2, &buf, &s);
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_NE(st.message().find(path), std::string::npos);
}

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

TEST(FaultInjectionTest, ShortReadIsCorruption) {
  ScratchDir dir("short");
  FaultyEnv env;
  const std::string path = dir / "PART_00000.ffr";
  WriteFour(path, &env);
  auto r = OpenWith(path, &env);
  env.short_reads = true;
  ReadBuffer buf;
  Sample s;
  Status st = r->Read(1, &buf, &s);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("short read"), std::string::npos);
  EXPECT_NE(st.message().find("sample 1"), std::string::npos);
}

TEST(FaultInjectionTest, FailedSyncLeavesNoShard) {
  ScratchDir dir("sync");
  FaultyEnv env;
  env.fail_sync = true;
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
  env.fail_rename = true;
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
  env.fail_rename = true;
  EXPECT_FALSE(WriteFileAtomically(&env, path, "new").ok());
  std::string content;
  ASSERT_TRUE(ReadFileToString(&env, path, &content).ok());
  EXPECT_EQ(content, "old");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace ffr
