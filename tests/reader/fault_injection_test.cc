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
  EXPECT_NE(st.message().find(path + " sample 2"), std::string::npos) << st.ToString();
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
