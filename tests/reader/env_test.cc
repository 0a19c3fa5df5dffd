// Env: the parts of the POSIX Env that the reader's own tests do not reach.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "ffr/env.h"
#include "ffr/read_buffer.h"
#include "testing/test_env.h"

namespace ffr {
namespace {

TEST(EnvTest, LockFileMakesASecondHolderWaitUntilTheFirstReleases) {
  ffyolo::testing::ScratchDir dir("env_lock");
  const std::string path = dir / "LOCK";
  std::unique_ptr<FileLock> first;
  ASSERT_TRUE(Env::Default()->LockFile(path, &first).ok());
  std::atomic<bool> second_has_it{false};
  std::thread waiter([&] {
    std::unique_ptr<FileLock> second;
    ASSERT_TRUE(Env::Default()->LockFile(path, &second).ok());  // a separate open: flock excludes it too
    second_has_it = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(second_has_it.load());
  first.reset();
  waiter.join();
  EXPECT_TRUE(second_has_it.load());
}

TEST(EnvTest, TryLockFileGivesNoLockWhileAnotherHolderHasIt) {
  ffyolo::testing::ScratchDir dir("env_try_lock");
  const std::string path = dir / "LOCK";
  std::unique_ptr<FileLock> first, second;
  ASSERT_TRUE(Env::Default()->TryLockFile(path, &first).ok());
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(Env::Default()->TryLockFile(path, &second).ok());  // a separate open: flock excludes it
  EXPECT_EQ(second, nullptr);
  first.reset();
  ASSERT_TRUE(Env::Default()->TryLockFile(path, &second).ok());
  EXPECT_NE(second, nullptr);
}

TEST(EnvTest, SharedLocksShareAndExcludeTheExclusiveOne) {
  ffyolo::testing::ScratchDir dir("env_shared_lock");
  const std::string path = dir / "LOCK";
  std::unique_ptr<FileLock> a, b, exclusive;
  bool held = true;
  ASSERT_TRUE(Env::Default()->TryLockFileShared(path, &a, &held).ok());  // no file: no lock, not held
  EXPECT_EQ(a, nullptr);
  EXPECT_FALSE(held);
  ASSERT_TRUE(Env::Default()->TryLockFile(path, &exclusive).ok());
  ASSERT_TRUE(Env::Default()->TryLockFileShared(path, &a, &held).ok());
  EXPECT_EQ(a, nullptr);
  EXPECT_TRUE(held);
  exclusive.reset();
  ASSERT_TRUE(Env::Default()->TryLockFileShared(path, &a, &held).ok());
  ASSERT_TRUE(Env::Default()->TryLockFileShared(path, &b, &held).ok());
  EXPECT_NE(a, nullptr);
  EXPECT_NE(b, nullptr);
  ASSERT_TRUE(Env::Default()->TryLockFile(path, &exclusive).ok());
  EXPECT_EQ(exclusive, nullptr) << "shared holders exclude the exclusive one";
}

TEST(EnvTest, LockFileInAMissingDirectoryNamesThePath) {
  ffyolo::testing::ScratchDir dir("env_lock_missing");
  std::unique_ptr<FileLock> lock;
  const Status s = Env::Default()->LockFile(dir / "no/such/LOCK", &lock);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no/such/LOCK"), std::string::npos) << s.ToString();
}

// An O_DIRECT read of whole blocks that comes back short (the file ended
// mid-block: a shard truncated under the reader) stops there. It used to read
// on at the unaligned position, which fails with EINVAL, naming neither the
// cause nor the sample, when the file has grown back meanwhile.
// sync_file_range on a real file, written or not yet, past its end or empty.
TEST(EnvTest, StartWritebackOfAnyRangeSucceeds) {
  ffyolo::testing::ScratchDir dir("writeback");
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(Env::Default()->NewWritableFile(dir / "f", &f).ok());
  const std::string data(10000, 'w');
  ASSERT_TRUE(f->Append(data.data(), data.size()).ok());
  for (const auto& [offset, n] : std::vector<std::pair<uint64_t, uint64_t>>{{0, 4096}, {4096, 5904}, {9000, 50000}, {0, 0}})
    EXPECT_TRUE(f->StartWriteback(offset, n).ok()) << offset << "+" << n;
  ASSERT_TRUE(f->Sync().ok());
  ASSERT_TRUE(f->Close().ok());
  EXPECT_EQ(ffyolo::testing::ReadFileToString(dir / "f"), data);
}

// Bytes a generator of its own makes, different at every offset.
std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>((seed = seed * 1103515245 + 12345) >> 16);
  return s;
}

// The calls a ShardWriter makes (a seek past the header, appends across
// chunks, the header written last at 0), with a sync in between and a patch
// inside the unwritten chunk: a direct file ends byte for byte as a buffered one.
TEST(EnvTest, DirectFileHoldsWhatABufferedOneHolds) {
  ffyolo::testing::ScratchDir dir("direct_write");
  Env* env = Env::Default();
  std::unique_ptr<WritableFile> direct, buffered;
  const Status opened = env->NewWritableFile(dir / "direct", true, &direct);
  if (opened.IsNotSupported()) GTEST_SKIP() << opened.ToString();
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  ASSERT_TRUE(env->NewWritableFile(dir / "buffered", false, &buffered).ok());
  uint32_t seed = 1;
  uint64_t end = 5000;
  const auto both = [&](const std::function<Status(WritableFile*)>& op) {
    const Status d = op(direct.get()), b = op(buffered.get());
    ASSERT_TRUE(d.ok()) << d.ToString();
    ASSERT_TRUE(b.ok()) << b.ToString();
  };
  both([&](WritableFile* f) { return f->Seek(5000); });
  for (const size_t n : std::vector<size_t>{1, 4095, 4096, 70000, size_t{3} << 20, 12345, size_t{5} << 20, 7}) {
    const std::string bytes = Pattern(n, seed++);
    both([&](WritableFile* f) { return f->Append(bytes.data(), bytes.size()); });
    end += n;
    if (n == 12345) both([](WritableFile* f) { return f->Sync(); });
  }
  const std::string header = Pattern(5000, seed++), patch = Pattern(3000, seed++);
  both([&](WritableFile* f) { return f->WriteAt(0, header.data(), header.size()); });   // on the disk
  both([&](WritableFile* f) { return f->WriteAt(end - 3500, patch.data(), patch.size()); });  // in the chunk
  both([](WritableFile* f) { return f->Sync(); });
  both([](WritableFile* f) { return f->Close(); });
  const std::string expected = ffyolo::testing::ReadFileToString(dir / "buffered");
  ASSERT_EQ(expected.size(), end);
  EXPECT_TRUE(ffyolo::testing::ReadFileToString(dir / "direct") == expected) << "the direct file differs";
}

TEST(EnvTest, DirectFileRefusesWritesAheadOfItsEnd) {
  ffyolo::testing::ScratchDir dir("direct_ahead");
  std::unique_ptr<WritableFile> f;
  const Status opened = Env::Default()->NewWritableFile(dir / "f", true, &f);
  if (opened.IsNotSupported()) GTEST_SKIP() << opened.ToString();
  ASSERT_TRUE(f->Append("abc", 3).ok());
  const Status s = f->WriteAt(2, "xy", 2);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find(dir / "f"), std::string::npos) << s.message();
  ASSERT_TRUE(f->Close().ok());
  EXPECT_EQ(ffyolo::testing::ReadFileToString(dir / "f"), "abc");
}

TEST(EnvTest, ShortDirectReadStopsAtTheEndOfTheFile) {
  ffyolo::testing::ScratchDir dir("direct_short");
  const std::string path = dir / "f";
  ASSERT_TRUE(ffyolo::testing::WriteStringToFile(path, std::string(8192, 'a')));
  std::unique_ptr<RandomAccessFile> file;
  const Status opened = Env::Default()->NewRandomAccessFile(path, true, &file);
  if (!opened.ok()) GTEST_SKIP() << "O_DIRECT unsupported here: " << opened.ToString();
  std::atomic<bool> stop{false};
  std::thread resizer([&] {  // 8192 -> 5000 -> 8192 bytes, over and over
    for (int i = 0; !stop; ++i) ASSERT_EQ(truncate(path.c_str(), i % 2 ? 8192 : 5000), 0);
  });
  ReadBuffer buf;
  uint8_t* p = buf.Reserve(8192);
  int shorts = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (int i = 0; shorts < 20 && std::chrono::steady_clock::now() < deadline; ++i) {
    size_t got = 0;
    const Status s = file->Read(0, 8192, p, &got);
    ASSERT_TRUE(s.ok()) << "read " << i << ": " << s.ToString();
    EXPECT_TRUE(got == 5000 || got == 8192) << got;
    shorts += got == 5000 ? 1 : 0;
  }
  stop = true;
  resizer.join();
  EXPECT_GT(shorts, 0);
}

// Nested directories, files and links go; what a link points to stays.
TEST(EnvTest, RemoveTreeRemovesEverythingBelowWithoutFollowingLinks) {
  namespace fs = std::filesystem;
  ffyolo::testing::ScratchDir scratch("remove_tree");
  const fs::path root = fs::path(scratch.path()) / "tree", outside = fs::path(scratch.path()) / "outside";
  fs::create_directories(root / "a" / "b" / "c");
  fs::create_directories(outside);
  for (const fs::path& file : {root / "top.txt", root / "a" / "b" / "c" / "deep.txt", outside / "kept.txt"})
    std::ofstream(file) << "bytes";
  fs::create_directory_symlink(outside, root / "a" / "link_to_outside");
  fs::create_symlink(outside / "kept.txt", root / "a" / "b" / "link_to_file");
  fs::create_symlink(root / "nowhere", root / "dangling");
  Env* env = Env::Default();
  Status s = env->RemoveTree(root.string());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(fs::exists(fs::symlink_status(root)));
  EXPECT_TRUE(fs::exists(outside / "kept.txt"));

  // A single file, and a path that is not there.
  s = env->RemoveTree((outside / "kept.txt").string());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(fs::exists(outside / "kept.txt"));
  EXPECT_TRUE(env->RemoveTree((outside / "missing").string()).ok());
}

// What cannot be removed is named: a directory below one whose entries are
// read-only (skipped as root, who may remove them anyway).
TEST(EnvTest, RemoveTreeNamesWhatItCannotRemove) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  namespace fs = std::filesystem;
  ffyolo::testing::ScratchDir scratch("remove_tree_denied");
  const fs::path locked = fs::path(scratch.path()) / "locked";
  fs::create_directories(locked / "inner");
  ::chmod(locked.c_str(), 0555);
  const Status s = Env::Default()->RemoveTree(scratch.path() + "/locked");
  ::chmod(locked.c_str(), 0755);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find(locked.string() + "/inner"), std::string::npos) << s.ToString();
}

// yolo-ffr show -o g.jpg wrote through a link left at g.jpg.tmp into the file it pointed at, and hung
// on a FIFO there: a file is created only where its name is, and only a regular one.
TEST(EnvTest, NewWritableFileWritesNeitherThroughALinkNorIntoAFifo) {
  ffyolo::testing::ScratchDir scratch("new_writable");
  const std::string fifo = scratch.path() + "/fifo", link = scratch.path() + "/link",
                    victim = scratch.path() + "/victim";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(victim) << "mine";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  Env* env = Env::Default();
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(link, &file);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find(link + ": is a symbolic link"), std::string::npos) << s.ToString();
  s = env->NewWritableFile(fifo, &file);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find(fifo + ": is a FIFO without a reader"), std::string::npos) << s.ToString();
  std::string kept;
  ASSERT_TRUE(ReadFileToString(env, victim, &kept).ok());
  EXPECT_EQ(kept, "mine");
  ASSERT_TRUE(WriteFileAtomically(env, victim, "new").ok());
  ASSERT_TRUE(ReadFileToString(env, victim, &kept).ok());
  EXPECT_EQ(kept, "new");
}

// A FIFO with no writer would block open() until something writes (a --weights naming one hung a
// tool for minutes): refused at once, as is a directory; a regular file reads as before.
TEST(EnvTest, NewRandomAccessFileRefusesWhatIsNotARegularFileWithoutBlocking) {
  ffyolo::testing::ScratchDir scratch("open_for_read");
  const std::string fifo = scratch.path() + "/fifo", file = scratch.path() + "/file";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(file) << "bytes";
  Env* env = Env::Default();
  std::unique_ptr<RandomAccessFile> opened;
  Status s = env->NewRandomAccessFile(fifo, false, &opened);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find(fifo + ": is a FIFO, not a regular file"), std::string::npos) << s.ToString();
  s = env->NewRandomAccessFile(scratch.path(), false, &opened);
  EXPECT_NE(s.ToString().find(scratch.path() + ": is a directory, not a regular file"), std::string::npos)
      << s.ToString();

  std::string bytes;
  s = ReadFileToString(env, file, &bytes);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(bytes, "bytes");
  s = env->NewRandomAccessFile(file, false, &opened);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(::fcntl(opened->descriptor(), F_GETFL) & O_NONBLOCK, 0) << "the descriptor reads block as usual";
}

}  // namespace
}  // namespace ffr
