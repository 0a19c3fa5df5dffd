// Env: the file-system seam of the reader and the writers, as LevelDB's. Everything that touches
// files goes through an Env and the file objects it hands out, the fast read paths included: the
// reader's pread backend reads RandomAccessFiles, its io_uring backend a ReadQueue over them, its
// mmap backend MappedFiles. Env::Default() is the POSIX implementation; an EnvWrapper forwards
// every call to another Env, so tests inject faults (EIO, short reads, failed fsync or rename) on
// any path by overriding the calls they care about.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ffr/status.h"

namespace ffr {

// A file open for reading at any offset. Safe to use from many threads at once.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // The path it was opened by, for messages.
  virtual const std::string& path() const = 0;
  // Reads up to n bytes at offset into dst; *read < n only at the end of the file.
  virtual Status Read(uint64_t offset, size_t n, void* dst, size_t* read) const = 0;
  // The operating system's descriptor, which an Env's ReadQueue reads through; -1 for a file that
  // has none. A wrapper hands on its target's.
  virtual int descriptor() const = 0;
};

// A file's bytes mapped read-only: the page cache itself, read without a copy or a system call.
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual const uint8_t* data() const = 0;
  virtual uint64_t size() const = 0;
  // Whether a page of the mapping was found gone since it was mapped (the file shrank): such pages
  // read as zeros from then on instead of killing the process, and what was read is not the file.
  virtual bool Shrank() const = 0;
};

// Reads in flight on a fixed list of files (io_uring in the POSIX Env): reads are queued, then one
// system call submits them all and waits. One user at a time.
class ReadQueue {
 public:
  virtual ~ReadQueue() = default;
  // The most reads in flight.
  virtual unsigned depth() const = 0;
  // Queues a read of n bytes at `offset` of the queue's file `file` into dst. At most depth() reads
  // may be queued or in flight; `tag` comes back with the read's completion.
  virtual void Prepare(size_t file, uint64_t offset, size_t n, void* dst, uint64_t tag) = 0;
  // A finished read: its tag, and the bytes it read (fewer than asked at the end of the file, or
  // for a read to continue) or -errno (-EAGAIN and -EINTR: queue it again).
  using Completion = std::function<void(uint64_t tag, int64_t result)>;
  // Submits what is queued, waits until at least `wait` reads finished and hands each finished one
  // to `complete`.
  virtual Status SubmitAndReap(unsigned wait, const Completion& complete) = 0;
};

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

// The file system. Every call is safe from many threads at once.
class Env {
 public:
  virtual ~Env() = default;

  // The process-wide POSIX Env. Never deleted.
  static Env* Default();

  // Opens `path` for reading; with `direct` with O_DIRECT (reads of whole 4096-byte blocks into
  // aligned memory). Anything but a regular file (a FIFO, a directory, a device) is refused with
  // InvalidArgument, without blocking.
  virtual Status NewRandomAccessFile(const std::string& path, bool direct,
                                     std::unique_ptr<RandomAccessFile>* out) = 0;
  // Maps the first `size` bytes of `file` read-only and shared, populated.
  virtual Status NewMappedFile(const RandomAccessFile& file, uint64_t size, std::unique_ptr<MappedFile>* out) = 0;
  // A queue of up to `depth` reads in flight on `files` (which outlive it); NotSupported where the
  // kernel or the files allow none, and the caller reads file by file instead.
  virtual Status NewReadQueue(const std::vector<const RandomAccessFile*>& files, unsigned depth,
                              std::unique_ptr<ReadQueue>* out) = 0;

  // Creates or truncates `path` for writing. With `direct`, the file writes
  // past the page cache (O_DIRECT) from aligned buffers of its own, so that a
  // writer of gigabytes neither copies them into the cache nor evicts what
  // else is cached; NotSupported where the file system refuses O_DIRECT.
  // Never writes through a symbolic link nor into anything but a regular file.
  virtual Status NewWritableFile(const std::string& path, bool direct, std::unique_ptr<WritableFile>* out) = 0;
  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* out) {
    return NewWritableFile(path, false, out);
  }
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  // Removes `path` and, for a directory, everything under it; symbolic links
  // are removed, not followed. A missing path is not an error.
  virtual Status RemoveTree(const std::string& path) = 0;
  // fsync of a directory, so that a rename inside it is durable.
  virtual Status SyncDir(const std::string& dir) = 0;
  virtual Status CreateDirs(const std::string& dir) = 0;
  virtual Status GetFileSize(const std::string& path, uint64_t* size) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  virtual bool IsDirectory(const std::string& path) = 0;
  // Names (not paths) of the entries of `dir`, sorted.
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* names) = 0;
  // Locks `path` (created when missing), waiting while another holder has it:
  // processes that must not write the same output at once take turns.
  virtual Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) = 0;
  // The same without waiting: OK with *lock null while another holder has it.
  virtual Status TryLockFile(const std::string& path, std::unique_ptr<FileLock>* lock) = 0;
  // A shared lock on an existing `path` (opened read-only), without waiting: any number of shared
  // holders, but none while a LockFile holder has it, which in turn waits for them. OK with *lock
  // null when `path` does not exist or a LockFile holder has it (*held_elsewhere then true).
  virtual Status TryLockFileShared(const std::string& path, std::unique_ptr<FileLock>* lock, bool* held_elsewhere) = 0;
};

// An Env that forwards every call to `target`: the base of an Env that changes a few calls.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  Status NewRandomAccessFile(const std::string& path, bool direct, std::unique_ptr<RandomAccessFile>* out) override {
    return target_->NewRandomAccessFile(path, direct, out);
  }
  Status NewMappedFile(const RandomAccessFile& file, uint64_t size, std::unique_ptr<MappedFile>* out) override {
    return target_->NewMappedFile(file, size, out);
  }
  Status NewReadQueue(const std::vector<const RandomAccessFile*>& files, unsigned depth,
                      std::unique_ptr<ReadQueue>* out) override {
    return target_->NewReadQueue(files, depth, out);
  }
  using Env::NewWritableFile;
  Status NewWritableFile(const std::string& path, bool direct, std::unique_ptr<WritableFile>* out) override {
    return target_->NewWritableFile(path, direct, out);
  }
  Status RenameFile(const std::string& from, const std::string& to) override { return target_->RenameFile(from, to); }
  Status RemoveFile(const std::string& path) override { return target_->RemoveFile(path); }
  Status RemoveTree(const std::string& path) override { return target_->RemoveTree(path); }
  Status SyncDir(const std::string& dir) override { return target_->SyncDir(dir); }
  Status CreateDirs(const std::string& dir) override { return target_->CreateDirs(dir); }
  Status GetFileSize(const std::string& path, uint64_t* size) override { return target_->GetFileSize(path, size); }
  bool FileExists(const std::string& path) override { return target_->FileExists(path); }
  bool IsDirectory(const std::string& path) override { return target_->IsDirectory(path); }
  Status GetChildren(const std::string& dir, std::vector<std::string>* names) override {
    return target_->GetChildren(dir, names);
  }
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override {
    return target_->LockFile(path, lock);
  }
  Status TryLockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override {
    return target_->TryLockFile(path, lock);
  }
  Status TryLockFileShared(const std::string& path, std::unique_ptr<FileLock>* lock, bool* held_elsewhere) override {
    return target_->TryLockFileShared(path, lock, held_elsewhere);
  }

 private:
  Env* target_;
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
