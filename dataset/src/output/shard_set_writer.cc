#include "ffyolo/output/shard_set_writer.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "ffyolo/manifest.h"

namespace ffyolo {

std::string ShardFileName(size_t k) {
  char name[32];
  std::snprintf(name, sizeof(name), "PART_%05zu.ffr", k);
  return name;
}

bool IsShardFile(const std::string& name) {
  return name.rfind("PART_", 0) == 0 && (name.size() > 4 && (name.compare(name.size() - 4, 4, ".ffr") == 0 ||
                                                              name.compare(name.size() - 4, 4, ".tmp") == 0));
}

std::vector<size_t> PlanShards(const std::vector<uint64_t>& sizes, uint64_t shard_bytes, size_t shards) {
  std::vector<size_t> starts{0};
  const size_t n = sizes.size();
  if (shards > 0) {
    const size_t count = std::min(shards, n);
    for (size_t k = 1; k < count; ++k) starts.push_back(k * n / count);
  } else {
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; ++i) {
      if (bytes >= shard_bytes && i > starts.back()) {
        starts.push_back(i);
        bytes = 0;
      }
      bytes += sizes[i];
    }
  }
  starts.push_back(n);
  return starts;
}

namespace {

// The temporary name WriteFileAtomically writes `name` under.
std::string Temporary(const std::string& name) { return name + ".tmp"; }

}  // namespace

ShardSetWriter::ShardSetWriter(ffr::Env* env, std::string dir, std::string state_file, std::string commit_file)
    : env_(env), dir_(std::move(dir)), state_file_(std::move(state_file)), commit_file_(std::move(commit_file)) {}

bool ShardSetWriter::IsOwnFile(const std::string& name) const {
  return name == kDatasetLockFile || name == state_file_ || name == Temporary(state_file_) || name == commit_file_ ||
         name == Temporary(commit_file_);
}

Status ShardSetWriter::Lock(const std::function<void()>& waiting) {
  FFR_RETURN_IF_ERROR(env_->CreateDirs(dir_));
  const std::string path = dir_ + "/" + kDatasetLockFile;
  FFR_RETURN_IF_ERROR(env_->TryLockFile(path, &lock_));
  if (lock_ != nullptr) return Status::OK();
  if (waiting) waiting();
  return env_->LockFile(path, &lock_);
}

Status ShardSetWriter::Entries(std::vector<std::string>* names) {
  FFR_RETURN_IF_ERROR(env_->GetChildren(dir_, names));
  names->erase(std::remove(names->begin(), names->end(), kDatasetLockFile), names->end());
  if (names->size() == 1 && (*names)[0] == Temporary(state_file_)) {
    FFR_RETURN_IF_ERROR(env_->RemoveFile(dir_ + "/" + Temporary(state_file_)));
    names->clear();
  }
  return Status::OK();
}

ShardSetWriter::Found ShardSetWriter::ReadState(const std::string& state) const {
  std::string found;
  if (!ffr::ReadFileToString(env_, dir_ + "/" + state_file_, &found).ok()) return Found::kNoState;
  return found == state ? Found::kSameWork : Found::kOtherWork;
}

Status ShardSetWriter::Begin(const std::string& state) {
  return ffr::WriteFileAtomically(env_, dir_ + "/" + state_file_, state);
}

std::string ShardSetWriter::ShardPath(const std::string& part, size_t k) const {
  return dir_ + "/" + (part.empty() ? "" : part + "/") + ShardFileName(k);
}

bool ShardSetWriter::HasShard(const std::string& part, size_t k) const { return env_->FileExists(ShardPath(part, k)); }

uint64_t ShardSetWriter::ShardBytes(const std::string& part, size_t count) const {
  uint64_t bytes = 0;
  for (size_t k = 0; k < count; ++k) {
    uint64_t size = 0;
    if (env_->GetFileSize(ShardPath(part, k), &size).ok()) bytes += size;
  }
  return bytes;
}

Status ShardSetWriter::WriteShard(const std::string& part, size_t k,
                                  const std::function<Status(const std::string& path, bool* kept)>& keep,
                                  const std::function<Status(const std::string& path)>& make) {
  const std::string path = ShardPath(part, k);
  if (env_->FileExists(path)) {
    bool kept = false;
    FFR_RETURN_IF_ERROR(keep(path, &kept));
    if (kept) return Status::OK();
    FFR_RETURN_IF_ERROR(env_->RemoveFile(path));
  }
  return make(path);
}

Status ShardSetWriter::Commit(const std::string& manifest) {
  FFR_RETURN_IF_ERROR(ffr::WriteFileAtomically(env_, commit_path(), manifest));
  return env_->RemoveFile(dir_ + "/" + state_file_);
}

}  // namespace ffyolo
