#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ffr/env.h"

namespace ffr {
namespace {

std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
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
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
      if (w < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno("write " + path_, errno);
      }
      p += w;
      n -= static_cast<size_t>(w);
      offset += static_cast<uint64_t>(w);
    }
    return Status::OK();
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

class PosixFileLock : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing releases the flock

 private:
  int fd_;
};

}  // namespace

Env* Env::Default() {
  static Env* env = new Env();
  return env;
}

Status Env::OpenForRead(const std::string& path, bool direct, int* fd) {
  int flags = O_RDONLY | O_CLOEXEC;
  if (direct) flags |= O_DIRECT;
  const int f = ::open(path.c_str(), flags);
  if (f < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    if (direct && errno == EINVAL)
      return Status::NotSupported(path + ": the file system does not support O_DIRECT");
    return Status::FromErrno("open " + path, errno);
  }
  *fd = f;
  return Status::OK();
}

Status Env::Pread(int fd, void* buf, size_t n, uint64_t offset, size_t* read, const std::string& path) {
  size_t done = 0;
  char* p = static_cast<char*>(buf);
  while (done < n) {
    const ssize_t r = ::pread(fd, p + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("read " + path + " at offset " + std::to_string(offset + done), errno);
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
    // O_DIRECT moves whole blocks, so a short read there ended at the end of
    // the file; asking on at the unaligned position would fail with EINVAL
    // (or, if the file grew meanwhile, read past what was asked about).
    if (done < n && (fcntl(fd, F_GETFL) & O_DIRECT)) break;
  }
  *read = done;
  return Status::OK();
}

void Env::CloseFile(int fd) { ::close(fd); }

Status Env::MapFile(int fd, uint64_t size, const std::string& path, const uint8_t** addr) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) return Status::FromErrno("mmap " + path, errno);
  *addr = static_cast<const uint8_t*>(p);
  return Status::OK();
}

void Env::UnmapFile(const uint8_t* addr, uint64_t size) { ::munmap(const_cast<uint8_t*>(addr), size); }

Status Env::NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* out) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno("create " + path, errno);
  out->reset(new PosixWritableFile(path, fd));
  return Status::OK();
}

Status Env::RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return Status::FromErrno("rename " + from + " to " + to, errno);
  return Status::OK();
}

Status Env::RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno("remove " + path, errno);
  return Status::OK();
}

Status Env::RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return Status::FromErrno("remove " + path, ec.value());
  return Status::OK();
}

Status Env::SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open directory " + dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Status::FromErrno("fsync directory " + dir, err);
  return Status::OK();
}

Status Env::CreateDirs(const std::string& dir) {
  if (dir.empty() || IsDirectory(dir)) return Status::OK();
  FFR_RETURN_IF_ERROR(CreateDirs(DirName(dir)));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Status::FromErrno("mkdir " + dir, errno);
  return Status::OK();
}

Status Env::GetFileSize(const std::string& path, uint64_t* size) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::FromErrno("stat " + path, errno);
  }
  *size = static_cast<uint64_t>(st.st_size);
  return Status::OK();
}

bool Env::FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

bool Env::IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status Env::GetChildren(const std::string& dir, std::vector<std::string>* names) {
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

Status Env::LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno("create lock file " + path, errno);
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    return Status::FromErrno("lock " + path, err);
  }
  lock->reset(new PosixFileLock(fd));
  return Status::OK();
}

Status WriteFileAtomically(Env* env, const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp";
  std::unique_ptr<WritableFile> file;
  FFR_RETURN_IF_ERROR(env->NewWritableFile(tmp, &file));
  Status s = file->Append(data.data(), data.size());
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
  int fd = -1;
  FFR_RETURN_IF_ERROR(env->OpenForRead(path, false, &fd));
  data->resize(size);
  size_t got = 0;
  Status s = env->Pread(fd, data->data(), size, 0, &got, path);
  env->CloseFile(fd);
  if (s.ok() && got != size) s = Status::IOError(path + ": file shrank while being read");
  return s;
}

}  // namespace ffr
