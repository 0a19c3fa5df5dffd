#include "ffr/reader.h"

#include <algorithm>
#include <cstring>

#include "ffr/endian.h"
#include "ffr/format.h"
#include "read_backend.h"

namespace ffr {
namespace {

using internal::ReadRequest;

constexpr uint64_t kAlign = ReadBuffer::kAlignment;

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
  uint64_t file_size = 0;
  std::unique_ptr<MappedFile> map;  // the whole file, with IoBackend::kMmap
  ShardHeader header;
};

// The reader's side of a backend's reads: streamed requests borrow one of queue_depth buffers while
// in flight; a landed read is checked and, in a stream, handed to the consumer.
class Reader::Hooks : public internal::ReadHooks {
 public:
  Hooks(const Reader& reader, ReadRequest* requests, size_t count, const StreamConsumer* consume)
      : reader_(reader),
        requests_(requests),
        consume_(consume),
        slots_(consume ? std::min<size_t>(reader.options_.queue_depth, count) : 0) {
    // At most one buffer per read in flight, so a slot is always free when a read can start.
    for (size_t s = 0; s < slots_.size(); ++s) free_slots_.push_back(s);
  }

  void Start(size_t k) override {
    // Only streamed requests borrow: a caller's destination may be nullptr too, for an empty sample.
    ReadRequest& r = requests_[k];
    if (consume_ == nullptr || r.dst != nullptr) return;
    r.slot = free_slots_.back();
    free_slots_.pop_back();
    r.dst = slots_[r.slot].Reserve(std::max<uint64_t>(r.length, 1));
  }

  Status Land(size_t k) override {
    const ReadRequest& r = requests_[k];
    const Sample sample{r.dst + (r.required - r.size), r.size};
    Status s = reader_.VerifyChecksum(r.index, sample.data, sample.size);
    if (consume_) {
      if (s.ok()) s = (*consume_)(k, sample);
      free_slots_.push_back(r.slot);
    }
    return s;
  }

  bool LandDoesWork() const override { return reader_.options_.verify_checksums || consume_; }

  Status Failed(size_t k, const Status& cause) override {
    const ReadRequest& r = requests_[k];
    if (!cause.ok()) return Status::IOError(reader_.Describe(r.index) + ": " + cause.message());
    return Status::Corruption(reader_.Describe(r.index) + ": short read, the shard ends at byte " +
                              std::to_string(r.offset + r.done) + " (truncated file?)");
  }

 private:
  const Reader& reader_;
  ReadRequest* requests_;
  const StreamConsumer* consume_;
  std::vector<ReadBuffer> slots_;
  std::vector<size_t> free_slots_;
};

Reader::Reader(const ReaderOptions& options, std::vector<std::string> paths)
    : options_(options), env_(options.env ? options.env : Env::Default()), paths_(std::move(paths)) {
  if (options_.queue_depth == 0) options_.queue_depth = 1;
}

Reader::~Reader() = default;

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
  for (size_t i = 0; i < paths_.size(); ++i) {
    Shard& s = shards_[i];
    s.path = paths_[i];
    FFR_RETURN_IF_ERROR(env_->GetFileSize(s.path, &s.file_size));
    FFR_RETURN_IF_ERROR(ReadHeader(s));
    std::unique_ptr<RandomAccessFile> file;
    FFR_RETURN_IF_ERROR(env_->NewRandomAccessFile(s.path, options_.direct_io, &file));
    if (options_.backend == IoBackend::kMmap) FFR_RETURN_IF_ERROR(env_->NewMappedFile(*file, s.file_size, &s.map));
    files_.push_back(std::move(file));
    starts_.push_back(starts_.back() + s.header.count());
  }
  total_ = starts_.back();

  backend_ = options_.backend == IoBackend::kAuto ? IoBackend::kIoUring : options_.backend;
  if (backend_ == IoBackend::kMmap) return Status::OK();
  if (backend_ == IoBackend::kIoUring) {
    const Status st = internal::NewUringBackend(env_, files_, options_.queue_depth, &reads_);
    if (st.ok()) return Status::OK();
    if (options_.backend == IoBackend::kIoUring) return st;
    backend_ = IoBackend::kPread;
  }
  reads_ = internal::NewPreadBackend(files_);
  return Status::OK();
}

// Through a buffered file of its own: the header is small and unaligned.
Status Reader::ReadHeader(Shard& s) {
  std::unique_ptr<RandomAccessFile> file;
  FFR_RETURN_IF_ERROR(env_->NewRandomAccessFile(s.path, false, &file));
  std::vector<uint8_t> prefix(kShardPrefixSize);
  size_t got = 0;
  FFR_RETURN_IF_ERROR(file->Read(0, prefix.size(), prefix.data(), &got));
  const uint64_t n = got == prefix.size() ? DecodeFixed64(prefix.data() + 4) : 0;
  // Bound the header by the file size before trusting N.
  const uint64_t max_n = s.file_size >= kShardPrefixSize ? (s.file_size - kShardPrefixSize) / kShardEntrySize : 0;
  const uint64_t header_size = ShardHeader::EncodedSize(static_cast<int64_t>(std::min(n, max_n)));
  std::vector<uint8_t> header(std::max<uint64_t>(header_size, got));
  std::memcpy(header.data(), prefix.data(), got);
  if (header_size > got) {
    size_t rest = 0;
    FFR_RETURN_IF_ERROR(file->Read(got, header_size - got, header.data() + got, &rest));
    if (rest != header_size - got) return Status::Corruption(s.path + ": truncated header");
  }
  return ParseShardHeader(s.path, header.data(), header.size(), s.file_size, options_.verify_header, &s.header);
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

Status Reader::Submit(ReadRequest* requests, size_t count, const StreamConsumer* consume) const {
  Hooks hooks(*this, requests, count, consume);
  return reads_->Run(requests, count, hooks);
}

Status Reader::Plan(int64_t index, ReadRequest* r) const {
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
    ReadRequest r;
    FFR_RETURN_IF_ERROR(Plan(indices[k], &r));
    const Shard& shard = shards_[r.shard];
    out[k].data = shard.map->data() + r.offset;
    out[k].size = r.size;
    const Status checked = VerifyChecksum(indices[k], out[k].data, out[k].size);
    // Checked after the CRC, which touches every byte: a page gone since Open
    // reads as zeros, which must not pass as the sample (nor as a mismatch).
    if (shard.map->Shrank())
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
  std::vector<ReadRequest> requests(count);
  uint64_t total = 0;
  for (size_t k = 0; k < count; ++k) {
    ReadRequest& r = requests[k];
    FFR_RETURN_IF_ERROR(Plan(indices[k], &r));
    total = AlignUp(total);
    r.dst = reinterpret_cast<uint8_t*>(total);  // a slot offset until the buffer is reserved
    total += r.length;
  }
  uint8_t* base = buffer->Reserve(std::max<uint64_t>(total, 1));
  for (ReadRequest& r : requests) r.dst = base + reinterpret_cast<uint64_t>(r.dst);
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
  std::vector<ReadRequest> requests(count);
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
  std::vector<ReadRequest> requests(count);
  for (size_t k = 0; k < count; ++k) {
    FFR_RETURN_IF_ERROR(Plan(indices[k], &requests[k]));
    requests[k].dst = dsts[k];
  }
  return Submit(requests.data(), count);
}

}  // namespace ffr
