// The crash-safe shard-set protocol on its own: a small job writes two parts of
// three shards of strings through a ShardSetWriter as Pack and the pixel cache
// do. Each file-system call of a clean job is failed in turn: what is left must
// either hold no commit file or be the clean output, and the job run again must
// resume it to the clean output byte for byte. tests/packer/pack_fault_test.cc
// and tests/loader/pixel_cache_test.cc do the same end to end.
#include "ffyolo/output/shard_set_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "ffr/reader.h"
#include "ffr/shard_writer.h"
#include "testing/faulty_env.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using testing::FaultyEnv;
using testing::ScratchDir;
using testing::WriteOp;

constexpr char kState[] = ".job-state";
constexpr char kCommit[] = "job.yaml";
const std::vector<std::string> kParts = {"a", "b"};
constexpr size_t kShards = 3;
constexpr int64_t kSamples = 4;  // per shard

std::string Sample(const std::string& part, size_t k, int64_t i) {
  return part + "/" + std::to_string(k) + "/" + std::to_string(i) + std::string(100, 'x');
}

// What a run did with the shards it found.
struct JobCounts {
  int kept = 0, made = 0;
};

// The job: refuses a folder of other work or a finished one, as Pack does, and
// keeps the shards of the run it resumes that hold all their samples.
Status RunJob(ffr::Env* env, const std::string& dir, const std::string& state, JobCounts* counts) {
  ShardSetWriter writer(env, dir, kState, kCommit);
  FFR_RETURN_IF_ERROR(writer.Lock(nullptr));
  std::vector<std::string> entries;
  FFR_RETURN_IF_ERROR(writer.Entries(&entries));
  const ShardSetWriter::Found found = writer.ReadState(state);
  if (!entries.empty() && found == ShardSetWriter::Found::kOtherWork) return Status::AlreadyExists("other work");
  if (!entries.empty() && found == ShardSetWriter::Found::kNoState) return Status::AlreadyExists("done");
  FFR_RETURN_IF_ERROR(writer.Begin(state));
  std::string manifest;
  for (const std::string& part : kParts) {
    FFR_RETURN_IF_ERROR(env->CreateDirs(dir + "/" + part));
    for (size_t k = 0; k < kShards; ++k) {
      const auto keep = [&](const std::string& path, bool* kept) {
        ffr::ReaderOptions ro;
        ro.env = env;
        std::unique_ptr<ffr::Reader> reader;
        *kept = ffr::Reader::Open(path, ro, &reader).ok() && reader->size() == kSamples;
        counts->kept += *kept;
        return Status::OK();
      };
      const auto make = [&](const std::string& path) {
        std::unique_ptr<ffr::ShardWriter> w;
        FFR_RETURN_IF_ERROR(ffr::ShardWriter::Create(path, kSamples, env, &w));
        for (int64_t i = 0; i < kSamples; ++i) {
          const std::string s = Sample(part, k, i);
          FFR_RETURN_IF_ERROR(w->Append(s.data(), s.size()));
        }
        FFR_RETURN_IF_ERROR(w->Finish());
        ++counts->made;
        return Status::OK();
      };
      FFR_RETURN_IF_ERROR(writer.WriteShard(part, k, keep, make));
      manifest += part + "/" + ShardFileName(k) + "\n";
    }
  }
  return writer.Commit(manifest);
}

// Relative path -> contents of every file under `root` but LOCK (none when it is missing).
std::map<std::string, std::string> ReadTree(const std::string& root) {
  std::map<std::string, std::string> tree;
  if (!fs::exists(root)) return tree;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().filename() != "LOCK")
      tree[fs::relative(e.path(), root).string()] = testing::ReadFileToString(e.path().string());
  return tree;
}

TEST(PlanShardsTest, ShardsAreNeverEmpty) {
  const std::vector<uint64_t> sizes = {5, 0, 7, 1};
  EXPECT_EQ(PlanShards(sizes, 0), (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(PlanShards(sizes, 6), (std::vector<size_t>{0, 3, 4}));
  EXPECT_EQ(PlanShards(sizes, 1000), (std::vector<size_t>{0, 4}));
  EXPECT_EQ(PlanShards({}, 10), (std::vector<size_t>{0, 0}));
}

TEST(PlanShardsTest, ACountGivesThatManyShardsOfEvenSizes) {
  const std::vector<uint64_t> sizes(10, 1);
  EXPECT_EQ(PlanShards(sizes, 0, 3), (std::vector<size_t>{0, 3, 6, 10}));
  EXPECT_EQ(PlanShards(sizes, 0, 20), (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST(ShardSetWriterTest, ShardNamesSortInOrder) {
  EXPECT_EQ(ShardFileName(0), "PART_00000.ffr");
  EXPECT_EQ(ShardFileName(12), "PART_00012.ffr");
  EXPECT_TRUE(IsShardFile("PART_00012.ffr"));
  EXPECT_TRUE(IsShardFile("PART_00012.ffr.tmp"));
  EXPECT_FALSE(IsShardFile("labels.idx.zst"));
  const ShardSetWriter writer(ffr::Env::Default(), "d", kState, kCommit);
  for (const char* own : {"LOCK", kState, ".job-state.tmp", kCommit, "job.yaml.tmp"}) EXPECT_TRUE(writer.IsOwnFile(own));
  EXPECT_FALSE(writer.IsOwnFile("notes.txt"));
}

TEST(ShardSetWriterTest, EveryFailedWriteLeavesNoCommitOrTheWholeSetAndARerunResumes) {
  ScratchDir dir("shard_set_faults");
  FaultyEnv counting;
  JobCounts counts;
  ASSERT_TRUE(RunJob(&counting, dir / "clean", "work 1\n", &counts).ok());
  const auto clean = ReadTree(dir / "clean");
  ASSERT_EQ(clean.size(), kParts.size() * kShards + 1);

  for (int o = 0; o < testing::kNumWriteOps; ++o) {
    const WriteOp op = static_cast<WriteOp>(o);
    EXPECT_GT(counting.calls(op), 0) << testing::WriteOpName(op) << " is never called, so never tested";
    for (int64_t n = 0; n < counting.calls(op); ++n) {
      SCOPED_TRACE(std::string(testing::WriteOpName(op)) + " call " + std::to_string(n));
      const std::string out = dir / "faulty";
      FaultyEnv faulty;
      faulty.FailFrom(op, n);
      JobCounts first;
      const Status failed = RunJob(&faulty, out, "work 1\n", &first);
      ASSERT_FALSE(failed.ok());
      EXPECT_TRUE(faulty.NamesAFailedPath(failed.message())) << failed.ToString();
      auto left = ReadTree(out);
      if (left.count(kCommit) > 0) {  // committed: only the state file's removal failed
        EXPECT_EQ(left.erase(kState), 1u);
        EXPECT_TRUE(left == clean);
      }

      JobCounts rerun;
      ASSERT_TRUE(RunJob(ffr::Env::Default(), out, "work 1\n", &rerun).ok());
      EXPECT_TRUE(ReadTree(out) == clean);
      EXPECT_EQ(rerun.kept + rerun.made, static_cast<int>(kParts.size() * kShards));
      testing::RemoveTree(out);
    }
  }
}

TEST(ShardSetWriterTest, AnInterruptedRunKeepsItsFinishedShardsAndRemakesATornOne) {
  ScratchDir dir("shard_set_resume");
  FaultyEnv faulty;
  faulty.FailFrom(WriteOp::kRename, 3);  // the state file, shards a/0 and a/1, then a/2 fails
  JobCounts first;
  ASSERT_FALSE(RunJob(&faulty, dir / "out", "work 1\n", &first).ok());
  EXPECT_EQ(first.made, 2);
  // A shard of other samples where a/1 was: not kept, made again.
  std::unique_ptr<ffr::ShardWriter> w;
  ASSERT_TRUE(ffr::ShardWriter::Create(dir / "out/a/PART_00001.ffr", 1, ffr::Env::Default(), &w).ok());
  ASSERT_TRUE(w->Append("x", 1).ok());
  ASSERT_TRUE(w->Finish().ok());

  JobCounts resumed;
  ASSERT_TRUE(RunJob(ffr::Env::Default(), dir / "out", "work 1\n", &resumed).ok());
  EXPECT_EQ(resumed.kept, 1);
  EXPECT_EQ(resumed.made, 5);
  JobCounts clean;
  ASSERT_TRUE(RunJob(ffr::Env::Default(), dir / "clean", "work 1\n", &clean).ok());
  EXPECT_TRUE(ReadTree(dir / "out") == ReadTree(dir / "clean"));
}

TEST(ShardSetWriterTest, TheStateFileTellsTheSameWorkFromOther) {
  ScratchDir dir("shard_set_state");
  ShardSetWriter writer(ffr::Env::Default(), dir / "out", kState, kCommit);
  ASSERT_TRUE(writer.Lock(nullptr).ok());
  EXPECT_EQ(writer.ReadState("work 1\n"), ShardSetWriter::Found::kNoState);
  ASSERT_TRUE(writer.Begin("work 1\n").ok());
  EXPECT_EQ(writer.ReadState("work 1\n"), ShardSetWriter::Found::kSameWork);
  EXPECT_EQ(writer.ReadState("work 2\n"), ShardSetWriter::Found::kOtherWork);
  ASSERT_TRUE(writer.Commit("done\n").ok());
  EXPECT_EQ(writer.ReadState("work 1\n"), ShardSetWriter::Found::kNoState);
  EXPECT_EQ(testing::ReadFileToString(writer.commit_path()), "done\n");
}

// A run killed while it wrote its state file (its first file) left only the
// state's temporary: the folder holds nothing.
TEST(ShardSetWriterTest, ALoneTemporaryStateFileIsNothing) {
  ScratchDir dir("shard_set_state_tmp");
  fs::create_directories(dir / "out");
  ASSERT_TRUE(testing::WriteStringToFile(dir / "out/.job-state.tmp", "wor"));
  ShardSetWriter writer(ffr::Env::Default(), dir / "out", kState, kCommit);
  ASSERT_TRUE(writer.Lock(nullptr).ok());
  std::vector<std::string> entries;
  ASSERT_TRUE(writer.Entries(&entries).ok());
  EXPECT_TRUE(entries.empty());
  EXPECT_FALSE(fs::exists(dir / "out/.job-state.tmp"));

  // Beside anything else it is left to the caller.
  ASSERT_TRUE(testing::WriteStringToFile(dir / "out/.job-state.tmp", "wor"));
  ASSERT_TRUE(testing::WriteStringToFile(dir / "out/notes.txt", ""));
  ASSERT_TRUE(writer.Entries(&entries).ok());
  EXPECT_EQ(entries, (std::vector<std::string>{".job-state.tmp", "notes.txt"}));
}

TEST(ShardSetWriterTest, WritersTakeTurnsOnTheLock) {
  ScratchDir dir("shard_set_lock");
  auto first = std::make_unique<ShardSetWriter>(ffr::Env::Default(), dir / "out", kState, kCommit);
  ASSERT_TRUE(first->Lock(nullptr).ok());
  std::atomic<bool> waiting{false}, locked{false};
  std::thread second([&] {
    ShardSetWriter writer(ffr::Env::Default(), dir / "out", kState, kCommit);
    EXPECT_TRUE(writer.Lock([&] { waiting = true; }).ok());
    locked = true;
  });
  while (!waiting) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(locked);
  first.reset();
  second.join();
  EXPECT_TRUE(locked);
}

}  // namespace
}  // namespace ffyolo
