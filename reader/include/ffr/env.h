// Env: the file-system seam of the reader and the writers. Everything that
// touches files goes through an Env, so tests can inject faults (short reads,
// EIO, failed fsync or rename) by wrapping Env::Default().
//
// The io_uring backend issues reads on the descriptors an Env opened but does
// not call Env::Pread; fault-injection tests therefore use the pread backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ffr/status.h"

namespace ffr {

// A file being written sequentially. Close() without Sync() gives no durability.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(const void* data, size_t n) = 0;
  // Writes at an absolute offset without moving the append position.
  virtual Status WriteAt(uint64_t offset, const void* data, size_t n) = 0;
  // Moves the append position (the gap reads as zeros until written).
  virtual Status Seek(uint64_t offset) = 0;
  // Starts writing [offset, offset + n) to the disk without waiting for it,
  // so that a long sequential writer keeps the disk busy as it goes instead of
  // leaving everything to Sync. A hint: durability still takes Sync.
  virtual Status StartWriteback(uint64_t /*offset*/, uint64_t /*n*/) { return Status::OK(); }
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
};

// An exclusive advisory lock on a file (flock); released when destroyed or
// when its process dies.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide POSIX Env. Never deleted.
  static Env* Default();

  // Opens `path` read-only; with `direct` adds O_DIRECT. The caller closes *fd. Anything but a
  // regular file (a FIFO, a directory, a device) is refused with InvalidArgument, without blocking.
  virtual Status OpenForRead(const std::string& path, bool direct, int* fd);
  // Reads up to n bytes at offset; *read < n only at end of file.
  virtual Status Pread(int fd, void* buf, size_t n, uint64_t offset, size_t* read, const std::string& path);
  virtual void CloseFile(int fd);
  // Maps the first `size` bytes of an open file read-only and shared (the
  // page cache itself); *addr stays valid until UnmapFile.
  virtual Status MapFile(int fd, uint64_t size, const std::string& path, const uint8_t** addr);
  virtual void UnmapFile(const uint8_t* addr, uint64_t size);

  // Creates or truncates `path` for writing. With `direct`, the file writes
  // past the page cache (O_DIRECT) from aligned buffers of its own, so that a
  // writer of gigabytes neither copies them into the cache nor evicts what
  // else is cached; NotSupported where the file system refuses O_DIRECT.
  virtual Status NewWritableFile(const std::string& path, bool direct, std::unique_ptr<WritableFile>* out);
  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* out) {
    return NewWritableFile(path, false, out);
  }
  virtual Status RenameFile(const std::string& from, const std::string& to);
  virtual Status RemoveFile(const std::string& path);
  // Removes `path` and, for a directory, everything under it; symbolic links
  // are removed, not followed. A missing path is not an error.
  virtual Status RemoveTree(const std::string& path);
  // fsync of a directory, so that a rename inside it is durable.
  virtual Status SyncDir(const std::string& dir);
  virtual Status CreateDirs(const std::string& dir);
  virtual Status GetFileSize(const std::string& path, uint64_t* size);
  virtual bool FileExists(const std::string& path);
  virtual bool IsDirectory(const std::string& path);
  // Names (not paths) of the entries of `dir`, sorted.
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* names);
  // Locks `path` (created when missing), waiting while another holder has it:
  // processes that must not write the same output at once take turns.
  virtual Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock);
  // The same without waiting: OK with *lock null while another holder has it.
  virtual Status TryLockFile(const std::string& path, std::unique_ptr<FileLock>* lock);
  // A shared lock on an existing `path` (opened read-only), without waiting: any number of shared
  // holders, but none while a LockFile holder has it, which in turn waits for them. OK with *lock
  // null when `path` does not exist or a LockFile holder has it (*held_elsewhere then true).
  virtual Status TryLockFileShared(const std::string& path, std::unique_ptr<FileLock>* lock, bool* held_elsewhere);
};

// Writes `data` to `path` atomically: a temporary name in the same directory,
// fsync, rename, fsync of the directory. A crash leaves the old file or none.
Status WriteFileAtomically(Env* env, const std::string& path, const std::string& data);
// The same for contents made as they are written: `write` appends them to the
// temporary file (it must not sync or close it).
Status WriteFileAtomically(Env* env, const std::string& path, const std::function<Status(WritableFile*)>& write);

// Reads a whole file.
Status ReadFileToString(Env* env, const std::string& path, std::string* data);

}  // namespace ffr
