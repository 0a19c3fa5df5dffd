// A shard file of any bytes opened and read whole: Reader::Open (header,
// offsets) then every sample with its checksum, through the pread and mmap
// backends and through the C API (ffr_reader_open, ffr_reader_read,
// ffr_reader_read_stream, which may take io_uring).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ffr/ffr.h"
#include "ffr/reader.h"

namespace {

// The shard lives in a memfd that the reader opens by its /proc path: a real
// file for open, stat, pread and mmap, without touching the disk.
int ShardFd() {
  static const int fd = memfd_create("fuzz.ffr", 0);
  if (fd < 0) std::abort();
  return fd;
}

const std::string& ShardPath() {
  static const std::string path = "/proc/self/fd/" + std::to_string(ShardFd());
  return path;
}

void ReadAll(ffr::IoBackend backend) {
  ffr::ReaderOptions options;
  options.backend = backend;
  std::unique_ptr<ffr::Reader> reader;
  if (!ffr::Reader::Open(ShardPath(), options, &reader).ok()) return;
  ffr::ReadBuffer buffer;
  for (int64_t i = 0; i < reader->size(); ++i) {
    ffr::Sample sample;
    if (reader->Read(i, &buffer, &sample).ok() && sample.size > 0) {
      volatile uint8_t sink = sample.data[sample.size - 1];
      (void)sink;
    }
  }
}

int Consume(void*, size_t, const void*, uint64_t) { return 0; }

void ReadAllThroughCApi() {
  ffr_reader* reader = nullptr;
  if (ffr_reader_open(ShardPath().c_str(), nullptr, &reader) != FFR_OK) return;
  const int64_t n = ffr_reader_size(reader);
  std::vector<int64_t> indices;
  std::vector<uint8_t> dst;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t size = 0;
    if (ffr_reader_sample_size(reader, i, &size) != FFR_OK) continue;
    dst.resize(size);
    ffr_reader_read(reader, i, dst.data(), dst.size(), &size);
    indices.push_back(i);
  }
  ffr_reader_read_stream(reader, indices.data(), indices.size(), Consume, nullptr);
  ffr_reader_close(reader);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = ShardFd();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  ReadAll(ffr::IoBackend::kPread);
  ReadAll(ffr::IoBackend::kMmap);
  ReadAllThroughCApi();
  return 0;
}
