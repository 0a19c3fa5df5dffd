#include "testing/faulty_env.h"

#include <algorithm>
#include <cerrno>
#include <unordered_map>

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

class FaultyEnv::ReadFile : public ffr::RandomAccessFile {
 public:
  ReadFile(std::unique_ptr<ffr::RandomAccessFile> inner, FaultyEnv* env) : inner_(std::move(inner)), env_(env) {}

  const std::string& path() const override { return inner_->path(); }
  int descriptor() const override { return inner_->descriptor(); }
  Status Read(uint64_t offset, size_t n, void* dst, size_t* read) const override {
    if (env_->FailsRead(offset, n)) return Status::IOError("read " + path() + ": injected EIO");
    return inner_->Read(offset, env_->BeforeTheEnd(offset, n), dst, read);
  }

 private:
  std::unique_ptr<ffr::RandomAccessFile> inner_;
  FaultyEnv* env_;
};

class FaultyEnv::Queue : public ffr::ReadQueue {
 public:
  Queue(std::unique_ptr<ffr::ReadQueue> inner, FaultyEnv* env) : inner_(std::move(inner)), env_(env) {}

  unsigned depth() const override { return inner_->depth(); }
  void Prepare(size_t file, uint64_t offset, size_t n, void* dst, uint64_t tag) override {
    asked_[tag] = {offset, n};
    inner_->Prepare(file, offset, n, dst, tag);
  }
  Status SubmitAndReap(unsigned wait, const Completion& complete) override {
    return inner_->SubmitAndReap(wait, [&](uint64_t tag, int64_t result) {
      const ReadCall asked = asked_.at(tag);
      if (env_->FailsRead(asked.offset, asked.n)) result = -EIO;
      if (result > 0) result = std::min<int64_t>(result, env_->BeforeTheEnd(asked.offset, asked.n));
      complete(tag, result);
    });
  }

 private:
  std::unique_ptr<ffr::ReadQueue> inner_;
  FaultyEnv* env_;
  std::unordered_map<uint64_t, ReadCall> asked_;  // by tag
};

class FaultyEnv::Mapping : public ffr::MappedFile {
 public:
  Mapping(std::unique_ptr<ffr::MappedFile> inner, const FaultyEnv* env) : inner_(std::move(inner)), env_(env) {}

  const uint8_t* data() const override { return inner_->data(); }
  uint64_t size() const override { return inner_->size(); }
  bool Shrank() const override { return env_->maps_shrink || inner_->Shrank(); }

 private:
  std::unique_ptr<ffr::MappedFile> inner_;
  const FaultyEnv* env_;
};

bool FaultyEnv::FailsRead(uint64_t offset, size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  reads_.push_back({offset, n});
  return fail_reads_after_open && offset >= kFourSampleHeader;
}

size_t FaultyEnv::BeforeTheEnd(uint64_t offset, size_t n) const {
  return offset >= reads_end_at ? 0 : static_cast<size_t>(std::min<uint64_t>(n, reads_end_at - offset));
}

std::vector<FaultyEnv::ReadCall> FaultyEnv::reads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_;
}

void FaultyEnv::ClearReads() {
  std::lock_guard<std::mutex> lock(mu_);
  reads_.clear();
}

Status FaultyEnv::NewRandomAccessFile(const std::string& path, bool direct,
                                      std::unique_ptr<ffr::RandomAccessFile>* out) {
  std::unique_ptr<ffr::RandomAccessFile> inner;
  FFR_RETURN_IF_ERROR(EnvWrapper::NewRandomAccessFile(path, direct, &inner));
  out->reset(new ReadFile(std::move(inner), this));
  return Status::OK();
}

Status FaultyEnv::NewMappedFile(const ffr::RandomAccessFile& file, uint64_t size,
                                std::unique_ptr<ffr::MappedFile>* out) {
  if (fail_map) return Status::FromErrno("mmap " + file.path(), ENOMEM);
  std::unique_ptr<ffr::MappedFile> inner;
  FFR_RETURN_IF_ERROR(EnvWrapper::NewMappedFile(file, size, &inner));
  out->reset(new Mapping(std::move(inner), this));
  return Status::OK();
}

Status FaultyEnv::NewReadQueue(const std::vector<const ffr::RandomAccessFile*>& files, unsigned depth,
                               std::unique_ptr<ffr::ReadQueue>* out) {
  std::unique_ptr<ffr::ReadQueue> inner;
  FFR_RETURN_IF_ERROR(EnvWrapper::NewReadQueue(files, depth, &inner));
  out->reset(new Queue(std::move(inner), this));
  return Status::OK();
}

Status FaultyEnv::NewWritableFile(const std::string& path, bool direct, std::unique_ptr<ffr::WritableFile>* out) {
  if (Fails(WriteOp::kCreate, path)) return Status::FromErrno("create " + path + " (injected)", ENOSPC);
  std::unique_ptr<ffr::WritableFile> inner;
  FFR_RETURN_IF_ERROR(EnvWrapper::NewWritableFile(path, direct, &inner));
  out->reset(new File(std::move(inner), path, this));
  return Status::OK();
}

Status FaultyEnv::RenameFile(const std::string& from, const std::string& to) {
  if (Fails(WriteOp::kRename, from)) return Status::FromErrno("rename " + from + " to " + to + " (injected)", EIO);
  return EnvWrapper::RenameFile(from, to);
}

Status FaultyEnv::RemoveFile(const std::string& path) {
  if (Fails(WriteOp::kRemove, path)) return Status::FromErrno("remove " + path + " (injected)", EIO);
  return EnvWrapper::RemoveFile(path);
}

Status FaultyEnv::RemoveTree(const std::string& path) {
  if (Fails(WriteOp::kRemove, path)) return Status::FromErrno("remove " + path + " (injected)", EIO);
  return EnvWrapper::RemoveTree(path);
}

Status FaultyEnv::SyncDir(const std::string& dir) {
  if (Fails(WriteOp::kSyncDir, dir)) return Status::FromErrno("fsync directory " + dir + " (injected)", EIO);
  return Status::OK();
}

Status FaultyEnv::CreateDirs(const std::string& dir) {
  if (Fails(WriteOp::kCreateDirs, dir)) return Status::FromErrno("mkdir " + dir + " (injected)", EIO);
  return EnvWrapper::CreateDirs(dir);
}

}  // namespace ffyolo::testing
