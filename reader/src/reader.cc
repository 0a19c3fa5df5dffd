#include "ffr/reader.h"

#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "ffr/format.h"
#include "mapping_guard.h"

namespace ffr {
namespace {

constexpr uint64_t kAlign = ReadBuffer::kAlignment;
constexpr uint64_t kMaxChunk = uint64_t{1} << 30;  // one read request moves at most 1 GiB

uint64_t AlignDown(uint64_t v) { return v & ~(kAlign - 1); }
uint64_t AlignUp(uint64_t v) { return (v + kAlign - 1) & ~(kAlign - 1); }

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const char* IoBackendName(IoBackend backend) {
  switch (backend) {
    case IoBackend::kAuto: return "auto";
    case IoBackend::kIoUring: return "io_uring";
    case IoBackend::kPread: return "pread";
    case IoBackend::kMmap: return "mmap";
  }
  return "unknown";
}

struct Reader::Shard {
  std::string path;
  int fd = -1;  // O_DIRECT when options.direct_io
  uint64_t file_size = 0;
  const uint8_t* map = nullptr;  // the whole file, with IoBackend::kMmap
  int guard = -1;                // the map's SIGBUS guard (mapping_guard.h)
  ShardHeader header;
};

// One read of `length` bytes at `offset` of a shard into `dst`; complete once
// `required` bytes arrived (an O_DIRECT read of the aligned tail may end early
// at the end of the file). The sample is the last `size` of the `required` bytes.
struct Reader::Request {
  size_t shard;
  uint64_t offset;
  uint64_t length;
  uint64_t required;
  uint64_t size;
  uint8_t* dst = nullptr;
  int64_t index;  // for error messages and the stored CRC
  uint64_t done = 0;
  size_t slot = 0;  // the stream buffer a streamed request borrows
};

// An io_uring instance with the shards' descriptors registered.
class Reader::Ring {
 public:
  static Status Create(unsigned entries, const std::vector<int>& fds, std::unique_ptr<Ring>* out) {
    std::unique_ptr<Ring> r(new Ring());
    // COOP_TASKRUN (Linux 5.19) posts completions when the reader next enters
    // the kernel instead of interrupting it, e.g. while it checks a CRC.
    int rc = io_uring_queue_init(entries, &r->ring_, IORING_SETUP_COOP_TASKRUN);
    if (rc == -EINVAL) rc = io_uring_queue_init(entries, &r->ring_, 0);
    if (rc < 0) return Status::NotSupported(std::string("io_uring unavailable: ") + std::strerror(-rc));
    r->initialized_ = true;
    r->entries_ = entries;
    if (!fds.empty() && io_uring_register_files(&r->ring_, fds.data(), static_cast<unsigned>(fds.size())) == 0)
      r->fixed_files_ = true;
    *out = std::move(r);
    return Status::OK();
  }
  ~Ring() {
    if (initialized_) io_uring_queue_exit(&ring_);
  }

  io_uring* ring() { return &ring_; }
  unsigned entries() const { return entries_; }
  bool fixed_files() const { return fixed_files_; }

 private:
  Ring() = default;
  io_uring ring_{};
  bool initialized_ = false;
  bool fixed_files_ = false;
  unsigned entries_ = 0;
};

struct Reader::RingPool {
  std::mutex mu;
  std::vector<std::unique_ptr<Ring>> free;
  std::vector<int> fds;
};

Reader::Reader(const ReaderOptions& options, std::vector<std::string> paths)
    : options_(options),
      env_(options.env ? options.env : Env::Default()),
      paths_(std::move(paths)),
      rings_(new RingPool()) {
  if (options_.queue_depth == 0) options_.queue_depth = 1;
}

Reader::~Reader() {
  rings_->free.clear();
  for (Shard& s : shards_) {
    if (s.guard >= 0) internal::UnguardMapping(s.guard);
    if (s.map) env_->UnmapFile(s.map, s.file_size);
    if (s.fd >= 0) env_->CloseFile(s.fd);
  }
}

Status Reader::Open(const std::string& path, const ReaderOptions& options, std::unique_ptr<Reader>* out) {
  Env* env = options.env ? options.env : Env::Default();
  std::vector<std::string> shards;
  if (env->IsDirectory(path)) {
    std::vector<std::string> names;
    FFR_RETURN_IF_ERROR(env->GetChildren(path, &names));
    for (const std::string& name : names)
      if (EndsWith(name, ".ffr") && !env->IsDirectory(path + "/" + name)) shards.push_back(path + "/" + name);
    if (shards.empty()) return Status::NotFound(path + ": directory holds no *.ffr shard");
  } else {
    if (!env->FileExists(path)) return Status::NotFound(path + ": no such file or directory");
    shards.push_back(path);
  }
  return Open(shards, options, out);
}

Status Reader::Open(const std::vector<std::string>& shards, const ReaderOptions& options,
                    std::unique_ptr<Reader>* out) {
  std::unique_ptr<Reader> r(new Reader(options, shards));
  FFR_RETURN_IF_ERROR(r->OpenShards());
  *out = std::move(r);
  return Status::OK();
}

Status Reader::OpenShards() {
  if (options_.backend == IoBackend::kMmap && options_.direct_io)
    return Status::InvalidArgument("the mmap backend reads through the page cache; it cannot be combined with "
                                   "direct I/O");
  shards_.resize(paths_.size());
  starts_.assign(1, 0);
  std::vector<uint8_t> prefix(kShardPrefixSize);
  for (size_t i = 0; i < paths_.size(); ++i) {
    Shard& s = shards_[i];
    s.path = paths_[i];
    FFR_RETURN_IF_ERROR(env_->GetFileSize(s.path, &s.file_size));
    // The header is read through a buffered descriptor: it is small and unaligned.
    int fd = -1;
    FFR_RETURN_IF_ERROR(env_->OpenForRead(s.path, false, &fd));
    size_t got = 0;
    Status st = env_->Pread(fd, prefix.data(), prefix.size(), 0, &got, s.path);
    std::vector<uint8_t> header;
    if (st.ok()) {
      uint64_t n = got == prefix.size() ? (uint64_t{prefix[4]} | uint64_t{prefix[5]} << 8 | uint64_t{prefix[6]} << 16 |
                                           uint64_t{prefix[7]} << 24 | uint64_t{prefix[8]} << 32 |
                                           uint64_t{prefix[9]} << 40 | uint64_t{prefix[10]} << 48 |
                                           uint64_t{prefix[11]} << 56)
                                        : 0;
      // Bound the header by the file size before trusting N.
      const uint64_t max_n = s.file_size >= kShardPrefixSize ? (s.file_size - kShardPrefixSize) / kShardEntrySize : 0;
      const uint64_t header_size = ShardHeader::EncodedSize(static_cast<int64_t>(std::min(n, max_n)));
      header.resize(std::max<uint64_t>(header_size, got));
      std::memcpy(header.data(), prefix.data(), got);
      if (header_size > got) {
        size_t rest = 0;
        st = env_->Pread(fd, header.data() + got, header_size - got, got, &rest, s.path);
        if (st.ok() && rest != header_size - got) st = Status::Corruption(s.path + ": truncated header");
      }
    }
    if (st.ok())
      st = ParseShardHeader(s.path, header.data(), header.size(), s.file_size, options_.verify_header, &s.header);
    env_->CloseFile(fd);
    FFR_RETURN_IF_ERROR(st);
    FFR_RETURN_IF_ERROR(env_->OpenForRead(s.path, options_.direct_io, &s.fd));
    if (options_.backend == IoBackend::kMmap) {
      FFR_RETURN_IF_ERROR(env_->MapFile(s.fd, s.file_size, s.path, &s.map));
      s.guard = internal::GuardMapping(s.map, s.file_size);
      if (s.guard < 0) return Status::NotSupported(s.path + ": too many shards mapped at once for the mmap backend");
    }
    starts_.push_back(starts_.back() + s.header.count());
  }
  total_ = starts_.back();

  for (const Shard& s : shards_) rings_->fds.push_back(s.fd);
  if (options_.backend == IoBackend::kPread || options_.backend == IoBackend::kMmap) {
    backend_ = options_.backend;
    return Status::OK();
  }
  std::unique_ptr<Ring> ring;
  Status st = Ring::Create(options_.queue_depth, rings_->fds, &ring);
  if (!st.ok()) {
    if (options_.backend == IoBackend::kIoUring) return st;
    backend_ = IoBackend::kPread;
    return Status::OK();
  }
  backend_ = IoBackend::kIoUring;
  rings_->free.push_back(std::move(ring));
  return Status::OK();
}

void Reader::Locate(int64_t index, size_t* shard, int64_t* local) const {
  const size_t s = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), index) - starts_.begin()) - 1;
  *shard = s;
  *local = index - starts_[s];
}

uint64_t Reader::sample_size(int64_t index) const {
  size_t s;
  int64_t local;
  Locate(index, &s, &local);
  return shards_[s].header.sample_size(local);
}

uint32_t Reader::shard_meta_crc(size_t shard) const { return shards_[shard].header.meta_crc; }

uint32_t Reader::sample_crc(int64_t index) const {
  size_t s;
  int64_t local;
  Locate(index, &s, &local);
  return shards_[s].header.crcs[local];
}

std::string Reader::Describe(int64_t index) const {
  if (index < 0 || index >= total_) return "sample index " + std::to_string(index);
  size_t s;
  int64_t local;
  Locate(index, &s, &local);
  return shards_[s].path + " sample " + std::to_string(local) + " (index " + std::to_string(index) + ")";
}

Status Reader::CheckIndex(int64_t index) const {
  if (index < 0 || index >= total_)
    return Status::InvalidArgument("sample index " + std::to_string(index) + " out of range [0, " +
                                   std::to_string(total_) + ")");
  return Status::OK();
}

Status Reader::VerifyChecksum(int64_t index, const uint8_t* data, size_t size) const {
  if (!options_.verify_checksums) return Status::OK();
  const uint32_t expected = sample_crc(index);
  const uint32_t actual = Crc32(data, size);
  if (actual != expected)
    return Status::Corruption(Describe(index) + ": checksum mismatch (stored " + std::to_string(expected) +
                              ", computed " + std::to_string(actual) + ")");
  return Status::OK();
}

std::unique_ptr<Reader::Ring> Reader::AcquireRing() const {
  {
    std::lock_guard<std::mutex> lock(rings_->mu);
    if (!rings_->free.empty()) {
      std::unique_ptr<Ring> r = std::move(rings_->free.back());
      rings_->free.pop_back();
      return r;
    }
  }
  std::unique_ptr<Ring> r;
  if (!Ring::Create(options_.queue_depth, rings_->fds, &r).ok()) return nullptr;
  return r;
}

void Reader::ReleaseRing(std::unique_ptr<Ring> ring) const {
  std::lock_guard<std::mutex> lock(rings_->mu);
  rings_->free.push_back(std::move(ring));
}

Status Reader::Submit(Request* requests, size_t count, const StreamConsumer* consume) const {
  auto verify = [&](const Request& r) { return VerifyChecksum(r.index, r.dst + (r.required - r.size), r.size); };
  // Stream buffers: at most one per read in flight, so a slot is always free when one can start.
  std::vector<ReadBuffer> slots(consume ? std::min<size_t>(options_.queue_depth, count) : 0);
  std::vector<size_t> free_slots;
  for (size_t s = 0; s < slots.size(); ++s) free_slots.push_back(s);
  // Only streamed requests borrow: a caller's destination may be nullptr too, for an empty sample.
  auto borrow = [&](Request& r) {
    if (consume == nullptr || r.dst != nullptr) return;
    r.slot = free_slots.back();
    free_slots.pop_back();
    r.dst = slots[r.slot].Reserve(std::max<uint64_t>(r.length, 1));
  };
  // A streamed request is checked, handed over and gives its buffer back.
  auto deliver = [&](size_t k) {
    Request& r = requests[k];
    Status s = verify(r);
    if (s.ok() && consume) s = (*consume)(k, Sample{r.dst + (r.required - r.size), r.size});
    if (consume) free_slots.push_back(r.slot);
    return s;
  };
  auto short_read = [&](const Request& r) {
    return Status::Corruption(Describe(r.index) + ": short read, the shard ends at byte " +
                              std::to_string(r.offset + r.done) + " (truncated file?)");
  };
  std::unique_ptr<Ring> ring = backend_ == IoBackend::kIoUring ? AcquireRing() : nullptr;
  if (ring == nullptr) {
    for (size_t k = 0; k < count; ++k) {
      Request& r = requests[k];
      borrow(r);
      while (r.done < r.required) {
        const uint64_t len = std::min(r.length - r.done, kMaxChunk);
        size_t got = 0;
        const Status read = env_->Pread(shards_[r.shard].fd, r.dst + r.done, len, r.offset + r.done, &got,
                                        shards_[r.shard].path);
        if (!read.ok()) return Status::IOError(Describe(r.index) + ": " + read.message());
        r.done += got;
        if (got < len) break;
      }
      if (r.done < r.required) return short_read(r);
      FFR_RETURN_IF_ERROR(deliver(k));
    }
    return Status::OK();
  }

  io_uring* uring = ring->ring();
  Status status;
  size_t next = 0;       // next request to submit
  size_t in_flight = 0;  // submitted, not yet completed
  size_t completed = 0;
  std::vector<size_t> resubmit;  // requests to continue after a short read
  auto queue = [&](size_t k) {
    Request& r = requests[k];
    borrow(r);
    io_uring_sqe* sqe = io_uring_get_sqe(uring);
    const uint64_t len = std::min(r.length - r.done, kMaxChunk);
    if (ring->fixed_files()) {
      io_uring_prep_read(sqe, static_cast<int>(r.shard), r.dst + r.done, static_cast<unsigned>(len), r.offset + r.done);
      sqe->flags |= IOSQE_FIXED_FILE;
    } else {
      io_uring_prep_read(sqe, shards_[r.shard].fd, r.dst + r.done, static_cast<unsigned>(len), r.offset + r.done);
    }
    io_uring_sqe_set_data64(sqe, k);
    ++in_flight;
  };
  while (completed < count) {
    while (in_flight < ring->entries() && (!resubmit.empty() || next < count)) {
      if (!resubmit.empty()) {
        queue(resubmit.back());
        resubmit.pop_back();
      } else {
        queue(next++);
      }
    }
    // Wait for one completion while more requests wait for a slot or while
    // checksums are on (a sample is checked as soon as it lands, overlapping
    // the CRC with the reads still in flight); otherwise wait for all at once,
    // one system call per batch.
    const bool more_to_queue = next < count || !resubmit.empty();
    const unsigned wait_nr =
        more_to_queue || options_.verify_checksums || consume ? 1 : static_cast<unsigned>(in_flight);
    int rc = io_uring_submit_and_wait(uring, wait_nr);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      status = Status::FromErrno("io_uring_submit", -rc);
      break;
    }
    io_uring_cqe* cqe;
    unsigned head;
    unsigned seen = 0;
    io_uring_for_each_cqe(uring, head, cqe) {
      ++seen;
      --in_flight;
      Request& r = requests[io_uring_cqe_get_data64(cqe)];
      const int res = cqe->res;
      if (res == -EAGAIN || res == -EINTR) {
        resubmit.push_back(io_uring_cqe_get_data64(cqe));
        continue;
      }
      if (res < 0) {
        if (status.ok())
          status = Status::FromErrno("read " + Describe(r.index), -res);
        ++completed;
        continue;
      }
      r.done += static_cast<uint64_t>(res);
      if (r.done >= r.required) {
        ++completed;
        if (status.ok()) status = deliver(io_uring_cqe_get_data64(cqe));
      } else if (res == 0) {
        if (status.ok()) status = short_read(r);
        ++completed;
      } else {
        resubmit.push_back(io_uring_cqe_get_data64(cqe));  // continue after a short read
      }
    }
    io_uring_cq_advance(uring, seen);
    if (!status.ok() && in_flight == 0) break;
    if (!status.ok()) {
      // Drain what is in flight before handing the ring back.
      next = count;
      resubmit.clear();
    }
  }
  // Drain after an error so that the ring is clean for its next user.
  while (in_flight > 0) {
    io_uring_cqe* cqe;
    if (io_uring_wait_cqe(uring, &cqe) < 0) break;
    io_uring_cqe_seen(uring, cqe);
    --in_flight;
  }
  ReleaseRing(std::move(ring));
  return status;
}

Status Reader::Plan(int64_t index, Request* r) const {
  FFR_RETURN_IF_ERROR(CheckIndex(index));
  int64_t local;
  Locate(index, &r->shard, &local);
  const ShardHeader& h = shards_[r->shard].header;
  const uint64_t begin = h.offsets[local];
  r->index = index;
  r->size = h.sample_size(local);
  if (options_.direct_io) {
    r->offset = AlignDown(begin);
    r->length = AlignUp(begin + r->size) - r->offset;
    r->required = begin + r->size - r->offset;
  } else {
    r->offset = begin;
    r->length = r->required = r->size;
  }
  return Status::OK();
}

Status Reader::ViewMapped(const int64_t* indices, size_t count, Sample* out) const {
  for (size_t k = 0; k < count; ++k) {
    Request r;
    FFR_RETURN_IF_ERROR(Plan(indices[k], &r));
    const Shard& shard = shards_[r.shard];
    out[k].data = shard.map + r.offset;
    out[k].size = r.size;
    const Status checked = VerifyChecksum(indices[k], out[k].data, out[k].size);
    // Checked after the CRC, which touches every byte: a page gone since Open
    // reads as zeros, which must not pass as the sample (nor as a mismatch).
    if (internal::MappingShrank(shard.guard))
      return Status::Corruption(Describe(indices[k]) +
                                ": the shard shrank while it was mapped (truncated or rewritten in place); "
                                "reopen it to read it again");
    FFR_RETURN_IF_ERROR(checked);
  }
  return Status::OK();
}

Status Reader::Read(int64_t index, ReadBuffer* buffer, Sample* out) const {
  return ReadBatch(&index, 1, buffer, out);
}

Status Reader::ReadBatch(const int64_t* indices, size_t count, ReadBuffer* buffer, Sample* out) const {
  if (backend_ == IoBackend::kMmap) return ViewMapped(indices, count, out);
  std::vector<Request> requests(count);
  uint64_t total = 0;
  for (size_t k = 0; k < count; ++k) {
    Request& r = requests[k];
    FFR_RETURN_IF_ERROR(Plan(indices[k], &r));
    total = AlignUp(total);
    r.dst = reinterpret_cast<uint8_t*>(total);  // a slot offset until the buffer is reserved
    total += r.length;
  }
  uint8_t* base = buffer->Reserve(std::max<uint64_t>(total, 1));
  for (Request& r : requests) r.dst = base + reinterpret_cast<uint64_t>(r.dst);
  FFR_RETURN_IF_ERROR(Submit(requests.data(), count));
  for (size_t k = 0; k < count; ++k) {
    out[k].data = requests[k].dst + (requests[k].required - requests[k].size);  // O_DIRECT: skip the aligned head
    out[k].size = requests[k].size;
  }
  return Status::OK();
}

Status Reader::ReadStream(const int64_t* indices, size_t count, const StreamConsumer& consume) const {
  if (backend_ == IoBackend::kMmap) {
    for (size_t k = 0; k < count; ++k) {
      Sample sample;
      FFR_RETURN_IF_ERROR(ViewMapped(indices + k, 1, &sample));
      FFR_RETURN_IF_ERROR(consume(k, sample));
    }
    return Status::OK();
  }
  std::vector<Request> requests(count);
  for (size_t k = 0; k < count; ++k) {
    FFR_RETURN_IF_ERROR(Plan(indices[k], &requests[k]));
    requests[k].dst = nullptr;
  }
  return Submit(requests.data(), count, &consume);
}

Status Reader::ReadBatchInto(const int64_t* indices, size_t count, uint8_t* const* dsts) const {
  if (backend_ == IoBackend::kMmap) {
    for (size_t k = 0; k < count; ++k) {
      Sample sample;
      FFR_RETURN_IF_ERROR(ViewMapped(indices + k, 1, &sample));
      std::memcpy(dsts[k], sample.data, sample.size);
    }
    return Status::OK();
  }
  if (options_.direct_io) {  // through an aligned buffer, then copied
    ReadBuffer bounce;
    std::vector<Sample> samples(count);
    FFR_RETURN_IF_ERROR(ReadBatch(indices, count, &bounce, samples.data()));
    for (size_t k = 0; k < count; ++k) std::memcpy(dsts[k], samples[k].data, samples[k].size);
    return Status::OK();
  }
  std::vector<Request> requests(count);
  for (size_t k = 0; k < count; ++k) {
    FFR_RETURN_IF_ERROR(Plan(indices[k], &requests[k]));
    requests[k].dst = dsts[k];
  }
  return Submit(requests.data(), count);
}

}  // namespace ffr
