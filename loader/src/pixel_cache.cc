#include "ffyolo/pixel_cache.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "ffr/format.h"
#include "ffr/shard_writer.h"
#include "ffyolo/cpus.h"
#include "ffyolo/label_index.h"
#include "ffyolo/letterbox.h"
#include "ffyolo/loader.h"
#include "ffyolo/output/disk_space.h"
#include "ffyolo/output/path_overlap.h"
#include "ffyolo/output/report_clock.h"
#include "ffyolo/output/shard_set_writer.h"
#include "ffyolo/record.h"
#include "ffyolo/yaml_parse.h"
#include "sample_builder.h"

namespace ffyolo {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kCacheVersion = 1;
constexpr char kCacheManifest[] = "cache.yaml";
constexpr char kStateFile[] = ".cache-state";

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08" PRIx32, v);
  return buf;
}

// load_image's rule, as cache.yaml's `resize` names it: YOLOv5's for training ("train", INTER_LINEAR) or
// validation ("val", INTER_AREA when shrinking), or Ultralytics 8's ("ultralytics8": its sizes, always
// INTER_LINEAR), so that a cache of one rule is never read as another's.
std::string ResizeRule(const PixelCacheOptions& o) {
  if (o.augmentation == Augmentation::kUltralytics8) return AugmentationName(o.augmentation);
  return o.training ? "train" : "val";
}

// What decides a cache's content. Two caches with equal identities hold the same bytes.
struct Identity {
  std::string split;
  int img_size = 0;
  std::string resize;  // ResizeRule
  int64_t samples = 0;
  std::string dataset_crc;  // of the dataset's manifest
  std::string source_crc;   // over the split's sample CRCs, in order

  bool operator==(const Identity& o) const {
    return split == o.split && img_size == o.img_size && resize == o.resize && samples == o.samples &&
           dataset_crc == o.dataset_crc && source_crc == o.source_crc;
  }
  // What differs from `o`, for messages.
  std::string Difference(const Identity& o) const {
    if (split != o.split) return "split " + o.split + " instead of " + split;
    if (img_size != o.img_size) return "--img " + std::to_string(o.img_size) + " instead of " + std::to_string(img_size);
    if (resize != o.resize) return "resize rule " + o.resize + " instead of " + resize;
    if (dataset_crc != o.dataset_crc) return "another dataset manifest (the dataset was packed again or changed)";
    return "other samples (" + std::to_string(o.samples) + ", the split now has " + std::to_string(samples) + ")";
  }
  std::string ToYaml() const {
    return "version: " + std::to_string(kCacheVersion) + "\nsplit: " + split + "\nimg_size: " +
           std::to_string(img_size) + "\nresize: " + resize + "\nsamples: " + std::to_string(samples) +
           "\ndataset_crc: \"" + dataset_crc + "\"\nsource_crc: \"" + source_crc + "\"\n";
  }
};

struct CacheShard {
  std::string file;
  int64_t samples = 0;
  uint64_t bytes = 0;
};

struct CacheManifest {
  Identity identity;
  std::vector<CacheShard> shards;
  uint64_t bytes = 0;
};

std::string CacheManifestYaml(const CacheManifest& m) {
  std::string out = m.identity.ToYaml();
  out += "bytes: " + std::to_string(m.bytes) + "\nshards:\n";
  for (const CacheShard& s : m.shards)
    out += "  - {file: " + s.file + ", samples: " + std::to_string(s.samples) + ", bytes: " + std::to_string(s.bytes) +
           "}\n";
  return out;
}

Status ParseCacheManifest(const std::string& text, const std::string& where, CacheManifest* out) {
  YAML::Node y;
  const Status parsed = ParseYaml(text, where, &y);
  if (!parsed.ok()) return Status::Corruption(parsed.message());
  try {
    const int version = y["version"].as<int>();
    if (version != kCacheVersion)
      return Status::NotSupported(where + ": pixel cache version " + std::to_string(version) + " (this build reads " +
                                  std::to_string(kCacheVersion) + ")");
    CacheManifest m;
    m.identity.split = y["split"].as<std::string>();
    m.identity.img_size = y["img_size"].as<int>();
    m.identity.resize = y["resize"].as<std::string>();
    m.identity.samples = y["samples"].as<int64_t>();
    m.identity.dataset_crc = y["dataset_crc"].as<std::string>();
    m.identity.source_crc = y["source_crc"].as<std::string>();
    m.bytes = y["bytes"].as<uint64_t>();
    for (const YAML::Node& s : y["shards"])
      m.shards.push_back({s["file"].as<std::string>(), s["samples"].as<int64_t>(), s["bytes"].as<uint64_t>()});
    int64_t total = 0;
    for (const CacheShard& s : m.shards) {
      if (s.file.find('/') != std::string::npos || !IsShardFile(s.file))
        return Status::Corruption(where + ": '" + s.file + "' is not a shard name");
      total += s.samples;
    }
    if (total != m.identity.samples)
      return Status::Corruption(where + ": its shards hold " + std::to_string(total) + " samples, not " +
                                std::to_string(m.identity.samples));
    *out = std::move(m);
    return Status::OK();
  } catch (const YAML::Exception& e) {
    return Status::Corruption(where + ": not a pixel cache manifest: " + e.what());
  }
}

// Everything a cache is built from.
struct CacheInputs {
  std::string split;
  std::unique_ptr<ffr::Reader> source;
  Identity identity;
  bool exif_applied = false;  // Dataset::ExifApplied: cached as viewed
};

Status OpenInputs(const Dataset& dataset, const PixelCacheOptions& opt, CacheInputs* in) {
  if (opt.img_size <= 0) return Status::InvalidArgument("--img must be positive");
  in->split = opt.split;
  FFR_RETURN_IF_ERROR(dataset.ResolveSplit(opt.training, &in->split));
  ffr::ReaderOptions ro;
  ro.env = opt.env;
  FFR_RETURN_IF_ERROR(dataset.OpenReader(in->split, ro, &in->source));
  FFR_RETURN_IF_ERROR(dataset.ExifApplied(in->split, &in->exif_applied));
  const int64_t n = in->source->size();
  uint32_t source_crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t c = in->source->sample_crc(i);
    source_crc = ffr::Crc32Extend(source_crc, &c, sizeof(c));
  }
  in->identity = {in->split, opt.img_size, ResizeRule(opt), n, dataset.ManifestCrc(), Hex32(source_crc)};
  return Status::OK();
}

// The size of each sample's cached record, which plans the shards: it follows
// from the label index, so no image is decoded.
std::vector<uint64_t> RecordSizes(const LabelIndex& index, int img_size, Augmentation mode) {
  std::vector<uint64_t> sizes;
  sizes.reserve(index.size());
  for (size_t i = 0; i < index.size(); ++i) {
    const cv::Size size = LoadResizeSize(index.width(i), index.height(i), img_size, mode);
    sizes.push_back(kRecordHeaderSize + index.file_name(i).size() + kRecordBoxSize * index.box_count(i) +
                    uint64_t{3} * size.width * size.height);
  }
  return sizes;
}

// What shards of those records, cut at `starts`, take on disk.
uint64_t ShardSetBytes(const std::vector<uint64_t>& records, const std::vector<size_t>& starts) {
  uint64_t bytes = (starts.size() - 1) * ffr::kShardPrefixSize;
  for (const uint64_t record : records) bytes += record + ffr::kShardEntrySize;
  return bytes;
}

// The output must be the dataset's cache folder or lie outside the dataset, so
// that removing what a cache build leaves behind can never touch the dataset.
Status CheckPlace(const Dataset& dataset, const std::string& dir) {
  if (PlaceWithin(dataset.path(), dir))
    return Status::InvalidArgument(dir + ": the pixel cache cannot be the dataset " + dataset.path() +
                                   " or a folder that holds it");
  if (PlaceWithin(dir, dataset.path()) && !PlaceWithin(dir, dataset.path() + "/cache"))
    return Status::InvalidArgument(dir + ": a pixel cache inside the dataset " + dataset.path() +
                                   " belongs under its cache/ folder");
  return Status::OK();
}

// OK when `path` is a complete shard of `samples` samples and, when `bytes`
// is known (> 0), of that size; with `verify`, every sample matches its CRC.
Status CheckShard(const std::string& path, int64_t samples, uint64_t bytes, bool verify, ffr::Env* env) {
  if (bytes > 0) {
    uint64_t size = 0;
    FFR_RETURN_IF_ERROR(env->GetFileSize(path, &size));
    if (size != bytes)
      return Status::Corruption(path + ": " + std::to_string(size) + " bytes where the pixel cache's manifest says " +
                                std::to_string(bytes) + " (truncated?)");
  }
  ffr::ReaderOptions ro;
  ro.env = env;
  ro.backend = ffr::IoBackend::kPread;
  std::unique_ptr<ffr::Reader> reader;
  FFR_RETURN_IF_ERROR(ffr::Reader::Open(path, ro, &reader));
  if (reader->size() != samples)
    return Status::Corruption(path + ": holds " + std::to_string(reader->size()) + " samples, not " +
                              std::to_string(samples));
  if (!verify) return Status::OK();
  std::vector<int64_t> all(samples);
  for (int64_t i = 0; i < samples; ++i) all[i] = i;
  return reader->ReadStream(all.data(), all.size(), [](size_t, const ffr::Sample&) { return Status::OK(); });
}

// A folder holding anything but a pixel cache's files is someone else's.
Status RefuseForeignFolder(ffr::Env* env, const ShardSetWriter& writer) {
  const std::string& dir = writer.dir();
  if (!env->IsDirectory(dir)) return Status::OK();
  std::vector<std::string> children;
  FFR_RETURN_IF_ERROR(env->GetChildren(dir, &children));
  for (const std::string& name : children)
    if (!writer.IsOwnFile(name) && !IsShardFile(name))
      return Status::AlreadyExists(dir + ": holds '" + name + "' and is not a pixel cache; choose another folder");
  return Status::OK();
}

class CacheBuilder {
 public:
  CacheBuilder(const Dataset& dataset, const PixelCacheOptions& opt, ShardSetWriter* writer, CacheInputs* in,
               PixelCacheSummary* summary)
      : dataset_(dataset), opt_(opt), writer_(*writer), dir_(writer->dir()), in_(in), summary_(summary) {}

  Status Run();

 private:
  Status Steps();
  void Message(const std::string& m) const {
    if (opt_.on_message) opt_.on_message(m);
  }
  void Report(bool force);
  // What is in the folder: true when it is a complete cache of in_->identity.
  Status Inspect(bool* complete, bool* keep_shards);
  Status RemoveShards();
  Status BuildShard(const std::string& path, int64_t begin, int64_t end, uint64_t* bytes);
  Status WriteShard(const std::string& path, const std::vector<std::string>& records, uint64_t* bytes);

  const Dataset& dataset_;
  const PixelCacheOptions& opt_;
  ShardSetWriter& writer_;  // holds the folder's LOCK
  const std::string dir_;
  CacheInputs* in_;
  PixelCacheSummary* summary_;
  SpaceNeeded space_;  // total: 0 until the shards are planned
  std::atomic<int64_t> done_{0};
  std::atomic<uint64_t> bytes_{0};
  ReportClock report_clock_;
};

void CacheBuilder::Report(bool force) {
  if (opt_.on_progress && report_clock_.Due(force))
    opt_.on_progress({done_.load(), in_->identity.samples, bytes_.load()});
}

Status CacheBuilder::Inspect(bool* complete, bool* keep_shards) {
  ffr::Env* env = opt_.env;
  *complete = *keep_shards = false;
  FFR_RETURN_IF_ERROR(RefuseForeignFolder(env, writer_));
  const std::string manifest_path = writer_.commit_path();
  std::string text;
  if (ffr::ReadFileToString(env, manifest_path, &text).ok()) {
    CacheManifest m;
    Status s = ParseCacheManifest(text, manifest_path, &m);
    if (s.ok() && !(m.identity == in_->identity)) {
      Message(dir_ + " was built for " + in_->identity.Difference(m.identity) + ": rebuilding it");
      return env->RemoveFile(manifest_path);
    }
    if (!s.ok()) {
      Message("damaged pixel cache: " + s.message() + "; rebuilding it");
      return env->RemoveFile(manifest_path);
    }
    // Damaged shards go first, so that the build resumed below makes them again.
    std::vector<std::string> damaged;
    for (const CacheShard& shard : m.shards) {
      const std::string path = dir_ + "/" + shard.file;
      const Status check = CheckShard(path, shard.samples, shard.bytes, opt_.verify, env);
      if (check.ok()) continue;
      Message("damaged pixel cache: " + check.message() + "; rebuilding that shard");
      damaged.push_back(path);
    }
    if (damaged.empty()) {
      *complete = true;
      summary_->bytes = m.bytes;
      return Status::OK();
    }
    *keep_shards = true;
    // From here on it is an unfinished build, which a crash leaves resumable.
    FFR_RETURN_IF_ERROR(writer_.Begin(in_->identity.ToYaml()));
    FFR_RETURN_IF_ERROR(env->RemoveFile(manifest_path));
    for (const std::string& path : damaged) FFR_RETURN_IF_ERROR(env->RemoveFile(path));
    return Status::OK();
  }
  switch (writer_.ReadState(in_->identity.ToYaml())) {
    case ShardSetWriter::Found::kSameWork:
      *keep_shards = true;
      Message("resuming the unfinished pixel cache in " + dir_);
      break;
    case ShardSetWriter::Found::kOtherWork:
      Message(dir_ + " holds an unfinished pixel cache of other settings: starting over");
      break;
    case ShardSetWriter::Found::kNoState:
      break;
  }
  return Status::OK();
}

Status CacheBuilder::RemoveShards() {
  std::vector<std::string> children;
  FFR_RETURN_IF_ERROR(opt_.env->GetChildren(dir_, &children));
  for (const std::string& name : children)
    if (IsShardFile(name)) FFR_RETURN_IF_ERROR(opt_.env->RemoveFile(dir_ + "/" + name));
  return Status::OK();
}

Status CacheBuilder::WriteShard(const std::string& path, const std::vector<std::string>& records, uint64_t* bytes) {
  std::unique_ptr<ffr::ShardWriter> w;
  FFR_RETURN_IF_ERROR(ffr::ShardWriter::Create(path, static_cast<int64_t>(records.size()), opt_.env, &w));
  for (const std::string& r : records) {
    FFR_RETURN_IF_ERROR(w->Append(r.data(), r.size()));
    bytes_ += r.size();
  }
  FFR_RETURN_IF_ERROR(w->Finish());
  *bytes = w->bytes();
  return Status::OK();
}

// Decodes samples [begin, end) and writes them as the shard at `path`.
Status CacheBuilder::BuildShard(const std::string& path, int64_t begin, int64_t end, uint64_t* bytes) {
  std::vector<std::string> records(end - begin);
  std::vector<SampleError> errors(end - begin);
  SampleContext context;
  context.reader = in_->source.get();
  context.split = in_->split;
  context.img_size = opt_.img_size;
  context.augmentation = opt_.augmentation;
  context.decode_less = false;  // the whole image, as load_image decodes it
  context.exif_applied = in_->exif_applied;
  const int threads = std::max(1, std::min<int>(opt_.threads > 0 ? opt_.threads : UsableCpus(),
                                                 static_cast<int>(end - begin)));
  std::atomic<int64_t> next{begin};
  std::atomic<bool> failed{false};
  std::atomic<int> running{threads};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      SampleBuilder builder(context);
      for (int64_t i; !failed.load() && (i = next.fetch_add(1)) < end;) {
        cv::Mat image;
        const RecordView* record = nullptr;
        SampleError& error = errors[i - begin];
        if (!builder.LoadImage(i, opt_.training, &image, &record, &error)) {
          failed = true;
          break;
        }
        RecordInfo info = record->info();
        info.encoding = ImageEncoding::kBgr;
        std::string pixels(image.total() * 3, '\0');
        for (int y = 0; y < image.rows; ++y)
          std::copy_n(image.ptr<char>(y), image.cols * 3, pixels.data() + static_cast<size_t>(y) * image.cols * 3);
        error.status = EncodeRecord(info, pixels, &records[i - begin]);
        if (!error.status.ok()) failed = true;
        ++done_;
      }
      --running;
    });
  }
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Report(false);
  }
  for (std::thread& t : pool) t.join();
  for (const SampleError& e : errors)  // the first bad sample in order, whichever thread met it
    if (!e.status.ok()) return e.status;
  return WriteShard(path, records, bytes);
}

Status CacheBuilder::Run() {
  space_.output = dir_;
  space_.writer = "the pixel cache";
  space_.amount = "about";
  space_.what = " for its shards";
  space_.why = " (" + std::to_string(in_->identity.samples) + " images of " + in_->split + " as pixels at --img " +
               std::to_string(opt_.img_size) + ")";
  space_.move = opt_.instead;
  return WithSpaceNeeded(Steps(), space_);
}

Status CacheBuilder::Steps() {
  ffr::Env* env = opt_.env;
  bool complete = false, keep_shards = false;
  FFR_RETURN_IF_ERROR(Inspect(&complete, &keep_shards));
  summary_->samples = in_->identity.samples;
  if (complete) {
    summary_->was_complete = true;
    return Status::OK();
  }
  // Only a build reads the label index: the records' sizes plan the shards.
  LabelIndex index;
  FFR_RETURN_IF_ERROR(dataset_.LoadLabelIndex(in_->split, &index));
  if (static_cast<int64_t>(index.size()) != in_->identity.samples)
    return Status::Corruption(dataset_.split_dir(in_->split) + ": the label index lists " +
                              std::to_string(index.size()) + " samples, the shards hold " +
                              std::to_string(in_->identity.samples));
  const std::vector<uint64_t> records = RecordSizes(index, opt_.img_size, opt_.augmentation);
  const std::vector<size_t> starts = PlanShards(records, opt_.shard_bytes);
  const size_t shard_count = starts.size() - 1;
  space_.total = ShardSetBytes(records, starts);
  if (!keep_shards) FFR_RETURN_IF_ERROR(RemoveShards());
  // Refused before the first decode when it cannot fit, rather than after filling the disk.
  if (keep_shards) space_.kept = writer_.ShardBytes("", shard_count);
  FFR_RETURN_IF_ERROR(CheckFreeSpace(space_));
  FFR_RETURN_IF_ERROR(writer_.Begin(in_->identity.ToYaml()));

  CacheManifest m;
  m.identity = in_->identity;
  for (size_t k = 0; k < shard_count; ++k) {
    if (opt_.stop_requested && opt_.stop_requested())
      return Status::Aborted(dir_ + ": the build stopped on request after " + std::to_string(k) + " of " +
                             std::to_string(shard_count) + " shards; the next one resumes after them");
    const int64_t begin = static_cast<int64_t>(starts[k]), end = static_cast<int64_t>(starts[k + 1]);
    CacheShard shard{ShardFileName(k), end - begin, 0};
    const auto keep = [&](const std::string& path, bool* kept) {
      *kept = CheckShard(path, shard.samples, /*bytes=*/0, opt_.verify, env).ok();
      if (!*kept) return Status::OK();
      FFR_RETURN_IF_ERROR(env->GetFileSize(path, &shard.bytes));
      done_ += shard.samples;
      bytes_ += shard.bytes;
      ++summary_->kept_shards;
      return Status::OK();
    };
    const auto build = [&](const std::string& path) {
      FFR_RETURN_IF_ERROR(BuildShard(path, begin, end, &shard.bytes));
      ++summary_->built_shards;
      return Status::OK();
    };
    FFR_RETURN_IF_ERROR(writer_.WriteShard("", k, keep, build));
    m.bytes += shard.bytes;
    m.shards.push_back(shard);
    Report(false);
  }
  Report(true);
  FFR_RETURN_IF_ERROR(writer_.Commit(CacheManifestYaml(m)));
  summary_->bytes = m.bytes;
  return Status::OK();
}

}  // namespace

PixelCacheOptions PixelCacheFor(const LoaderOptions& options) {
  PixelCacheOptions po;
  po.split = options.split;
  po.img_size = options.img_size;
  po.training = options.training;
  po.augmentation = options.augmentation;
  po.directory = options.pixel_cache_dir;
  return po;
}

Status PixelCacheDir(const Dataset& dataset, const PixelCacheOptions& options, std::string* dir) {
  if (!options.directory.empty()) {
    *dir = options.directory;
    while (dir->size() > 1 && dir->back() == '/') dir->pop_back();
    return Status::OK();
  }
  std::string split = options.split;
  FFR_RETURN_IF_ERROR(dataset.ResolveSplit(options.training, &split));
  *dir = dataset.path() + "/cache/" + split + "-" + std::to_string(options.img_size) +
         (options.augmentation == Augmentation::kUltralytics8 ? "-u8" : options.training ? "" : "-val");
  return Status::OK();
}

Status BuildPixelCache(const Dataset& dataset, const PixelCacheOptions& options, PixelCacheSummary* summary) {
  const auto start = Clock::now();
  PixelCacheOptions opt = options;
  if (opt.env == nullptr) opt.env = ffr::Env::Default();
  *summary = PixelCacheSummary();
  CacheInputs in;
  FFR_RETURN_IF_ERROR(OpenInputs(dataset, opt, &in));
  opt.split = in.split;
  std::string dir;
  FFR_RETURN_IF_ERROR(PixelCacheDir(dataset, opt, &dir));
  FFR_RETURN_IF_ERROR(CheckPlace(dataset, dir));
  summary->directory = dir;
  summary->split = in.split;
  ShardSetWriter writer(opt.env, dir, kStateFile, kCacheManifest);
  // Checked again under the lock (Inspect): here, so that no LOCK is left in someone else's folder.
  FFR_RETURN_IF_ERROR(RefuseForeignFolder(opt.env, writer));
  FFR_RETURN_IF_ERROR(writer.Lock(nullptr));
  FFR_RETURN_IF_ERROR(CacheBuilder(dataset, opt, &writer, &in, summary).Run());
  summary->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return Status::OK();
}

Status PixelCacheBackend(const std::string& mode, ffr::IoBackend* backend) {
  if (mode == "ram")
    *backend = ffr::IoBackend::kMmap;
  else if (mode == "disk")
    *backend = ffr::IoBackend::kAuto;
  else
    return Status::InvalidArgument("--cache " + mode + ": expected ram or disk");
  return Status::OK();
}

Status UsePixelCache(const Dataset& dataset, const std::string& mode, LoaderOptions* options,
                     const std::string& instead, PixelCacheSummary* summary) {
  FFR_RETURN_IF_ERROR(PixelCacheBackend(mode, &options->reader.backend));
  options->mosaic_buffer = mode != "ram";
  if (options->split.empty()) FFR_RETURN_IF_ERROR(dataset.ResolveSplit(options->training, &options->split));
  options->pixel_cache = true;
  PixelCacheOptions po = PixelCacheFor(*options);
  po.instead = instead;
  PixelCacheSummary unused;
  return BuildPixelCache(dataset, po, summary ? summary : &unused);
}

Status OpenPixelCache(const Dataset& dataset, const PixelCacheOptions& options,
                      const ffr::ReaderOptions& reader_options, std::unique_ptr<ffr::Reader>* out) {
  PixelCacheOptions opt = options;
  if (opt.env == nullptr) opt.env = reader_options.env ? reader_options.env : ffr::Env::Default();
  CacheInputs in;
  FFR_RETURN_IF_ERROR(OpenInputs(dataset, opt, &in));
  opt.split = in.split;
  std::string dir;
  FFR_RETURN_IF_ERROR(PixelCacheDir(dataset, opt, &dir));
  const std::string manifest_path = dir + "/" + kCacheManifest;
  std::string text;
  if (!ffr::ReadFileToString(opt.env, manifest_path, &text).ok())
    return Status::NotFound(dir + ": no complete pixel cache there (build it with `yolo-ffr cache " + dataset.path() +
                            " --img " + std::to_string(opt.img_size) + "` or train with --cache)");
  CacheManifest m;
  FFR_RETURN_IF_ERROR(ParseCacheManifest(text, manifest_path, &m));
  if (!(m.identity == in.identity))
    return Status::InvalidArgument(dir + ": the pixel cache was built for " + in.identity.Difference(m.identity) +
                                   "; build it again");
  std::vector<std::string> paths;
  for (const CacheShard& s : m.shards) {
    paths.push_back(dir + "/" + s.file);
    const Status damaged = CheckShard(paths.back(), s.samples, s.bytes, /*verify=*/false, opt.env);
    if (!damaged.ok())
      return Status::Corruption(damaged.message() + "; `yolo-ffr cache` rebuilds what is damaged");
  }
  std::unique_ptr<ffr::Reader> reader;
  FFR_RETURN_IF_ERROR(ffr::Reader::Open(paths, reader_options, &reader));
  if (reader->size() != in.identity.samples)
    return Status::Corruption(dir + ": the shards hold " + std::to_string(reader->size()) + " samples, not " +
                              std::to_string(in.identity.samples));
  *out = std::move(reader);
  return Status::OK();
}

}  // namespace ffyolo
