#include "ffr/shard_writer.h"

#include "ffr/endian.h"
#include "ffr/format.h"

namespace ffr {

namespace {

// Zero bytes from `end` to the next multiple of `alignment` (a power of two).
uint64_t PaddingAfter(uint64_t end, uint64_t alignment) { return (alignment - end % alignment) % alignment; }

}  // namespace

Status CheckSampleAlignment(uint64_t alignment) {
  const bool power_of_two = (alignment & (alignment - 1)) == 0;
  if (alignment == 0 || (power_of_two && alignment >= kMinSampleAlignment && alignment <= kMaxSampleAlignment))
    return Status::OK();
  return Status::InvalidArgument("sample alignment " + std::to_string(alignment) +
                                 " must be 0 (none) or a power of two from " + std::to_string(kMinSampleAlignment) +
                                 " to " + std::to_string(kMaxSampleAlignment));
}

Status ShardWriter::Create(const std::string& path, int64_t count, const ShardWriterOptions& options,
                           std::unique_ptr<ShardWriter>* out) {
  if (count < 0) return Status::InvalidArgument(path + ": negative sample count");
  const Status alignment = CheckSampleAlignment(options.sample_alignment);
  if (!alignment.ok()) return Status::InvalidArgument(path + ": " + alignment.message());
  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::unique_ptr<WritableFile> file;
  Status opened = env->NewWritableFile(path + ".tmp", options.direct_io, &file);
  if (options.direct_io && opened.IsNotSupported()) opened = env->NewWritableFile(path + ".tmp", false, &file);
  FFR_RETURN_IF_ERROR(opened);
  out->reset(new ShardWriter(path, count, options, env, std::move(file)));
  return (*out)->file_->Seek((*out)->position_);
}

Status ShardWriter::Create(const std::string& path, int64_t count, Env* env, std::unique_ptr<ShardWriter>* out) {
  ShardWriterOptions options;
  options.env = env;
  return Create(path, count, options, out);
}

ShardWriter::ShardWriter(std::string path, int64_t count, const ShardWriterOptions& options, Env* env,
                         std::unique_ptr<WritableFile> file)
    : path_(std::move(path)),
      tmp_path_(path_ + ".tmp"),
      count_(count),
      alignment_(options.sample_alignment),
      writeback_bytes_(options.writeback_bytes),
      zeros_(alignment_, '\0'),
      env_(env),
      file_(std::move(file)),
      position_(ShardHeader::EncodedSize(count)) {
  crcs_.reserve(count);
  offsets_.reserve(count);
  // The gap between the header and an aligned first sample stays a hole, which reads as zeros.
  if (alignment_ > 0 && count_ > 0) position_ += PaddingAfter(position_, alignment_);
  written_back_ = position_;
}

ShardWriter::~ShardWriter() {
  if (!finished_) {
    file_.reset();
    env_->RemoveFile(tmp_path_);
  }
}

Status ShardWriter::PadPrevious() {
  const uint64_t padding = alignment_ > 0 && !crcs_.empty() ? PaddingAfter(position_, alignment_) : 0;
  if (padding == 0) return Status::OK();
  FFR_RETURN_IF_ERROR(file_->Append(zeros_.data(), padding));
  crcs_.back() = Crc32Extend(crcs_.back(), zeros_.data(), padding);
  position_ += padding;
  return Status::OK();
}

Status ShardWriter::Append(const void* data, size_t size) {
  if (finished_) return Status::InvalidArgument(path_ + ": append after Finish");
  if (appended() + skipped_ >= count_)
    return Status::InvalidArgument(path_ + ": more than the " + std::to_string(count_) + " samples announced");
  FFR_RETURN_IF_ERROR(PadPrevious());
  FFR_RETURN_IF_ERROR(file_->Append(data, size));
  crcs_.push_back(Crc32(data, size));
  offsets_.push_back(position_);
  position_ += size;
  if (writeback_bytes_ > 0 && position_ - written_back_ >= writeback_bytes_) {
    FFR_RETURN_IF_ERROR(file_->StartWriteback(written_back_, position_ - written_back_));
    written_back_ = position_;
  }
  return Status::OK();
}

Status ShardWriter::Skip() {
  if (finished_) return Status::InvalidArgument(path_ + ": skip after Finish");
  if (appended() + skipped_ >= count_)
    return Status::InvalidArgument(path_ + ": more than the " + std::to_string(count_) + " samples announced");
  ++skipped_;
  return Status::OK();
}

Status ShardWriter::Finish() {
  if (finished_) return Status::InvalidArgument(path_ + ": Finish called twice");
  if (appended() + skipped_ != count_)
    return Status::InvalidArgument(path_ + ": " + std::to_string(appended()) + " samples appended" +
                                   (skipped_ > 0 ? " and " + std::to_string(skipped_) + " skipped" : "") + ", " +
                                   std::to_string(count_) + " announced");
  const std::string header = EncodeShardHeader(crcs_, offsets_);
  FFR_RETURN_IF_ERROR(file_->WriteAt(0, header.data(), header.size()));
  if (crcs_.empty()) position_ = header.size();  // every sample skipped: the header is the file
  FFR_RETURN_IF_ERROR(file_->Sync());
  FFR_RETURN_IF_ERROR(file_->Close());
  FFR_RETURN_IF_ERROR(env_->RenameFile(tmp_path_, path_));
  meta_crc_ = DecodeFixed32(reinterpret_cast<const uint8_t*>(header.data()));
  finished_ = true;
  const size_t slash = path_.find_last_of('/');
  return env_->SyncDir(slash == std::string::npos ? "." : path_.substr(0, slash == 0 ? 1 : slash));
}

}  // namespace ffr
