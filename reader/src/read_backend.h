// The reader's read backends: how a list of reads reaches the shards. PreadBackend reads them one
// after another through RandomAccessFile::Read; UringBackend keeps up to a queue's depth in flight
// through the Env's ReadQueues (a small pool, one per concurrent caller). The mmap backend reads
// nothing: the reader views the Env's MappedFiles. What a read is for (buffers, checksums, the
// consumer of a stream) stays with the reader, behind ReadHooks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ffr/env.h"

namespace ffr::internal {

// One read of `length` bytes at `offset` of shard `shard` into `dst`; complete once `required`
// bytes arrived (an O_DIRECT read of the aligned tail may end early at the end of the file).
struct ReadRequest {
  size_t shard;
  uint64_t offset;
  uint64_t length;
  uint64_t required;
  uint64_t size;        // the sample: the last `size` of the `required` bytes
  uint8_t* dst = nullptr;
  int64_t index;        // the sample's index in the reader
  uint64_t done = 0;
  size_t slot = 0;      // the stream buffer a streamed request borrows
};

// What the reader does around each read.
class ReadHooks {
 public:
  // Just before request k is first issued (a streamed request takes its buffer here).
  virtual void Start(size_t k) = 0;
  // Request k's bytes are in: checked and handed on; an error stops the reads.
  virtual Status Land(size_t k) = 0;
  // Whether Land does work (a checksum, a consumer) worth overlapping with the reads still in
  // flight: the io_uring backend then takes reads as they land instead of waiting for all.
  virtual bool LandDoesWork() const = 0;
  // Request k failed (`cause` from the Env) or ended short of its bytes (`cause` OK): the error.
  virtual Status Failed(size_t k, const Status& cause) = 0;

 protected:
  ~ReadHooks() = default;
};

class ReadBackend {
 public:
  virtual ~ReadBackend() = default;
  // Reads every request (Start, then Land or Failed); returns the first error, after every read
  // in flight finished. Safe to call from many threads at once.
  virtual Status Run(ReadRequest* requests, size_t count, ReadHooks& hooks) const = 0;
};

// One read at a time, `files[r.shard]->Read`.
std::unique_ptr<ReadBackend> NewPreadBackend(const std::vector<std::unique_ptr<RandomAccessFile>>& files);

// Up to `depth` reads in flight per caller on the env's ReadQueues over `files`; NotSupported
// where the env has none (the kernel refuses io_uring).
Status NewUringBackend(Env* env, const std::vector<std::unique_ptr<RandomAccessFile>>& files, unsigned depth,
                       std::unique_ptr<ReadBackend>* out);

// The most bytes one read asks for (a larger request is read in pieces).
inline constexpr uint64_t kMaxReadChunk = uint64_t{1} << 30;

}  // namespace ffr::internal
