// ShardWriter: writes one FFRecord shard of a known number of samples.
//
// Crash safety: samples go to "<path>.tmp"; Finish() writes the header,
// fsyncs, renames to <path> and fsyncs the directory. A writer destroyed
// before Finish() removes its temporary file, and a killed process leaves only
// a ".tmp" file, which readers never open (they take "*.ffr" only).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffr/status.h"

namespace ffr {

class ShardWriter {
 public:
  // Prepares to write exactly `count` samples to `path`.
  static Status Create(const std::string& path, int64_t count, Env* env, std::unique_ptr<ShardWriter>* out);
  ~ShardWriter();

  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  Status Append(const void* data, size_t size);
  // Requires exactly `count` appended samples.
  Status Finish();

  int64_t count() const { return count_; }
  int64_t appended() const { return static_cast<int64_t>(crcs_.size()); }
  uint64_t bytes() const { return position_; }
  const std::string& path() const { return path_; }

 private:
  ShardWriter(std::string path, int64_t count, Env* env, std::unique_ptr<WritableFile> file);

  std::string path_;
  std::string tmp_path_;
  int64_t count_;
  Env* env_;
  std::unique_ptr<WritableFile> file_;
  std::vector<uint32_t> crcs_;
  std::vector<uint64_t> offsets_;
  uint64_t position_;
  bool finished_ = false;
};

}  // namespace ffr
