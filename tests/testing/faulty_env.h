// FaultyEnv: Env::Default() with injected faults, the one fault Env of the tests.
//
// Reads fail on request (flags below), whichever way they come: a RandomAccessFile's Read, a
// ReadQueue's completions (the reader's io_uring backend) or a MappedFile (its mmap backend).
// Every data read is recorded, so a test can see what a reader asked for. Every call that changes the file system
// is counted by kind, so a test can count the calls of a clean run and then
// fail each one in turn: FailFrom(op, n) makes the n-th call of `op` (from 0,
// counted since construction) and every later one fail, as a full disk or a
// dead device does. A failing Append writes half its bytes first, leaving the
// torn file a real ENOSPC leaves. Injected messages name the file, as the
// POSIX Env's do. Syncs that do not fail are only counted: tests cannot
// observe durability, and real fsyncs on a busy disk turn a test of a few
// hundred packs into minutes. Safe to use from several threads.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "ffr/env.h"

namespace ffyolo::testing {

enum class WriteOp {
  kCreate,      // NewWritableFile
  kAppend,      // WritableFile::Append and WriteAt
  kSync,        // WritableFile::Sync
  kRename,      // RenameFile
  kSyncDir,     // SyncDir
  kCreateDirs,  // CreateDirs
  kRemove,      // RemoveFile and RemoveTree
};
inline constexpr int kNumWriteOps = 7;
const char* WriteOpName(WriteOp op);
// For GoogleTest's messages.
inline void PrintTo(WriteOp op, std::ostream* os) { *os << WriteOpName(op); }

class FaultyEnv : public ffr::EnvWrapper {
 public:
  FaultyEnv() : EnvWrapper(ffr::Env::Default()) {}

  // The flags may change while files are open; set them while no read is running.
  bool fail_reads_after_open = false;  // EIO on data reads (past a 4-sample shard's header)
  // Data reads see the file end at this byte, as if it was cut there after it was opened.
  uint64_t reads_end_at = std::numeric_limits<uint64_t>::max();
  bool fail_map = false;               // mmap fails (ENOMEM)
  bool maps_shrink = false;            // mapped files report pages gone, as when cut while mapped

  // A data read asked of a file or a read queue: its offset and length.
  struct ReadCall {
    uint64_t offset;
    size_t n;
  };
  std::vector<ReadCall> reads() const;
  void ClearReads();

  void FailFrom(WriteOp op, int64_t n) { fail_from_[Index(op)] = n; }
  int64_t calls(WriteOp op) const { return calls_[Index(op)].load(); }
  // The file or directory of the first injected failure ("" when none was).
  std::string failed_path() const;
  // Whether `message` names a file or directory an injected failure hit: where
  // threads write beside each other, the failure reported may not be the first.
  bool NamesAFailedPath(const std::string& message) const;

  ffr::Status NewRandomAccessFile(const std::string& path, bool direct,
                                  std::unique_ptr<ffr::RandomAccessFile>* out) override;
  ffr::Status NewMappedFile(const ffr::RandomAccessFile& file, uint64_t size,
                            std::unique_ptr<ffr::MappedFile>* out) override;
  ffr::Status NewReadQueue(const std::vector<const ffr::RandomAccessFile*>& files, unsigned depth,
                           std::unique_ptr<ffr::ReadQueue>* out) override;
  using ffr::Env::NewWritableFile;
  ffr::Status NewWritableFile(const std::string& path, bool direct, std::unique_ptr<ffr::WritableFile>* out) override;
  ffr::Status RenameFile(const std::string& from, const std::string& to) override;
  ffr::Status RemoveFile(const std::string& path) override;
  ffr::Status RemoveTree(const std::string& path) override;
  ffr::Status SyncDir(const std::string& dir) override;
  ffr::Status CreateDirs(const std::string& dir) override;

 private:
  class File;
  class ReadFile;
  class Queue;
  class Mapping;
  static size_t Index(WriteOp op) { return static_cast<size_t>(op); }
  // Records a read of n bytes at offset; true when it is to fail with EIO.
  bool FailsRead(uint64_t offset, size_t n);
  // The bytes of a read of n at offset that lie before the cut.
  size_t BeforeTheEnd(uint64_t offset, size_t n) const;
  // Counts a call of `op` on `path`; true when it is to fail.
  bool Fails(WriteOp op, const std::string& path);

  std::array<std::atomic<int64_t>, kNumWriteOps> calls_{};
  std::array<int64_t, kNumWriteOps> fail_from_ = [] {
    std::array<int64_t, kNumWriteOps> a;
    a.fill(std::numeric_limits<int64_t>::max());
    return a;
  }();
  mutable std::mutex mu_;
  std::vector<std::string> failed_paths_;  // in the order of the failures
  std::vector<ReadCall> reads_;
};

}  // namespace ffyolo::testing
