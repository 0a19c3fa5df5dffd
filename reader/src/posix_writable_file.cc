#include "posix_writable_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

namespace ffr::internal {
namespace {

// All n bytes at offset, however many pwrite calls it takes.
Status PwriteAll(int fd, const char* p, size_t n, uint64_t offset, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("write " + path, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return Status::OK();
}

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(const void* data, size_t n) override {
    FFR_RETURN_IF_ERROR(WriteAt(pos_, data, n));
    pos_ += n;
    return Status::OK();
  }

  Status WriteAt(uint64_t offset, const void* data, size_t n) override {
    return PwriteAll(fd_, static_cast<const char*>(data), n, offset, path_);
  }

  Status Seek(uint64_t offset) override {
    pos_ = offset;
    return Status::OK();
  }

  Status StartWriteback(uint64_t offset, uint64_t n) override {
    if (::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(n), SYNC_FILE_RANGE_WRITE) == 0)
      return Status::OK();
    // Where the file system cannot or the kernel lacks the call, Sync does it all, as without the hint.
    if (errno == EINVAL || errno == ENOSYS || errno == ESPIPE) return Status::OK();
    return Status::FromErrno("write back " + path_, errno);
  }

  Status Sync() override {
    if (::fdatasync(fd_) != 0) return Status::FromErrno("fsync " + path_, errno);
    return Status::OK();
  }

  Status Close() override {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return Status::FromErrno("close " + path_, errno);
    return Status::OK();
  }

 private:
  std::string path_;
  int fd_;
  uint64_t pos_ = 0;
};

// O_DIRECT wants the buffer, the offset and the length aligned to the device's
// logical block; 4 KiB is a multiple of every common one.
constexpr uint64_t kDirectBlock = 4096;
// The bytes of one write: enough for a device's full speed.
constexpr size_t kDirectChunk = size_t{1} << 20;

uint64_t BlockDown(uint64_t x) { return x / kDirectBlock * kDirectBlock; }
uint64_t BlockUp(uint64_t x) { return BlockDown(x + kDirectBlock - 1); }

// Page-aligned memory for O_DIRECT, mapped for it alone: given back whole when
// freed, where the heap would keep a hole per shard written.
class PageBuffer {
 public:
  explicit PageBuffer(size_t n)
      : size_(n), data_(::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) {
    if (data_ == MAP_FAILED) throw std::bad_alloc();
  }
  ~PageBuffer() { ::munmap(data_, size_); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  char* get() const { return static_cast<char*>(data_); }
  void swap(PageBuffer& other) {
    std::swap(size_, other.size_);
    std::swap(data_, other.data_);
  }

 private:
  size_t size_;
  void* data_;
};

// An O_DIRECT file. Appends gather in an aligned chunk; a full one is written
// by a thread of the file's own while the next fills, so that the disk and the
// appends overlap as a buffered file's writeback lets them. The partial block
// at the end is written padded with zeros and the file cut back to its size by
// Sync and Close. WriteAt (a header written last) patches the chunk, or reads,
// patches and rewrites the blocks on the disk.
class DirectWritableFile : public WritableFile {
 public:
  DirectWritableFile(std::string path, int fd)
      : path_(std::move(path)), fd_(fd), chunk_(kDirectChunk), writing_(kDirectChunk) {
    flusher_ = std::thread([this] { Flush(); });
  }
  ~DirectWritableFile() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    flusher_.join();
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(const void* data, size_t n) override {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const size_t take = std::min(n, kDirectChunk - used_);
      std::memcpy(chunk_.get() + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      size_ = std::max(size_, start_ + used_);
      if (used_ == kDirectChunk) {
        FFR_RETURN_IF_ERROR(WaitForFlusher());
        chunk_.swap(writing_);
        {
          std::lock_guard<std::mutex> lock(mu_);
          writing_at_ = start_;
          flushing_ = true;
        }
        cv_.notify_all();
        start_ += kDirectChunk;
        used_ = 0;
      }
    }
    return Status::OK();
  }

  // Only behind the append position: what is ahead of it lives in no block yet.
  Status WriteAt(uint64_t offset, const void* data, size_t n) override {
    const char* p = static_cast<const char*>(data);
    const uint64_t end = offset + n;
    if (end > start_ + used_)
      return Status::InvalidArgument(path_ + ": O_DIRECT file written at " + std::to_string(end) +
                                     ", past its append position " + std::to_string(start_ + used_));
    FFR_RETURN_IF_ERROR(WaitForFlusher());
    if (end > start_) {  // the part in the chunk
      const uint64_t from = std::max(offset, start_);
      std::memcpy(chunk_.get() + (from - start_), p + (from - offset), end - from);
    }
    if (offset >= start_) return Status::OK();
    // The part on the disk: its whole blocks, read, patched and written back.
    const uint64_t disk_end = std::min(end, start_);
    const uint64_t first = BlockDown(offset), length = BlockUp(disk_end) - first;
    PageBuffer blocks(length);
    FFR_RETURN_IF_ERROR(ReadBlocks(blocks.get(), length, first));
    std::memcpy(blocks.get() + (offset - first), p, disk_end - offset);
    return WriteBlocks(blocks.get(), length, first);
  }

  Status Seek(uint64_t offset) override {
    FFR_RETURN_IF_ERROR(WaitForFlusher());
    FFR_RETURN_IF_ERROR(WriteTail());
    start_ = BlockDown(offset);
    used_ = offset - start_;
    // The block now appended to, as the file holds it before `offset`.
    return used_ > 0 ? ReadBlocks(chunk_.get(), kDirectBlock, start_) : Status::OK();
  }

  Status Sync() override {
    FFR_RETURN_IF_ERROR(WaitForFlusher());
    FFR_RETURN_IF_ERROR(WriteTail());
    if (::fdatasync(fd_) != 0) return Status::FromErrno("fsync " + path_, errno);
    return Status::OK();
  }

  Status Close() override {
    Status s = WaitForFlusher();
    if (s.ok()) s = WriteTail();
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && s.ok()) s = Status::FromErrno("close " + path_, errno);
    return s;
  }

 private:
  // The flusher thread: writes `writing_` at `writing_at_` when asked to.
  void Flush() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return flushing_ || quit_; });
      if (!flushing_) return;
      lock.unlock();
      const Status s = WriteBlocks(writing_.get(), kDirectChunk, writing_at_);
      lock.lock();
      if (flush_status_.ok()) flush_status_ = s;
      flushing_ = false;
      cv_.notify_all();
    }
  }

  // Once the chunk handed to the flusher is written: how its writes went.
  Status WaitForFlusher() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !flushing_; });
    return flush_status_;
  }

  // The chunk's bytes as whole blocks, zeros after the last, then the file cut
  // back to its size.
  Status WriteTail() {
    if (used_ == 0) return Status::OK();
    const size_t length = BlockUp(used_);
    std::memset(chunk_.get() + used_, 0, length - used_);
    FFR_RETURN_IF_ERROR(WriteBlocks(chunk_.get(), length, start_));
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) return Status::FromErrno("truncate " + path_, errno);
    return Status::OK();
  }

  Status WriteBlocks(const char* p, size_t n, uint64_t offset) { return PwriteAll(fd_, p, n, offset, path_); }

  // Zeros past the end of the file.
  Status ReadBlocks(char* p, size_t n, uint64_t offset) {
    std::memset(p, 0, n);
    while (n > 0 && offset < size_) {
      const ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Status::FromErrno("read " + path_, errno);
      if (r == 0) break;
      p += r;
      n -= static_cast<size_t>(r);
      offset += static_cast<uint64_t>(r);
    }
    return Status::OK();
  }

  std::string path_;
  int fd_;
  PageBuffer chunk_;  // the file's bytes [start_, start_ + used_)
  uint64_t start_ = 0;  // a multiple of kDirectBlock
  size_t used_ = 0;
  uint64_t size_ = 0;  // the end of what was appended
  PageBuffer writing_;  // the last full chunk, the flusher's
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t writing_at_ = 0;  // guarded by mu_, as the three below
  bool flushing_ = false;
  bool quit_ = false;
  Status flush_status_;  // the first failed write of the flusher
  std::thread flusher_;
};

}  // namespace

std::unique_ptr<WritableFile> NewPosixWritableFile(const std::string& path, int fd, bool direct) {
  if (direct) return std::make_unique<DirectWritableFile>(path, fd);
  return std::make_unique<PosixWritableFile>(path, fd);
}

}  // namespace ffr::internal
