// Reader: random and batched reads of the samples of one or more FFRecord
// shards, seen as one sequence (shards in sorted file-name order).
//
// Reads go through io_uring (a whole batch per submission, registered files)
// when the kernel allows it, else through pread; both give identical bytes.
// Every backend reads through the Env (its ReadQueues, RandomAccessFiles and
// MappedFiles), so a wrapping Env sees, and may fail, every read.
// With direct_io the reader opens the shards with O_DIRECT and reads each
// sample's 4096-aligned superset into the aligned ReadBuffer, handing back a
// view at the right offset, so there is still no copy. The mmap backend maps
// (and populates) the shards at Open and hands out views of the page cache
// itself: no copy and no system call, the fastest path for a dataset that
// fits in memory; Open then reads whatever is not cached yet, so data larger
// than memory belongs to io_uring batches.
//
// Thread safety: all read methods are const and may be called from many
// threads at once. Each concurrent caller gets its own io_uring ring from a
// small pool (one ring per thread in steady state, no lock held during I/O).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffr/read_buffer.h"
#include "ffr/status.h"

namespace ffr {
namespace internal {
class ReadBackend;
struct ReadRequest;
}  // namespace internal

enum class IoBackend { kAuto, kIoUring, kPread, kMmap };

// "io_uring", "pread" or "mmap" (kAuto prints "auto").
const char* IoBackendName(IoBackend backend);

struct ReaderOptions {
  // kAuto takes io_uring when the kernel allows it, else pread. kMmap must be
  // asked for (and excludes direct_io). A shard that shrinks while mapped
  // (truncated or rewritten in place) does not crash the process (SIGBUS is
  // caught for the mapped pages): its vanished pages read as zeros and every
  // later read of that shard is a Corruption until it is reopened. Views
  // handed out earlier are not copies: they show what the file holds now, so
  // shards must not be modified while mapped (those ffyolo writes never are).
  IoBackend backend = IoBackend::kAuto;
  // O_DIRECT reads, bypassing the page cache (cold reads, benchmarks).
  bool direct_io = false;
  // Check each sample's CRC-32 after reading it.
  bool verify_checksums = true;
  // Check each shard's header CRC when opening it.
  bool verify_header = true;
  // The most reads in flight on one ring.
  unsigned queue_depth = 128;
  // nullptr means Env::Default().
  Env* env = nullptr;
};

class Reader {
 public:
  // `path` is a shard file or a directory whose "*.ffr" files are the shards.
  static Status Open(const std::string& path, const ReaderOptions& options, std::unique_ptr<Reader>* out);
  // The shards in the given order.
  static Status Open(const std::vector<std::string>& shards, const ReaderOptions& options,
                     std::unique_ptr<Reader>* out);
  ~Reader();

  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  int64_t size() const { return total_; }
  uint64_t sample_size(int64_t index) const;
  uint32_t sample_crc(int64_t index) const;
  // The backend in use (never kAuto).
  IoBackend backend() const { return backend_; }
  const std::vector<std::string>& shard_paths() const { return paths_; }
  // Shard `shard`'s header CRC (docs/format.md): what a manifest records to know the shard as its own.
  uint32_t shard_meta_crc(size_t shard) const;
  // Which shard holds sample `index`, and the sample's position in it.
  void Locate(int64_t index, size_t* shard, int64_t* local) const;
  // A name for the sample in error messages: "<shard path> sample <local> (index <i>)".
  std::string Describe(int64_t index) const;

  // Reads sample `index` into `buffer`; *out points into it (with kMmap into
  // the mapped shard, valid as long as the Reader, and `buffer` is unused).
  Status Read(int64_t index, ReadBuffer* buffer, Sample* out) const;
  // Reads `count` samples in one batch into `buffer`; out[k] is indices[k].
  // Duplicate indices are allowed.
  Status ReadBatch(const int64_t* indices, size_t count, ReadBuffer* buffer, Sample* out) const;
  // Reads into caller memory: dsts[k] must hold sample_size(indices[k]) bytes.
  // With direct_io the bytes pass through an internal aligned buffer first.
  Status ReadBatchInto(const int64_t* indices, size_t count, uint8_t* const* dsts) const;

  // Called once per sample of a stream, in completion order: `k` is its
  // position in `indices`; `sample` is valid only during the call. A non-OK
  // status stops the stream and is returned.
  using StreamConsumer = std::function<Status(size_t k, const Sample& sample)>;
  // Reads a long list of samples keeping queue_depth reads in flight the whole
  // time (a new read starts as each one lands, as fio does), so the device
  // never idles between batches; memory stays at queue_depth sample buffers.
  Status ReadStream(const int64_t* indices, size_t count, const StreamConsumer& consume) const;

 private:
  struct Shard;
  class Hooks;

  Reader(const ReaderOptions& options, std::vector<std::string> paths);
  Status OpenShards();
  Status ReadHeader(Shard& shard);
  Status CheckIndex(int64_t index) const;
  // Checks `index` and fills where its bytes are: the sample itself, or its
  // 4096-aligned superset with direct_io. Leaves r->dst to the caller.
  Status Plan(int64_t index, internal::ReadRequest* r) const;
  // Reads every request through the backend. Requests without a destination (dst == nullptr)
  // borrow one of queue_depth stream buffers while in flight and are handed
  // to `consume` when they land.
  Status Submit(internal::ReadRequest* requests, size_t count, const StreamConsumer* consume = nullptr) const;
  Status VerifyChecksum(int64_t index, const uint8_t* data, size_t size) const;
  // kMmap: the samples' places in the mapped shards, checksums checked.
  Status ViewMapped(const int64_t* indices, size_t count, Sample* out) const;

  ReaderOptions options_;
  Env* env_;
  std::vector<std::string> paths_;
  std::vector<Shard> shards_;
  std::vector<std::unique_ptr<RandomAccessFile>> files_;  // one per shard, O_DIRECT with direct_io
  std::vector<int64_t> starts_;  // global index of each shard's first sample, plus the total
  int64_t total_ = 0;
  IoBackend backend_ = IoBackend::kPread;
  std::unique_ptr<internal::ReadBackend> reads_;  // pread or io_uring; none with kMmap
};

}  // namespace ffr
