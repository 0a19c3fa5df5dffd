// FaultyEnv: Env::Default() with injected faults, the one fault Env of the tests.
//
// Reads fail on request (flags below). Every call that changes the file system
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

class FaultyEnv : public ffr::Env {
 public:
  bool fail_reads_after_open = false;  // EIO on data reads (past a 4-sample shard's header)
  bool short_reads = false;            // data reads return half
  bool fail_map = false;               // mmap fails (ENOMEM)

  void FailFrom(WriteOp op, int64_t n) { fail_from_[Index(op)] = n; }
  int64_t calls(WriteOp op) const { return calls_[Index(op)].load(); }
  // The file or directory of the first injected failure ("" when none was).
  std::string failed_path() const;
  // Whether `message` names a file or directory an injected failure hit: where
  // threads write beside each other, the failure reported may not be the first.
  bool NamesAFailedPath(const std::string& message) const;

  ffr::Status Pread(int fd, void* buf, size_t n, uint64_t offset, size_t* read, const std::string& path) override;
  ffr::Status MapFile(int fd, uint64_t size, const std::string& path, const uint8_t** addr) override;
  using ffr::Env::NewWritableFile;
  ffr::Status NewWritableFile(const std::string& path, bool direct, std::unique_ptr<ffr::WritableFile>* out) override;
  ffr::Status RenameFile(const std::string& from, const std::string& to) override;
  ffr::Status RemoveFile(const std::string& path) override;
  ffr::Status RemoveTree(const std::string& path) override;
  ffr::Status SyncDir(const std::string& dir) override;
  ffr::Status CreateDirs(const std::string& dir) override;

 private:
  class File;
  static size_t Index(WriteOp op) { return static_cast<size_t>(op); }
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
};

}  // namespace ffyolo::testing
