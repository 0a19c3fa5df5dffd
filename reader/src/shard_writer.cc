#include "ffr/shard_writer.h"

#include "ffr/format.h"

namespace ffr {

Status ShardWriter::Create(const std::string& path, int64_t count, Env* env, std::unique_ptr<ShardWriter>* out) {
  if (count < 0) return Status::InvalidArgument(path + ": negative sample count");
  if (env == nullptr) env = Env::Default();
  std::unique_ptr<WritableFile> file;
  FFR_RETURN_IF_ERROR(env->NewWritableFile(path + ".tmp", &file));
  out->reset(new ShardWriter(path, count, env, std::move(file)));
  return Status::OK();
}

ShardWriter::ShardWriter(std::string path, int64_t count, Env* env, std::unique_ptr<WritableFile> file)
    : path_(std::move(path)),
      tmp_path_(path_ + ".tmp"),
      count_(count),
      env_(env),
      file_(std::move(file)),
      position_(ShardHeader::EncodedSize(count)) {
  crcs_.reserve(count);
  offsets_.reserve(count);
  file_->Seek(position_);
}

ShardWriter::~ShardWriter() {
  if (!finished_) {
    file_.reset();
    env_->RemoveFile(tmp_path_);
  }
}

Status ShardWriter::Append(const void* data, size_t size) {
  if (finished_) return Status::InvalidArgument(path_ + ": append after Finish");
  if (appended() >= count_)
    return Status::InvalidArgument(path_ + ": more than the " + std::to_string(count_) + " samples announced");
  FFR_RETURN_IF_ERROR(file_->Append(data, size));
  crcs_.push_back(Crc32(data, size));
  offsets_.push_back(position_);
  position_ += size;
  return Status::OK();
}

Status ShardWriter::Finish() {
  if (finished_) return Status::InvalidArgument(path_ + ": Finish called twice");
  if (appended() != count_)
    return Status::InvalidArgument(path_ + ": " + std::to_string(appended()) + " samples appended, " +
                                   std::to_string(count_) + " announced");
  const std::string header = EncodeShardHeader(crcs_, offsets_);
  FFR_RETURN_IF_ERROR(file_->WriteAt(0, header.data(), header.size()));
  FFR_RETURN_IF_ERROR(file_->Sync());
  FFR_RETURN_IF_ERROR(file_->Close());
  FFR_RETURN_IF_ERROR(env_->RenameFile(tmp_path_, path_));
  finished_ = true;
  const size_t slash = path_.find_last_of('/');
  return env_->SyncDir(slash == std::string::npos ? "." : path_.substr(0, slash == 0 ? 1 : slash));
}

}  // namespace ffr
