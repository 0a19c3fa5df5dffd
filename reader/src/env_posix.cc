#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "ffr/env.h"
#include "mapping_guard.h"
#include "posix_writable_file.h"
#include "uring_read_queue.h"

namespace ffr {
namespace {

std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

class PosixFileLock : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing releases the flock

 private:
  int fd_;
};

const char* KindOfFile(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a plain file";
}

class PosixRandomAccessFile : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string path, int fd, bool direct) : path_(std::move(path)), fd_(fd), direct_(direct) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  const std::string& path() const override { return path_; }
  int descriptor() const override { return fd_; }

  Status Read(uint64_t offset, size_t n, void* dst, size_t* read) const override {
    size_t done = 0;
    char* p = static_cast<char*>(dst);
    while (done < n) {
      const ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno("read " + path_ + " at offset " + std::to_string(offset + done), errno);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
      // O_DIRECT moves whole blocks, so a short read there ended at the end of
      // the file; asking on at the unaligned position would fail with EINVAL
      // (or, if the file grew meanwhile, read past what was asked about).
      if (direct_) break;
    }
    *read = done;
    return Status::OK();
  }

 private:
  std::string path_;
  int fd_;
  bool direct_;
};

class PosixMappedFile : public MappedFile {
 public:
  PosixMappedFile(const uint8_t* data, uint64_t size, int guard) : data_(data), size_(size), guard_(guard) {}
  ~PosixMappedFile() override {
    internal::UnguardMapping(guard_);
    ::munmap(const_cast<uint8_t*>(data_), size_);
  }

  const uint8_t* data() const override { return data_; }
  uint64_t size() const override { return size_; }
  bool Shrank() const override { return internal::MappingShrank(guard_); }

 private:
  const uint8_t* data_;
  uint64_t size_;
  int guard_;
};

class PosixEnv : public Env {
 public:
  Status NewRandomAccessFile(const std::string& path, bool direct, std::unique_ptr<RandomAccessFile>* out) override;
  Status NewMappedFile(const RandomAccessFile& file, uint64_t size, std::unique_ptr<MappedFile>* out) override;
  Status NewReadQueue(const std::vector<const RandomAccessFile*>& files, unsigned depth,
                      std::unique_ptr<ReadQueue>* out) override;
  using Env::NewWritableFile;
  Status NewWritableFile(const std::string& path, bool direct, std::unique_ptr<WritableFile>* out) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
  Status RemoveTree(const std::string& path) override;
  Status SyncDir(const std::string& dir) override;
  Status CreateDirs(const std::string& dir) override;
  Status GetFileSize(const std::string& path, uint64_t* size) override;
  bool FileExists(const std::string& path) override;
  bool IsDirectory(const std::string& path) override;
  Status GetChildren(const std::string& dir, std::vector<std::string>* names) override;
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override;
  Status TryLockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override;
  Status TryLockFileShared(const std::string& path, std::unique_ptr<FileLock>* lock, bool* held_elsewhere) override;
};

}  // namespace

Env* Env::Default() {
  static Env* env = new PosixEnv();
  return env;
}

// O_NONBLOCK so that a FIFO with no writer cannot block the open (it would, unkillably for a tool
// deferring its signals, until something writes); every file read here is a regular one.
Status PosixEnv::NewRandomAccessFile(const std::string& path, bool direct, std::unique_ptr<RandomAccessFile>* out) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  if (direct) flags |= O_DIRECT;
  const int f = ::open(path.c_str(), flags);
  if (f < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    if (direct && errno == EINVAL)
      return Status::NotSupported(path + ": the file system does not support O_DIRECT");
    return Status::FromErrno("open " + path, errno);
  }
  struct stat st;
  if (::fstat(f, &st) != 0) {
    const int error = errno;
    ::close(f);
    return Status::FromErrno("stat " + path, error);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(f);
    return Status::InvalidArgument(path + ": is " + KindOfFile(st.st_mode) + ", not a regular file");
  }
  const int status_flags = ::fcntl(f, F_GETFL);
  if (status_flags < 0 || ::fcntl(f, F_SETFL, status_flags & ~O_NONBLOCK) != 0) {
    const int error = errno;
    ::close(f);
    return Status::FromErrno("fcntl " + path, error);
  }
  out->reset(new PosixRandomAccessFile(path, f, direct));
  return Status::OK();
}

Status PosixEnv::NewMappedFile(const RandomAccessFile& file, uint64_t size, std::unique_ptr<MappedFile>* out) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED | MAP_POPULATE, file.descriptor(), 0);
  if (p == MAP_FAILED) return Status::FromErrno("mmap " + file.path(), errno);
  const int guard = internal::GuardMapping(p, size);
  if (guard < 0) {
    ::munmap(p, size);
    return Status::NotSupported(file.path() + ": too many files mapped at once");
  }
  out->reset(new PosixMappedFile(static_cast<const uint8_t*>(p), size, guard));
  return Status::OK();
}

Status PosixEnv::NewReadQueue(const std::vector<const RandomAccessFile*>& files, unsigned depth,
                              std::unique_ptr<ReadQueue>* out) {
  std::vector<int> fds;
  for (const RandomAccessFile* file : files) {
    if (file->descriptor() < 0) return Status::NotSupported(file->path() + ": no descriptor to read through io_uring");
    fds.push_back(file->descriptor());
  }
  return internal::NewUringReadQueue(fds, depth, out);
}

Status PosixEnv::NewWritableFile(const std::string& path, bool direct, std::unique_ptr<WritableFile>* out) {
  // A direct file reads back the blocks that WriteAt patches.
  const int flags = direct ? O_RDWR | O_DIRECT : O_WRONLY;
  // Not through a link nor into a FIFO or a device (O_NONBLOCK: opening a FIFO without a reader
  // fails at once instead of blocking): a file is written only where its name is, a regular one.
  const int fd = ::open(path.c_str(), flags | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0 && direct && errno == EINVAL)
    return Status::NotSupported(path + ": the file system does not support O_DIRECT");
  if (fd < 0 && errno == ELOOP) return Status::InvalidArgument("create " + path + ": is a symbolic link");
  if (fd < 0 && errno == ENXIO) return Status::InvalidArgument("create " + path + ": is a FIFO without a reader");
  if (fd < 0) return Status::FromErrno("create " + path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument("create " + path + ": is not a regular file");
  }
  const int status_flags = ::fcntl(fd, F_GETFL);
  if (status_flags >= 0) ::fcntl(fd, F_SETFL, status_flags & ~O_NONBLOCK);
  *out = internal::NewPosixWritableFile(path, fd, direct);
  return Status::OK();
}

Status PosixEnv::RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return Status::FromErrno("rename " + from + " to " + to, errno);
  return Status::OK();
}

Status PosixEnv::RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno("remove " + path, errno);
  return Status::OK();
}

namespace {

// Removes `name` (relative to the directory `dir_fd`, or AT_FDCWD) and, for a
// directory, everything under it, depth first, without following symbolic
// links; `path` names it in messages.
Status RemoveEntry(int dir_fd, const char* name, const std::string& path) {
  if (::unlinkat(dir_fd, name, 0) == 0 || errno == ENOENT) return Status::OK();
  if (errno != EISDIR && errno != EPERM) return Status::FromErrno("remove " + path, errno);  // Linux: EISDIR
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open directory " + path, errno);
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int err = errno;
    ::close(fd);
    return Status::FromErrno("open directory " + path, err);
  }
  Status result;
  while (result.ok()) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) result = Status::FromErrno("read directory " + path, errno);
      break;
    }
    const std::string child = entry->d_name;
    if (child != "." && child != "..") result = RemoveEntry(::dirfd(dir), child.c_str(), path + "/" + child);
  }
  ::closedir(dir);
  if (result.ok() && ::unlinkat(dir_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
    result = Status::FromErrno("remove " + path, errno);
  return result;
}

}  // namespace

// With POSIX calls, not std::filesystem::remove_all: PyTorch's 2.x binaries
// export a copy of it that jumps to address 0 under another libstdc++
// (pytorch/pytorch#133437, docs/build.md), and every ffyolo tool may link them.
Status PosixEnv::RemoveTree(const std::string& path) { return RemoveEntry(AT_FDCWD, path.c_str(), path); }

Status PosixEnv::SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open directory " + dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Status::FromErrno("fsync directory " + dir, err);
  return Status::OK();
}

Status PosixEnv::CreateDirs(const std::string& dir) {
  if (dir.empty() || IsDirectory(dir)) return Status::OK();
  FFR_RETURN_IF_ERROR(CreateDirs(DirName(dir)));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Status::FromErrno("mkdir " + dir, errno);
  return Status::OK();
}

Status PosixEnv::GetFileSize(const std::string& path, uint64_t* size) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::FromErrno("stat " + path, errno);
  }
  *size = static_cast<uint64_t>(st.st_size);
  return Status::OK();
}

bool PosixEnv::FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

bool PosixEnv::IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status PosixEnv::GetChildren(const std::string& dir, std::vector<std::string>* names) {
  names->clear();
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return Status::NotFound(dir + ": no such directory");
    return Status::FromErrno("list " + dir, errno);
  }
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names->emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names->begin(), names->end());
  return Status::OK();
}

namespace {

// flock(2) with `operation` on `fd` (closed unless locked); *lock stays null when LOCK_NB finds another holder.
Status Flock(const std::string& path, int fd, int operation, std::unique_ptr<FileLock>* lock) {
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return Status::OK();
    return Status::FromErrno("lock " + path, err);
  }
  lock->reset(new PosixFileLock(fd));
  return Status::OK();
}

Status OpenLockFile(const std::string& path, int* fd) {
  *fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  return *fd < 0 ? Status::FromErrno("create lock file " + path, errno) : Status::OK();
}

}  // namespace

Status PosixEnv::LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) {
  lock->reset();
  int fd = -1;
  FFR_RETURN_IF_ERROR(OpenLockFile(path, &fd));
  return Flock(path, fd, LOCK_EX, lock);
}

Status PosixEnv::TryLockFile(const std::string& path, std::unique_ptr<FileLock>* lock) {
  lock->reset();
  int fd = -1;
  FFR_RETURN_IF_ERROR(OpenLockFile(path, &fd));
  return Flock(path, fd, LOCK_EX | LOCK_NB, lock);
}

Status PosixEnv::TryLockFileShared(const std::string& path, std::unique_ptr<FileLock>* lock, bool* held_elsewhere) {
  lock->reset();
  *held_elsewhere = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Status::OK() : Status::FromErrno("open lock file " + path, errno);
  FFR_RETURN_IF_ERROR(Flock(path, fd, LOCK_SH | LOCK_NB, lock));
  *held_elsewhere = *lock == nullptr;
  return Status::OK();
}

Status WriteFileAtomically(Env* env, const std::string& path, const std::string& data) {
  return WriteFileAtomically(env, path, [&data](WritableFile* file) { return file->Append(data.data(), data.size()); });
}

Status WriteFileAtomically(Env* env, const std::string& path, const std::function<Status(WritableFile*)>& write) {
  const std::string tmp = path + ".tmp";
  std::unique_ptr<WritableFile> file;
  FFR_RETURN_IF_ERROR(env->NewWritableFile(tmp, &file));
  Status s = write(file.get());
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = env->RenameFile(tmp, path);
  if (!s.ok()) {
    env->RemoveFile(tmp);
    return s;
  }
  return env->SyncDir(DirName(path));
}

Status ReadFileToString(Env* env, const std::string& path, std::string* data) {
  uint64_t size = 0;
  FFR_RETURN_IF_ERROR(env->GetFileSize(path, &size));
  std::unique_ptr<RandomAccessFile> file;
  FFR_RETURN_IF_ERROR(env->NewRandomAccessFile(path, false, &file));
  data->resize(size);
  size_t got = 0;
  FFR_RETURN_IF_ERROR(file->Read(0, size, data->data(), &got));
  if (got != size) return Status::IOError(path + ": file shrank while being read");
  return Status::OK();
}

}  // namespace ffr
