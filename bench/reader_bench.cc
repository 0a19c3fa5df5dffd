// reader_bench: read throughput of ffr::Reader and of its baselines on the same
// samples, so that scripts/bench-reader.sh can compare them with fio and with
// memcpy (see docs/bench.md, "Reader").
//
// For each sample size it writes (once, then reuses) FFRecord shards of 256 MiB,
// the same samples as one file each (in s<size>k/), and the same samples again
// in shards with a 4096-byte sample alignment (in s<size>k_a4096/), under
// --ffr_data_dir (or $FFR_BENCH_DIR). Cases are named
// "<mode>/<method>/<size>k/qd:<n>/crc:<0|1>":
//   warm  buffered reads of the first --ffr_warm_mib of each size, page cache
//         filled first;
//   cold  O_DIRECT reads over all --ffr_cold_mib (the small files: buffered
//         reads after dropping the page cache, which needs root);
//   cpu   memcpy and CRC-32 of the same bytes from memory: the warm limits.
// Methods: io_uring_read (Reader::Read), io_uring_batch (Reader::ReadBatch of
// qd random samples), io_uring_seq (ReadBatch of qd consecutive samples),
// io_uring_stream (cold: ReadStream of 16*qd random samples with qd reads
// always in flight, fio's own pattern), io_uring_batch_aligned and
// io_uring_stream_aligned (cold: the same on the aligned shards, where an
// O_DIRECT read fetches only the sample's own blocks, as fio's reads do),
// mmap_batch_into (warm: ReadBatchInto of qd random samples with the mmap
// backend, the same bytes in caller memory as io_uring_batch), mmap_batch
// (warm, with CRC: views of the page cache, every byte checksummed),
// pread_rand / pread_seq (a plain pread loop on the shards), files (open, read,
// close one file per sample). Rates use wall time; CPU time is the process's.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffr/format.h"
#include "ffr/read_buffer.h"
#include "ffr/reader.h"
#include "ffr/shard_writer.h"

namespace {

namespace fs = std::filesystem;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kShardBytes = 256 * kMiB;
constexpr uint64_t kAlign = ffr::ReadBuffer::kAlignment;
constexpr unsigned kQueueDepths[] = {1, 4, 16, 64, 256};
constexpr unsigned kScanBatch = 64;
constexpr uint64_t kSampleAlignment = 4096;  // of the *_aligned cases' shards

uint64_t AlignDown(uint64_t v) { return v & ~(kAlign - 1); }
uint64_t AlignUp(uint64_t v) { return (v + kAlign - 1) & ~(kAlign - 1); }
// v rounded up to a multiple of `alignment`; 0 means none.
uint64_t RoundUp(uint64_t v, uint64_t alignment) {
  return alignment == 0 ? v : (v + alignment - 1) / alignment * alignment;
}

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "reader_bench: %s\n", msg.c_str());
  std::exit(1);
}

void CheckOk(const ffr::Status& s) {
  if (!s.ok()) Die(s.ToString());
}

struct Flags {
  std::string data_dir;
  uint64_t cold_mib = 2048;
  uint64_t warm_mib = 512;
  std::vector<uint64_t> sizes_kib = {16, 64, 128, 512};
  bool prepare_only = false;
};

// Deterministic incompressible bytes for sample `index`, the same in the shard and in its file.
void FillSample(int64_t index, uint8_t* data, uint64_t size) {
  uint64_t x = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(index + 1);
  for (uint64_t i = 0; i < size; i += 8) {
    x += 0x9e3779b97f4a7c15ULL;  // splitmix64
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    std::memcpy(data + i, &z, std::min<uint64_t>(8, size - i));
  }
}

// The samples of one size, stored twice: as shards and as one file per sample.
// With a sample alignment, only as shards written with it (ShardWriterOptions).
class Dataset {
 public:
  Dataset(const std::string& root, uint64_t sample_size, uint64_t alignment, const Flags& flags)
      : size_(sample_size),
        alignment_(alignment),
        stride_(RoundUp(sample_size, alignment)),
        dir_(root + "/s" + std::to_string(sample_size / kKiB) + "k" +
             (alignment > 0 ? "_a" + std::to_string(alignment) : "")),
        count_(static_cast<int64_t>(flags.cold_mib * kMiB / sample_size)),
        warm_count_(std::min(count_, static_cast<int64_t>(flags.warm_mib * kMiB / sample_size))),
        per_shard_(static_cast<int64_t>(kShardBytes / stride_)) {
    for (int64_t first = 0; first < count_; first += per_shard_) shards_.push_back(ShardPath(first / per_shard_));
  }

  uint64_t size() const { return size_; }
  int64_t count() const { return count_; }
  int64_t warm_count() const { return warm_count_; }
  const std::vector<std::string>& shards() const { return shards_; }
  std::string SamplePath(int64_t i) const { return dir_ + "/files/" + std::to_string(i) + ".bin"; }
  size_t ShardOf(int64_t i) const { return static_cast<size_t>(i / per_shard_); }
  // The absolute offset of sample i in its shard (all samples have size_ bytes, stride_ with their padding).
  uint64_t OffsetOf(int64_t i) const {
    const int64_t shard = i / per_shard_;
    const int64_t in_shard = std::min(per_shard_, count_ - shard * per_shard_);
    const uint64_t first = RoundUp(ffr::ShardHeader::EncodedSize(in_shard), alignment_);
    return first + static_cast<uint64_t>(i % per_shard_) * stride_;
  }

  // Writes the shards and the files unless a finished copy with the same layout exists.
  void Prepare() const {
    const std::string stamp_path = dir_ + "/COMPLETE";
    const std::string stamp = std::to_string(size_) + " " + std::to_string(count_) + " " + std::to_string(per_shard_) +
                              (alignment_ > 0 ? " " + std::to_string(alignment_) : "");
    std::ifstream in(stamp_path);
    std::string found;
    std::getline(in, found);
    if (found == stamp) return;
    std::fprintf(stderr, "reader_bench: writing %lld samples of %llu KiB to %s (once)\n",
                 static_cast<long long>(count_), static_cast<unsigned long long>(size_ / kKiB), dir_.c_str());
    if (const ffr::Status s = ffr::Env::Default()->RemoveTree(dir_); !s.ok()) {
      std::fprintf(stderr, "reader_bench: %s\n", s.ToString().c_str());
      std::exit(1);
    }
    fs::create_directories(dir_ + "/shards");
    if (alignment_ == 0) fs::create_directories(dir_ + "/files");
    std::vector<uint8_t> sample(size_);
    ffr::ShardWriterOptions options;
    options.sample_alignment = alignment_;
    for (size_t s = 0; s < shards_.size(); ++s) {
      const int64_t first = static_cast<int64_t>(s) * per_shard_;
      const int64_t n = std::min(per_shard_, count_ - first);
      std::unique_ptr<ffr::ShardWriter> writer;
      CheckOk(ffr::ShardWriter::Create(shards_[s], n, options, &writer));
      for (int64_t i = first; i < first + n; ++i) {
        FillSample(i, sample.data(), size_);
        CheckOk(writer->Append(sample.data(), size_));
        if (alignment_ == 0) WriteFile(SamplePath(i), sample.data(), size_);
      }
      CheckOk(writer->Finish());
    }
    ::sync();  // leave no dirty pages to write back during the cold runs
    std::ofstream(stamp_path) << stamp << "\n";
  }

 private:
  std::string ShardPath(int64_t shard) const {
    char name[32];
    std::snprintf(name, sizeof(name), "PART_%05lld.ffr", static_cast<long long>(shard));
    return dir_ + "/shards/" + name;
  }

  static void WriteFile(const std::string& path, const uint8_t* data, uint64_t size) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::write(fd, data, size) != static_cast<ssize_t>(size) || ::close(fd) != 0)
      Die("write " + path + ": " + std::strerror(errno));
  }

  uint64_t size_;
  uint64_t alignment_;
  uint64_t stride_;  // bytes from one sample to the next in a shard
  std::string dir_;
  int64_t count_;
  int64_t warm_count_;
  int64_t per_shard_;
  std::vector<std::string> shards_;
};

// A different random sequence for every run, so that no run replays another's
// reads (a cache below the VM would serve the replay).
uint64_t NewSeed() {
  static std::random_device device;
  return (uint64_t{device()} << 32) | device();
}

// Which datasets have their warm set in the page cache; dropping the cache clears it.
std::vector<const Dataset*> warmed;

bool DropPageCache() {
  ::sync();
  std::ofstream out("/proc/sys/vm/drop_caches");
  out << "3\n";
  out.flush();
  if (!out) return false;
  warmed.clear();
  return true;
}

// Reads the warm samples (shard bytes and files) through the page cache.
void Prewarm(const Dataset& ds) {
  if (std::find(warmed.begin(), warmed.end(), &ds) != warmed.end()) return;
  std::vector<uint8_t> chunk(4 * kMiB);
  const uint64_t end = ds.OffsetOf(ds.warm_count() - 1) + ds.size();
  for (size_t s = 0; s <= ds.ShardOf(ds.warm_count() - 1); ++s) {
    const int fd = ::open(ds.shards()[s].c_str(), O_RDONLY);
    if (fd < 0) Die("open " + ds.shards()[s] + ": " + std::strerror(errno));
    const uint64_t shard_end = s == ds.ShardOf(ds.warm_count() - 1) ? end : UINT64_MAX;
    for (uint64_t off = 0; off < shard_end;) {
      const ssize_t got = ::pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(off));
      if (got <= 0) break;
      off += static_cast<uint64_t>(got);
    }
    ::close(fd);
  }
  for (int64_t i = 0; i < ds.warm_count(); ++i) {
    const int fd = ::open(ds.SamplePath(i).c_str(), O_RDONLY);
    if (fd < 0 || ::read(fd, chunk.data(), ds.size()) != static_cast<ssize_t>(ds.size()))
      Die("read " + ds.SamplePath(i) + ": " + std::strerror(errno));
    ::close(fd);
  }
  warmed.push_back(&ds);
}

// The samples a case draws from: the warm set, or everything when cold.
int64_t Population(const Dataset& ds, bool cold) { return cold ? ds.count() : ds.warm_count(); }

std::unique_ptr<ffr::Reader> OpenReader(const Dataset& ds, ffr::IoBackend backend, bool cold, unsigned qd, bool crc) {
  ffr::ReaderOptions options;
  options.backend = backend;
  options.direct_io = cold;
  options.verify_checksums = crc;
  options.queue_depth = qd;
  std::unique_ptr<ffr::Reader> reader;
  CheckOk(ffr::Reader::Open(ds.shards(), options, &reader));
  if (reader->size() != ds.count() || reader->sample_size(reader->size() - 1) != ds.size())
    Die("unexpected layout in " + ds.shards()[0]);
  return reader;
}

// Bytes an O_DIRECT read of sample i moves: its 4096-aligned superset.
uint64_t DirectBytes(const Dataset& ds, int64_t i) {
  const uint64_t off = ds.OffsetOf(i);
  return AlignUp(off + ds.size()) - AlignDown(off);
}

void SetRates(benchmark::State& state, const Dataset& ds, uint64_t items, uint64_t io_bytes) {
  state.SetItemsProcessed(static_cast<int64_t>(items));
  state.SetBytesProcessed(static_cast<int64_t>(items * ds.size()));
  if (io_bytes > 0) state.counters["io_bytes_per_second"] = benchmark::Counter(io_bytes, benchmark::Counter::kIsRate);
}

enum class Pattern {
  kRead,       // Reader::Read of one random sample
  kBatch,      // Reader::ReadBatch of qd random samples
  kScan,       // Reader::ReadBatch of qd consecutive samples
  kBatchInto,  // Reader::ReadBatchInto of qd random samples
  kStream,     // Reader::ReadStream of kStreamLength * qd random samples, qd in flight
};

constexpr unsigned kStreamLength = 16;

void BM_Reader(benchmark::State& state, const Dataset* ds, ffr::IoBackend backend, bool cold, Pattern pattern,
               unsigned qd, bool crc) {
  if (!cold) Prewarm(*ds);
  const std::unique_ptr<ffr::Reader> reader = OpenReader(*ds, backend, cold, qd, crc);
  const int64_t population = Population(*ds, cold);
  std::mt19937_64 rng(NewSeed());
  std::uniform_int_distribution<int64_t> pick(0, population - 1);
  std::vector<int64_t> indices(pattern == Pattern::kStream ? qd * kStreamLength : qd);
  std::vector<ffr::Sample> samples(qd);
  ffr::ReadBuffer buffer;
  std::vector<uint8_t*> dsts(qd);  // kBatchInto: qd slots of one buffer
  if (pattern == Pattern::kBatchInto) {
    uint8_t* base = buffer.Reserve(uint64_t{qd} * ds->size());
    for (unsigned k = 0; k < qd; ++k) dsts[k] = base + uint64_t{k} * ds->size();
  }
  // One untimed batch first: it faults the buffer in.
  for (int64_t& i : indices) i = pick(rng);
  CheckOk(pattern == Pattern::kBatchInto ? reader->ReadBatchInto(indices.data(), qd, dsts.data())
                                         : reader->ReadBatch(indices.data(), qd, &buffer, samples.data()));
  int64_t cursor = 0;
  uint64_t items = 0, io_bytes = 0;
  for (auto _ : state) {
    for (int64_t& i : indices) {
      i = pattern == Pattern::kScan ? cursor : pick(rng);
      cursor = (cursor + 1) % population;
      if (cold) io_bytes += DirectBytes(*ds, i);
    }
    const auto consume = [](size_t, const ffr::Sample& sample) {
      benchmark::DoNotOptimize(sample.data);
      return ffr::Status::OK();
    };
    const ffr::Status s =
        pattern == Pattern::kRead        ? reader->Read(indices[0], &buffer, &samples[0])
        : pattern == Pattern::kBatchInto ? reader->ReadBatchInto(indices.data(), qd, dsts.data())
        : pattern == Pattern::kStream    ? reader->ReadStream(indices.data(), indices.size(), consume)
                                         : reader->ReadBatch(indices.data(), qd, &buffer, samples.data());
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
    items += indices.size();
  }
  SetRates(state, *ds, items, io_bytes);
}

// The baseline without the library: one pread per sample on the shards (O_DIRECT when cold).
void BM_Pread(benchmark::State& state, const Dataset* ds, bool cold, bool sequential) {
  if (!cold) Prewarm(*ds);
  std::vector<int> fds;
  for (const std::string& path : ds->shards()) {
    fds.push_back(::open(path.c_str(), O_RDONLY | (cold ? O_DIRECT : 0)));
    if (fds.back() < 0) Die("open " + path + ": " + std::strerror(errno));
  }
  ffr::ReadBuffer buffer;
  uint8_t* dst = buffer.Reserve(ds->size() + 2 * kAlign);
  std::memset(dst, 0, ds->size() + 2 * kAlign);
  const int64_t population = Population(*ds, cold);
  std::mt19937_64 rng(NewSeed());
  std::uniform_int_distribution<int64_t> pick(0, population - 1);
  int64_t cursor = 0;
  uint64_t items = 0, io_bytes = 0;
  for (auto _ : state) {
    const int64_t i = sequential ? cursor : pick(rng);
    cursor = (cursor + 1) % population;
    // O_DIRECT reads the aligned superset, whose tail may lie past the end of the shard.
    const uint64_t begin = ds->OffsetOf(i);
    const uint64_t off = cold ? AlignDown(begin) : begin;
    const uint64_t len = cold ? DirectBytes(*ds, i) : ds->size();
    const ssize_t got = ::pread(fds[ds->ShardOf(i)], dst, len, static_cast<off_t>(off));
    if (got < static_cast<ssize_t>(begin + ds->size() - off)) {
      state.SkipWithError(("short pread of " + ds->shards()[ds->ShardOf(i)] + ": " + std::strerror(errno)).c_str());
      break;
    }
    if (cold) io_bytes += static_cast<uint64_t>(got);
    ++items;
  }
  for (int fd : fds) ::close(fd);
  SetRates(state, *ds, items, io_bytes);
}

// The small-file layout: open, read, close one file per sample.
void BM_Files(benchmark::State& state, const Dataset* ds, bool cold) {
  if (cold && !DropPageCache()) {
    state.SkipWithError("cannot write /proc/sys/vm/drop_caches (needs root)");
    for (auto _ : state) {
    }
    return;
  }
  if (!cold) Prewarm(*ds);
  // Cold: each file at most once per run (the cache was just dropped), in random order.
  std::vector<int64_t> order(Population(*ds, cold));
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int64_t>(k);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(NewSeed()));
  ffr::ReadBuffer buffer;
  uint8_t* dst = buffer.Reserve(ds->size());
  std::memset(dst, 0, ds->size());
  size_t next = 0;
  uint64_t items = 0;
  for (auto _ : state) {
    if (next == order.size()) {
      state.PauseTiming();
      if (cold) DropPageCache();
      next = 0;
      state.ResumeTiming();
    }
    const std::string path = ds->SamplePath(order[next++]);
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0 || ::read(fd, dst, ds->size()) != static_cast<ssize_t>(ds->size())) {
      state.SkipWithError(("read " + path + ": " + std::strerror(errno)).c_str());
      break;
    }
    ::close(fd);
    ++items;
  }
  SetRates(state, *ds, items, 0);
}

// As many bytes as a warm set, made once. Huge pages where the kernel gives them,
// as the kernel's own copy from the page cache reads through its huge-page direct map.
const uint8_t* WarmBytes(uint64_t size) {
  static uint8_t* bytes = nullptr;
  if (bytes == nullptr) {
    constexpr uint64_t kHuge = 2 * kMiB;
    const uint64_t rounded = (size + kHuge - 1) / kHuge * kHuge;
    bytes = static_cast<uint8_t*>(std::aligned_alloc(kHuge, rounded));
    if (bytes == nullptr) Die("out of memory for the warm bytes");
    ::madvise(bytes, rounded, MADV_HUGEPAGE);
    FillSample(0, bytes, size);
  }
  return bytes;
}

// The warm limit: copying (or checksumming) batches of qd random samples from memory.
void BM_Memory(benchmark::State& state, const Dataset* ds, uint64_t warm_bytes_size, unsigned qd, bool crc) {
  const uint8_t* warm_bytes = WarmBytes(warm_bytes_size);
  std::mt19937_64 rng(NewSeed());
  std::uniform_int_distribution<int64_t> pick(0, ds->warm_count() - 1);
  ffr::ReadBuffer buffer;
  uint8_t* dst = buffer.Reserve(qd * ds->size());
  std::memset(dst, 0, qd * ds->size());  // fault the destination in, as the reader's untimed first batch does
  uint64_t items = 0;
  uint32_t sum = 0;
  for (auto _ : state) {
    for (unsigned k = 0; k < qd; ++k) {
      const uint8_t* src = warm_bytes + static_cast<uint64_t>(pick(rng)) * ds->size();
      if (crc) {
        sum += ffr::Crc32(src, ds->size());
      } else {
        std::memcpy(dst + k * ds->size(), src, ds->size());
      }
    }
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
    items += qd;
  }
  SetRates(state, *ds, items, 0);
}

std::string CaseName(const char* mode, const char* method, const Dataset& ds, unsigned qd, bool crc) {
  return std::string(mode) + "/" + method + "/" + std::to_string(ds.size() / kKiB) + "k/qd:" + std::to_string(qd) +
         "/crc:" + (crc ? "1" : "0");
}

// `aligned` holds the same samples as `ds` in shards with kSampleAlignment.
void RegisterCases(const Dataset* ds, const Dataset* aligned, uint64_t warm_bytes) {
  // Rates use wall time; the CPU time is the whole process's, io_uring's worker threads included, so that on a
  // busy machine bytes per CPU-second still says what the copy path costs.
  auto add = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->MeasureProcessCPUTime();
  };
  add(CaseName("cpu", "crc32", *ds, kScanBatch, true),
      [=](benchmark::State& st) { BM_Memory(st, ds, warm_bytes, kScanBatch, true); });
  for (const bool cold : {false, true}) {
    const char* mode = cold ? "cold" : "warm";
    add(CaseName(mode, "io_uring_read", *ds, 1, false),
        [=](benchmark::State& st) { BM_Reader(st, ds, ffr::IoBackend::kIoUring, cold, Pattern::kRead, 1, false); });
    for (const unsigned qd : kQueueDepths) {
      // Each warm batch right after its memcpy reference, so that the pair sees the same machine load.
      if (!cold)
        add(CaseName("cpu", "memcpy", *ds, qd, false),
            [=](benchmark::State& st) { BM_Memory(st, ds, warm_bytes, qd, false); });
      add(CaseName(mode, "io_uring_batch", *ds, qd, false),
          [=](benchmark::State& st) { BM_Reader(st, ds, ffr::IoBackend::kIoUring, cold, Pattern::kBatch, qd, false); });
      if (cold && qd > 1)
        add(CaseName(mode, "io_uring_stream", *ds, qd, false), [=](benchmark::State& st) {
          BM_Reader(st, ds, ffr::IoBackend::kIoUring, true, Pattern::kStream, qd, false);
        });
      // Aligned right after plain, so that the pair sees the same machine load.
      if (cold)
        add(CaseName(mode, "io_uring_batch_aligned", *aligned, qd, false), [=](benchmark::State& st) {
          BM_Reader(st, aligned, ffr::IoBackend::kIoUring, true, Pattern::kBatch, qd, false);
        });
      if (cold && qd > 1)
        add(CaseName(mode, "io_uring_stream_aligned", *aligned, qd, false), [=](benchmark::State& st) {
          BM_Reader(st, aligned, ffr::IoBackend::kIoUring, true, Pattern::kStream, qd, false);
        });
      if (!cold)
        add(CaseName(mode, "mmap_batch_into", *ds, qd, false), [=](benchmark::State& st) {
          BM_Reader(st, ds, ffr::IoBackend::kMmap, false, Pattern::kBatchInto, qd, false);
        });
    }
    if (!cold)
      add(CaseName(mode, "mmap_batch", *ds, kScanBatch, true), [=](benchmark::State& st) {
        BM_Reader(st, ds, ffr::IoBackend::kMmap, false, Pattern::kBatch, kScanBatch, true);
      });
    add(CaseName(mode, "io_uring_batch", *ds, kScanBatch, true),
        [=](benchmark::State& st) { BM_Reader(st, ds, ffr::IoBackend::kIoUring, cold, Pattern::kBatch, kScanBatch, true); });
    add(CaseName(mode, "io_uring_seq", *ds, kScanBatch, false),
        [=](benchmark::State& st) { BM_Reader(st, ds, ffr::IoBackend::kIoUring, cold, Pattern::kScan, kScanBatch, false); });
    add(CaseName(mode, "pread_rand", *ds, 1, false), [=](benchmark::State& st) { BM_Pread(st, ds, cold, false); });
    add(CaseName(mode, "pread_seq", *ds, 1, false), [=](benchmark::State& st) { BM_Pread(st, ds, cold, true); });
    add(CaseName(mode, "files", *ds, 1, false), [=](benchmark::State& st) { BM_Files(st, ds, cold); });
  }
}

// Takes our --ffr_* flags out of argv, leaving Google Benchmark's.
Flags ParseFlags(int* argc, char** argv) {
  Flags flags;
  const char* env_dir = std::getenv("FFR_BENCH_DIR");
  flags.data_dir = env_dir != nullptr && *env_dir != '\0' ? env_dir : FFR_BENCH_DEFAULT_DIR;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name, std::string* out) {
      const std::string prefix = std::string("--") + name + "=";
      if (arg.compare(0, prefix.size(), prefix) != 0) return false;
      *out = arg.substr(prefix.size());
      return true;
    };
    std::string v;
    if (value("ffr_data_dir", &v)) {
      flags.data_dir = v;
    } else if (value("ffr_cold_mib", &v)) {
      flags.cold_mib = std::stoull(v);
    } else if (value("ffr_warm_mib", &v)) {
      flags.warm_mib = std::stoull(v);
    } else if (value("ffr_sizes_kib", &v)) {
      flags.sizes_kib.clear();
      std::stringstream list(v);
      for (std::string item; std::getline(list, item, ',');) flags.sizes_kib.push_back(std::stoull(item));
    } else if (arg == "--ffr_prepare_only") {
      flags.prepare_only = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return flags;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = ParseFlags(&argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    std::fprintf(stderr,
                 "reader_bench flags: --ffr_data_dir=DIR (or $FFR_BENCH_DIR) --ffr_cold_mib=%llu --ffr_warm_mib=%llu "
                 "--ffr_sizes_kib=16,64,128,512 --ffr_prepare_only\n",
                 static_cast<unsigned long long>(flags.cold_mib), static_cast<unsigned long long>(flags.warm_mib));
    return 2;
  }
  if (flags.warm_mib > flags.cold_mib || flags.sizes_kib.empty()) Die("need sizes and warm_mib <= cold_mib");

  std::vector<std::unique_ptr<Dataset>> datasets, aligned;  // per size
  for (const uint64_t kib : flags.sizes_kib) {
    datasets.emplace_back(new Dataset(flags.data_dir, kib * kKiB, 0, flags));
    if (datasets.back()->warm_count() == 0) Die("--ffr_warm_mib holds no sample of " + std::to_string(kib) + " KiB");
    datasets.back()->Prepare();
    aligned.emplace_back(new Dataset(flags.data_dir, kib * kKiB, kSampleAlignment, flags));
    aligned.back()->Prepare();
  }
  if (flags.prepare_only) {
    // One line per size for fio: "<size in bytes> <shard>:<shard>:...".
    for (const auto& ds : datasets) {
      std::string list;
      for (const std::string& shard : ds->shards()) list += (list.empty() ? "" : ":") + shard;
      std::printf("%llu %s\n", static_cast<unsigned long long>(ds->size()), list.c_str());
    }
    return 0;
  }

  // The cpu/ cases copy from as many bytes as a warm set holds (any content: memcpy and CRC-32 do not depend on it).
  for (size_t k = 0; k < datasets.size(); ++k)
    RegisterCases(datasets[k].get(), aligned[k].get(), flags.warm_mib * kMiB);
  benchmark::AddCustomContext("ffr_data_dir", flags.data_dir);
  benchmark::AddCustomContext("ffr_cold_mib", std::to_string(flags.cold_mib));
  benchmark::AddCustomContext("ffr_warm_mib", std::to_string(flags.warm_mib));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
