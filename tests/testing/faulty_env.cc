#include "testing/faulty_env.h"

#include <cerrno>

namespace ffyolo::testing {

using ffr::Status;

namespace {

// Where data starts in a shard of 4 samples: the header of 12 bytes and 12 per sample.
constexpr uint64_t kFourSampleHeader = 12 + 12 * 4;

}  // namespace

const char* WriteOpName(WriteOp op) {
  switch (op) {
    case WriteOp::kCreate: return "create";
    case WriteOp::kAppend: return "append";
    case WriteOp::kSync: return "sync";
    case WriteOp::kRename: return "rename";
    case WriteOp::kSyncDir: return "syncdir";
    case WriteOp::kCreateDirs: return "createdirs";
    case WriteOp::kRemove: return "remove";
  }
  return "?";
}

class FaultyEnv::File : public ffr::WritableFile {
 public:
  File(std::unique_ptr<ffr::WritableFile> inner, std::string path, FaultyEnv* env)
      : inner_(std::move(inner)), path_(std::move(path)), env_(env) {}

  Status Append(const void* d, size_t n) override {
    if (!env_->Fails(WriteOp::kAppend, path_)) return inner_->Append(d, n);
    inner_->Append(d, n / 2);
    return Status::FromErrno("write " + path_ + " (injected)", ENOSPC);
  }
  Status WriteAt(uint64_t o, const void* d, size_t n) override {
    if (!env_->Fails(WriteOp::kAppend, path_)) return inner_->WriteAt(o, d, n);
    inner_->WriteAt(o, d, n / 2);
    return Status::FromErrno("write " + path_ + " (injected)", ENOSPC);
  }
  Status Seek(uint64_t o) override { return inner_->Seek(o); }
  Status StartWriteback(uint64_t o, uint64_t n) override { return inner_->StartWriteback(o, n); }
  Status Sync() override {
    if (env_->Fails(WriteOp::kSync, path_)) return Status::FromErrno("fsync " + path_ + " (injected)", EIO);
    return Status::OK();
  }
  Status Close() override { return inner_->Close(); }

 private:
  std::unique_ptr<ffr::WritableFile> inner_;
  std::string path_;
  FaultyEnv* env_;
};

bool FaultyEnv::Fails(WriteOp op, const std::string& path) {
  if (calls_[Index(op)].fetch_add(1) < fail_from_[Index(op)]) return false;
  std::lock_guard<std::mutex> lock(mu_);
  failed_paths_.push_back(path);
  return true;
}

std::string FaultyEnv::failed_path() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_paths_.empty() ? std::string() : failed_paths_.front();
}

bool FaultyEnv::NamesAFailedPath(const std::string& message) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& path : failed_paths_)
    if (message.find(path) != std::string::npos) return true;
  return false;
}

Status FaultyEnv::Pread(int fd, void* buf, size_t n, uint64_t offset, size_t* read, const std::string& path) {
  if (offset >= kFourSampleHeader && fail_reads_after_open) return Status::IOError("read " + path + ": injected EIO");
  Status s = Env::Pread(fd, buf, n, offset, read, path);
  if (s.ok() && short_reads && offset >= kFourSampleHeader) *read /= 2;
  return s;
}

Status FaultyEnv::MapFile(int fd, uint64_t size, const std::string& path, const uint8_t** addr) {
  if (fail_map) return Status::FromErrno("mmap " + path, ENOMEM);
  return Env::MapFile(fd, size, path, addr);
}

Status FaultyEnv::NewWritableFile(const std::string& path, bool direct, std::unique_ptr<ffr::WritableFile>* out) {
  if (Fails(WriteOp::kCreate, path)) return Status::FromErrno("create " + path + " (injected)", ENOSPC);
  std::unique_ptr<ffr::WritableFile> inner;
  FFR_RETURN_IF_ERROR(Env::NewWritableFile(path, direct, &inner));
  out->reset(new File(std::move(inner), path, this));
  return Status::OK();
}

Status FaultyEnv::RenameFile(const std::string& from, const std::string& to) {
  if (Fails(WriteOp::kRename, from)) return Status::FromErrno("rename " + from + " to " + to + " (injected)", EIO);
  return Env::RenameFile(from, to);
}

Status FaultyEnv::RemoveFile(const std::string& path) {
  if (Fails(WriteOp::kRemove, path)) return Status::FromErrno("remove " + path + " (injected)", EIO);
  return Env::RemoveFile(path);
}

Status FaultyEnv::RemoveTree(const std::string& path) {
  if (Fails(WriteOp::kRemove, path)) return Status::FromErrno("remove " + path + " (injected)", EIO);
  return Env::RemoveTree(path);
}

Status FaultyEnv::SyncDir(const std::string& dir) {
  if (Fails(WriteOp::kSyncDir, dir)) return Status::FromErrno("fsync directory " + dir + " (injected)", EIO);
  return Status::OK();
}

Status FaultyEnv::CreateDirs(const std::string& dir) {
  if (Fails(WriteOp::kCreateDirs, dir)) return Status::FromErrno("mkdir " + dir + " (injected)", EIO);
  return Env::CreateDirs(dir);
}

}  // namespace ffyolo::testing
