// ShardWriter: writes one FFRecord shard of a known number of samples.
//
// Crash safety: samples go to "<path>.tmp"; Finish() writes the header,
// fsyncs, renames to <path> and fsyncs the directory. A writer destroyed
// before Finish() removes its temporary file, and a killed process leaves only
// a ".tmp" file, which readers never open (they take "*.ffr" only).
//
// Sample alignment (opt-in): FFRecord packs samples back to back, so an
// O_DIRECT read of a sample usually fetches a 4 KiB block more than the
// sample. With ShardWriterOptions::sample_alignment = A, offset[0] is the
// header's end rounded up to A and every sample but the last is followed by
// zeros up to the next multiple of A. FFRecord's rule (length = offset[i+1] -
// offset[i]) makes those zeros part of sample i, so its CRC covers them and
// readers read them; FFRecord's own readers still read such a file.
//
// Skipped samples: a writer that learns only while writing that some of the
// announced samples will not come (a packer skipping bad images) calls Skip()
// for each. Their header entries are not written: the shard holds the samples
// appended, and the room their entries would have taken stays a gap of zeros
// before offset[0], which FFRecord's readers never look at.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffr/status.h"

namespace ffr {

inline constexpr uint64_t kMinSampleAlignment = 512;
inline constexpr uint64_t kMaxSampleAlignment = uint64_t{1} << 20;

// OK for 0 (no alignment) and powers of two in [kMinSampleAlignment, kMaxSampleAlignment].
Status CheckSampleAlignment(uint64_t alignment);

struct ShardWriterOptions {
  // 0: FFRecord's exact layout (samples back to back). Else each sample starts
  // at a multiple of this many bytes (see above); 4096 makes O_DIRECT read
  // only a sample's own blocks.
  uint64_t sample_alignment = 0;
  // Writing back to the disk starts every this many bytes (WritableFile::
  // StartWriteback), so that the disk writes while samples are appended and
  // Finish's fsync waits for the last few only; 0 leaves it all to Finish.
  uint64_t writeback_bytes = uint64_t{8} << 20;
  // Writes past the page cache (Env::NewWritableFile's `direct`), where the
  // file system allows it: a packer's gigabytes, read back by other processes
  // later if at all, are not worth caching or copying into the cache.
  bool direct_io = false;
  // nullptr means Env::Default().
  Env* env = nullptr;
};

class ShardWriter {
 public:
  // Prepares to write `count` samples to `path` (each appended or skipped).
  static Status Create(const std::string& path, int64_t count, const ShardWriterOptions& options,
                       std::unique_ptr<ShardWriter>* out);
  // The same with default options on `env`.
  static Status Create(const std::string& path, int64_t count, Env* env, std::unique_ptr<ShardWriter>* out);
  ~ShardWriter();

  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  Status Append(const void* data, size_t size);
  // One of the announced samples will not be appended (see above).
  Status Skip();
  // Requires every announced sample appended or skipped.
  Status Finish();

  int64_t count() const { return count_; }
  int64_t appended() const { return static_cast<int64_t>(crcs_.size()); }
  int64_t skipped() const { return skipped_; }
  // The file's size so far (the whole shard after Finish).
  uint64_t bytes() const { return position_; }
  // The header's CRC (docs/format.md) once Finish succeeded: it covers every sample's CRC and
  // offset, so it tells this shard from another with as many samples (a manifest records it).
  uint32_t meta_crc() const { return meta_crc_; }
  const std::string& path() const { return path_; }

 private:
  ShardWriter(std::string path, int64_t count, const ShardWriterOptions& options, Env* env,
              std::unique_ptr<WritableFile> file);
  // The zeros that align the next sample, written once it comes: the last
  // sample ends the file, as FFRecord takes its length from the file size.
  Status PadPrevious();

  std::string path_;
  std::string tmp_path_;
  int64_t count_;
  uint64_t alignment_;
  uint64_t writeback_bytes_;
  std::string zeros_;  // alignment_ zero bytes, the padding's source
  Env* env_;
  std::unique_ptr<WritableFile> file_;
  std::vector<uint32_t> crcs_;
  std::vector<uint64_t> offsets_;
  uint64_t position_;
  uint64_t written_back_;  // the file before this offset is being written back
  int64_t skipped_ = 0;
  uint32_t meta_crc_ = 0;
  bool finished_ = false;
};

}  // namespace ffr
