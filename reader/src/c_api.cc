// The C API (ffr.h): a thin layer over Reader and ShardWriter that turns
// Status into codes plus a thread-local message and keeps exceptions inside.
#include "ffr/ffr.h"

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ffr/format.h"
#include "ffr/reader.h"
#include "ffr/shard_writer.h"

struct ffr_reader {
  std::unique_ptr<ffr::Reader> reader;
};

struct ffr_writer {
  std::unique_ptr<ffr::ShardWriter> writer;
};

namespace {

using ffr::Status;

static_assert(FFR_NOT_FOUND == static_cast<int>(Status::Code::kNotFound) &&
                  FFR_CORRUPTION == static_cast<int>(Status::Code::kCorruption) &&
                  FFR_IO_ERROR == static_cast<int>(Status::Code::kIOError) &&
                  FFR_INVALID_ARGUMENT == static_cast<int>(Status::Code::kInvalidArgument) &&
                  FFR_ALREADY_EXISTS == static_cast<int>(Status::Code::kAlreadyExists) &&
                  FFR_NOT_SUPPORTED == static_cast<int>(Status::Code::kNotSupported) &&
                  FFR_ABORTED == static_cast<int>(Status::Code::kAborted),
              "ffr_code must mirror ffr::Status::Code");
static_assert(FFR_BACKEND_AUTO == static_cast<int>(ffr::IoBackend::kAuto) &&
                  FFR_BACKEND_IO_URING == static_cast<int>(ffr::IoBackend::kIoUring) &&
                  FFR_BACKEND_PREAD == static_cast<int>(ffr::IoBackend::kPread) &&
                  FFR_BACKEND_MMAP == static_cast<int>(ffr::IoBackend::kMmap),
              "ffr_backend must mirror ffr::IoBackend");

thread_local std::string last_error;

int Report(const Status& s) {
  if (!s.ok()) last_error = s.ToString();
  return static_cast<int>(s.code());
}

// Runs `body` (which returns a Status) and reports its outcome; exceptions
// (only std::bad_alloc in practice) must not cross into C.
template <typename Body>
int Guarded(Body body) {
  try {
    return Report(body());
  } catch (const std::bad_alloc&) {
    return Report(Status::IOError("out of memory"));
  } catch (const std::exception& e) {
    return Report(Status::IOError(e.what()));
  }
}

Status CheckIndex(const ffr::Reader& r, int64_t index) {
  if (index < 0 || index >= r.size())
    return Status::InvalidArgument("sample index " + std::to_string(index) + " out of range [0, " +
                                   std::to_string(r.size()) + ")");
  return Status::OK();
}

Status CheckFits(const ffr::Reader& r, int64_t index, uint64_t capacity, const char* what) {
  FFR_RETURN_IF_ERROR(CheckIndex(r, index));
  const uint64_t size = r.sample_size(index);
  if (size > capacity)
    return Status::InvalidArgument(r.Describe(index) + ": " + std::to_string(size) + " bytes do not fit " + what +
                                   " of " + std::to_string(capacity) + " bytes");
  return Status::OK();
}

}  // namespace

extern "C" {

const char* ffr_last_error(void) { return last_error.c_str(); }

const char* ffr_code_name(int code) {
  switch (code) {
    case FFR_OK: return "OK";
    case FFR_NOT_FOUND: return "Not found";
    case FFR_CORRUPTION: return "Corruption";
    case FFR_IO_ERROR: return "IO error";
    case FFR_INVALID_ARGUMENT: return "Invalid argument";
    case FFR_ALREADY_EXISTS: return "Already exists";
    case FFR_NOT_SUPPORTED: return "Not supported";
    case FFR_ABORTED: return "Aborted";
  }
  return "Unknown";
}

uint32_t ffr_crc32(const void* data, size_t n) { return ffr::Crc32(data, n); }

void ffr_reader_options_init(ffr_reader_options* options) {
  const ffr::ReaderOptions defaults;
  options->backend = static_cast<ffr_backend>(defaults.backend);
  options->direct_io = defaults.direct_io;
  options->verify_checksums = defaults.verify_checksums;
  options->verify_header = defaults.verify_header;
  options->queue_depth = defaults.queue_depth;
}

int ffr_reader_open(const char* path, const ffr_reader_options* options, ffr_reader** out) {
  return Guarded([&] {
    if (path == nullptr || out == nullptr) return Status::InvalidArgument("ffr_reader_open: NULL path or out");
    ffr::ReaderOptions opts;
    if (options != nullptr) {
      if (options->backend < FFR_BACKEND_AUTO || options->backend > FFR_BACKEND_MMAP)
        return Status::InvalidArgument(std::string(path) + ": unknown backend " + std::to_string(options->backend));
      opts.backend = static_cast<ffr::IoBackend>(options->backend);
      opts.direct_io = options->direct_io != 0;
      opts.verify_checksums = options->verify_checksums != 0;
      opts.verify_header = options->verify_header != 0;
      opts.queue_depth = options->queue_depth;
    }
    std::unique_ptr<ffr_reader> r(new ffr_reader);
    FFR_RETURN_IF_ERROR(ffr::Reader::Open(path, opts, &r->reader));
    *out = r.release();
    return Status::OK();
  });
}

void ffr_reader_close(ffr_reader* reader) { delete reader; }

int64_t ffr_reader_size(const ffr_reader* reader) { return reader->reader->size(); }

const char* ffr_reader_backend(const ffr_reader* reader) { return ffr::IoBackendName(reader->reader->backend()); }

int ffr_reader_sample_size(const ffr_reader* reader, int64_t index, uint64_t* size) {
  return Guarded([&] {
    FFR_RETURN_IF_ERROR(CheckIndex(*reader->reader, index));
    *size = reader->reader->sample_size(index);
    return Status::OK();
  });
}

int ffr_reader_sample_crc(const ffr_reader* reader, int64_t index, uint32_t* crc) {
  return Guarded([&] {
    FFR_RETURN_IF_ERROR(CheckIndex(*reader->reader, index));
    *crc = reader->reader->sample_crc(index);
    return Status::OK();
  });
}

int ffr_reader_read(const ffr_reader* reader, int64_t index, void* dst, uint64_t capacity, uint64_t* size) {
  return Guarded([&] {
    const ffr::Reader& r = *reader->reader;
    FFR_RETURN_IF_ERROR(CheckFits(r, index, capacity, "the buffer"));
    uint8_t* const dsts[1] = {static_cast<uint8_t*>(dst)};
    FFR_RETURN_IF_ERROR(r.ReadBatchInto(&index, 1, dsts));
    if (size != nullptr) *size = r.sample_size(index);
    return Status::OK();
  });
}

int ffr_reader_read_batch(const ffr_reader* reader, const int64_t* indices, size_t count, void* const* dsts,
                          const uint64_t* capacities) {
  return Guarded([&] {
    if (count == 0) return Status::OK();
    if (indices == nullptr || dsts == nullptr || capacities == nullptr)
      return Status::InvalidArgument("ffr_reader_read_batch: NULL indices, dsts or capacities");
    const ffr::Reader& r = *reader->reader;
    std::vector<uint8_t*> targets(count);
    for (size_t k = 0; k < count; ++k) {
      const std::string what = "dsts[" + std::to_string(k) + "]";
      FFR_RETURN_IF_ERROR(CheckFits(r, indices[k], capacities[k], what.c_str()));
      targets[k] = static_cast<uint8_t*>(dsts[k]);
    }
    return r.ReadBatchInto(indices, count, targets.data());
  });
}

int ffr_reader_read_stream(const ffr_reader* reader, const int64_t* indices, size_t count,
                           ffr_stream_consumer consume, void* user) {
  return Guarded([&] {
    if (count == 0) return Status::OK();
    if (indices == nullptr || consume == nullptr)
      return Status::InvalidArgument("ffr_reader_read_stream: NULL indices or consumer");
    return reader->reader->ReadStream(indices, count, [&](size_t k, const ffr::Sample& s) {
      const int rc = consume(user, k, s.data, s.size);
      if (rc == 0) return Status::OK();
      return Status::Aborted("ffr_reader_read_stream: the consumer stopped at position " + std::to_string(k) +
                             " (it returned " + std::to_string(rc) + ")");
    });
  });
}

int ffr_writer_create(const char* path, int64_t count, ffr_writer** out) {
  return ffr_writer_create_aligned(path, count, 0, out);
}

int ffr_writer_create_aligned(const char* path, int64_t count, uint64_t sample_alignment, ffr_writer** out) {
  return Guarded([&] {
    if (path == nullptr || out == nullptr) return Status::InvalidArgument("ffr_writer_create: NULL path or out");
    std::unique_ptr<ffr_writer> w(new ffr_writer);
    ffr::ShardWriterOptions options;
    options.sample_alignment = sample_alignment;
    FFR_RETURN_IF_ERROR(ffr::ShardWriter::Create(path, count, options, &w->writer));
    *out = w.release();
    return Status::OK();
  });
}

int ffr_writer_append(ffr_writer* writer, const void* data, size_t size) {
  return Guarded([&] {
    if (data == nullptr && size > 0)
      return Status::InvalidArgument(writer->writer->path() + ": NULL data of " + std::to_string(size) + " bytes");
    return writer->writer->Append(data, size);
  });
}

int ffr_writer_finish(ffr_writer* writer) {
  const std::unique_ptr<ffr_writer> owned(writer);
  return Guarded([&] { return owned->writer->Finish(); });
}

void ffr_writer_abort(ffr_writer* writer) { delete writer; }

}  // extern "C"
