// Pixel cache: batches equal to whole decodes, identity checks, damage,
// interrupted and failing builds, builders taking turns.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "dataset/packed_coco128.h"
#include "ffyolo/dataset.h"
#include "ffyolo/loader.h"
#include "ffyolo/output/disk_space.h"
#include "ffyolo/pixel_cache.h"
#include "test_dataset.h"
#include "testing/faulty_env.h"
#include "testing/small_disk.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using testing::FaultyEnv;
using testing::PackedSyntheticDataset;
using testing::WriteOp;

std::unique_ptr<Dataset> OpenDataset(const std::string& path) {
  std::unique_ptr<Dataset> d;
  const Status s = Dataset::Open(path, &d);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return d;
}

PixelCacheOptions CacheOptions(const std::string& dir, bool training = true) {
  PixelCacheOptions o;
  o.img_size = 128;  // the synthetic images (160-320 pixels) shrink: the resize rule matters
  o.training = training;
  o.directory = dir;
  o.shard_bytes = 150 << 10;  // several shards
  o.threads = 2;
  return o;
}

Status Build(const std::string& data, const PixelCacheOptions& o, PixelCacheSummary* summary = nullptr) {
  PixelCacheSummary ignored;
  return BuildPixelCache(*OpenDataset(data), o, summary ? summary : &ignored);
}

LoaderOptions TrainingLoader() {
  LoaderOptions o;
  o.img_size = 128;
  o.batch_size = 8;
  o.workers = 2;
  o.seed = 3;
  o.hyp.mixup = 0.5;
  o.hyp.mosaic = 0.7;  // mosaic and letterbox paths
  o.hyp.degrees = 5;
  o.hyp.flipud = 0.3;
  o.decode_less = false;  // the cache holds whole decodes
  return o;
}

// Every batch of `epoch`: pixels, targets and sample indices; the first error stops it.
struct Drained {
  Status status;
  std::vector<std::string> images;
  std::vector<std::vector<float>> targets;
};

Drained Drain(const std::string& data, const LoaderOptions& o, int64_t epoch) {
  Drained out;
  std::unique_ptr<Loader> loader;
  out.status = Loader::Open(*OpenDataset(data), o, &loader);
  if (out.status.ok()) out.status = loader->Start(epoch);
  const Batch* b = nullptr;
  while (out.status.ok() && (out.status = loader->Next(&b)).ok() && b) {
    out.images.emplace_back(reinterpret_cast<const char*>(b->images), b->image_bytes());
    out.targets.push_back(b->targets);
    loader->Release(b);
  }
  return out;
}

void ExpectSameBatches(const Drained& a, const Drained& b) {
  ASSERT_TRUE(a.status.ok()) << a.status.ToString();
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  ASSERT_EQ(a.images.size(), b.images.size());
  for (size_t i = 0; i < a.images.size(); ++i) {
    EXPECT_TRUE(a.images[i] == b.images[i]) << "batch " << i << " pixels differ";
    EXPECT_EQ(a.targets[i], b.targets[i]) << "batch " << i;
  }
}

// Training and validation batches from the cache equal the JPEG path's with
// whole decodes, through every reader backend, in `mode`'s augmentation.
void ExpectCacheGivesTheBatchesOfWholeDecodes(const std::string& data, int img_size,
                                              Augmentation mode = Augmentation::kYolov5) {
  testing::ScratchDir dir("pixel_cache_equal");
  for (const bool training : {true, false}) {
    PixelCacheOptions co = CacheOptions(dir / (training ? "train" : "val"), training);
    co.img_size = img_size;
    co.augmentation = mode;
    const Status s = Build(data, co);
    ASSERT_TRUE(s.ok()) << s.ToString();
    LoaderOptions lo = TrainingLoader();
    lo.img_size = img_size;
    lo.training = training;
    lo.augmentation = mode;
    if (!training) lo.split = "";  // the validation default (val2017 where there is one)
    const Drained decoded = Drain(data, lo, 1);
    lo.pixel_cache = true;
    lo.pixel_cache_dir = co.directory;
    for (const ffr::IoBackend backend : {ffr::IoBackend::kMmap, ffr::IoBackend::kAuto}) {
      lo.reader.backend = backend;
      SCOPED_TRACE(std::string(training ? "training" : "validation") + " via " + ffr::IoBackendName(backend));
      ExpectSameBatches(decoded, Drain(data, lo, 1));
    }
  }
}

TEST(PixelCacheTest, BatchesAreThoseOfWholeDecodes) {
  ExpectCacheGivesTheBatchesOfWholeDecodes(PackedSyntheticDataset(), 128);
}

TEST(PixelCacheTest, BatchesAreThoseOfWholeDecodesOnCoco128) {
  FFYOLO_REQUIRE_SHARED(coco, "data/coco128");
  testing::ScratchDir dir("pixel_cache_coco");
  const std::string data = testing::PackCoco128(dir.path());
  ASSERT_FALSE(data.empty());
  ExpectCacheGivesTheBatchesOfWholeDecodes(data, 256);
}

// Ultralytics 8's load_image (its sizes, INTER_LINEAR even when validation shrinks) in its own cache: a YOLOv5
// cache here would fail the loader's size check or differ in pixels.
TEST(PixelCacheTest, Ultralytics8BatchesAreThoseOfWholeDecodes) {
  ExpectCacheGivesTheBatchesOfWholeDecodes(PackedSyntheticDataset(), 128, Augmentation::kUltralytics8);
}

TEST(PixelCacheTest, Ultralytics8BatchesAreThoseOfWholeDecodesOnCoco128) {
  FFYOLO_REQUIRE_SHARED(coco, "data/coco128");
  testing::ScratchDir dir("pixel_cache_coco_u8");
  const std::string data = testing::PackCoco128(dir.path());
  ASSERT_FALSE(data.empty());
  ExpectCacheGivesTheBatchesOfWholeDecodes(data, 256, Augmentation::kUltralytics8);
}

// Ultralytics 8's cache='ram' takes mosaic tiles from the whole split (its Mosaic.buffer_enabled is off),
// cache='disk' from the buffer as without a cache: UsePixelCache's modes give the batches of the JPEG path
// with whole decodes and that choice of tiles.
TEST(PixelCacheTest, Ultralytics8RamModeTakesMosaicTilesFromTheWholeSplit) {
  testing::ScratchDir dir("pixel_cache_u8_modes");
  const std::string data = dir / "data.ffr";
  fs::copy(PackedSyntheticDataset(), data, fs::copy_options::recursive);
  LoaderOptions decoded = TrainingLoader();
  decoded.augmentation = Augmentation::kUltralytics8;
  decoded.hyp.mosaic = 1;
  decoded.split = "train2017";
  std::map<std::string, Drained> cached;
  for (const std::string mode : {"ram", "disk"}) {
    LoaderOptions lo = decoded;
    const Status s = UsePixelCache(*OpenDataset(data), mode, &lo);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(lo.pixel_cache_dir, "");  // the default place, one folder for both modes
    EXPECT_EQ(lo.mosaic_buffer, mode != "ram") << mode;
    cached[mode] = Drain(data, lo, 1);
  }
  EXPECT_TRUE(fs::is_regular_file(dir / "data.ffr/cache/train2017-128-u8/cache.yaml"));
  EXPECT_FALSE(fs::exists(dir / "data.ffr/cache/train2017-128"));
  ExpectSameBatches(Drain(data, decoded, 1), cached["disk"]);
  decoded.mosaic_buffer = false;
  ExpectSameBatches(Drain(data, decoded, 1), cached["ram"]);
  EXPECT_NE(cached["ram"].images, cached["disk"].images);
}

TEST(PixelCacheTest, CacheModesNameTheirReaderBackends) {
  ffr::IoBackend backend = ffr::IoBackend::kPread;
  ASSERT_TRUE(PixelCacheBackend("ram", &backend).ok());
  EXPECT_EQ(backend, ffr::IoBackend::kMmap);  // one copy per node, in the page cache
  ASSERT_TRUE(PixelCacheBackend("disk", &backend).ok());
  EXPECT_EQ(backend, ffr::IoBackend::kAuto);
  const Status s = PixelCacheBackend("gpu", &backend);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("--cache gpu: expected ram or disk"), std::string::npos) << s.ToString();
}

TEST(PixelCacheTest, DefaultPlacesAreUnderTheDatasetPerSplitSizeAndResize) {
  const std::unique_ptr<Dataset> d = OpenDataset(PackedSyntheticDataset());
  std::string dir;
  PixelCacheOptions o;
  o.img_size = 640;
  ASSERT_TRUE(PixelCacheDir(*d, o, &dir).ok());
  EXPECT_EQ(dir, d->path() + "/cache/train2017-640");
  o.training = false;
  ASSERT_TRUE(PixelCacheDir(*d, o, &dir).ok());
  EXPECT_EQ(dir, d->path() + "/cache/val2017-640-val");
  o.augmentation = Augmentation::kUltralytics8;  // one cache for training and validation: the split names it
  ASSERT_TRUE(PixelCacheDir(*d, o, &dir).ok());
  EXPECT_EQ(dir, d->path() + "/cache/val2017-640-u8");
  o.training = true;
  ASSERT_TRUE(PixelCacheDir(*d, o, &dir).ok());
  EXPECT_EQ(dir, d->path() + "/cache/train2017-640-u8");
}

TEST(PixelCacheTest, ACurrentCacheIsKeptAndAnotherDatasetsIsRebuilt) {
  testing::ScratchDir dir("pixel_cache_identity");
  const std::string a = PackedSyntheticDataset(), b = PackedSyntheticDataset(32, 8);
  const PixelCacheOptions o = CacheOptions(dir / "cache");
  PixelCacheSummary first, second, other;
  ASSERT_TRUE(Build(a, o, &first).ok());
  EXPECT_GT(first.built_shards, 1);
  EXPECT_EQ(first.samples, 48);
  ASSERT_TRUE(Build(a, o, &second).ok());
  EXPECT_TRUE(second.was_complete);
  EXPECT_EQ(second.built_shards, 0);
  EXPECT_EQ(second.bytes, first.bytes);

  // The loader of another dataset refuses the cache; building for it rebuilds it.
  LoaderOptions lo = TrainingLoader();
  lo.pixel_cache = true;
  lo.pixel_cache_dir = o.directory;
  const Drained refused = Drain(b, lo, 0);
  EXPECT_TRUE(refused.status.IsInvalidArgument()) << refused.status.ToString();
  EXPECT_NE(refused.status.message().find(o.directory), std::string::npos) << refused.status.ToString();
  std::vector<std::string> messages;
  PixelCacheOptions ob = o;
  ob.on_message = [&](const std::string& m) { messages.push_back(m); };
  ASSERT_TRUE(Build(b, ob, &other).ok());
  EXPECT_FALSE(other.was_complete);
  EXPECT_EQ(other.kept_shards, 0);
  EXPECT_EQ(other.samples, 32);
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages[0].find("rebuilding"), std::string::npos) << messages[0];
  EXPECT_TRUE(Drain(b, lo, 0).status.ok());

  // Another --img or resize rule is another cache, and refused from this folder: YOLOv5's is never read as
  // Ultralytics 8's.
  lo.augmentation = Augmentation::kUltralytics8;
  const Drained other_rule = Drain(b, lo, 0);
  EXPECT_TRUE(other_rule.status.IsInvalidArgument()) << other_rule.status.ToString();
  EXPECT_NE(other_rule.status.message().find("built for resize rule train instead of ultralytics8"), std::string::npos)
      << other_rule.status.ToString();
  lo.augmentation = Augmentation::kYolov5;
  lo.img_size = 160;
  EXPECT_TRUE(Drain(b, lo, 0).status.IsInvalidArgument());
}

TEST(PixelCacheTest, AChangedManifestMakesTheCacheStale) {
  testing::ScratchDir dir("pixel_cache_manifest");
  const std::string data = dir / "data.ffr";
  fs::copy(PackedSyntheticDataset(), data, fs::copy_options::recursive);
  const PixelCacheOptions o = CacheOptions("");  // the default place, inside the dataset
  ASSERT_TRUE(Build(data, o).ok());
  ASSERT_TRUE(fs::exists(data + "/cache/train2017-128/cache.yaml"));
  std::string manifest = testing::ReadFileToString(data + "/dataset.yaml");
  const size_t at = manifest.find("created:");
  ASSERT_NE(at, std::string::npos);
  manifest.insert(at + 9, "1");  // as a new pack of the same source would differ
  ASSERT_TRUE(testing::WriteStringToFile(data + "/dataset.yaml", manifest));

  LoaderOptions lo = TrainingLoader();
  lo.pixel_cache = true;
  const Drained refused = Drain(data, lo, 0);
  EXPECT_NE(refused.status.message().find("another dataset manifest"), std::string::npos)
      << refused.status.ToString();
  PixelCacheSummary rebuilt;
  ASSERT_TRUE(Build(data, o, &rebuilt).ok());
  EXPECT_FALSE(rebuilt.was_complete);
  EXPECT_EQ(rebuilt.kept_shards, 0);
  EXPECT_TRUE(Drain(data, lo, 0).status.ok());
}

TEST(PixelCacheTest, ATruncatedShardIsRefusedNamedAndRebuilt) {
  testing::ScratchDir dir("pixel_cache_truncated");
  const std::string data = PackedSyntheticDataset();
  const PixelCacheOptions o = CacheOptions(dir / "cache");
  ASSERT_TRUE(Build(data, o).ok());
  const std::string shard = o.directory + "/PART_00001.ffr";
  fs::resize_file(shard, fs::file_size(shard) - 100);

  LoaderOptions lo = TrainingLoader();
  lo.pixel_cache = true;
  lo.pixel_cache_dir = o.directory;
  const Drained refused = Drain(data, lo, 0);
  EXPECT_TRUE(refused.status.IsCorruption()) << refused.status.ToString();
  EXPECT_NE(refused.status.message().find("PART_00001.ffr"), std::string::npos) << refused.status.ToString();

  PixelCacheSummary repaired;
  ASSERT_TRUE(Build(data, o, &repaired).ok());
  EXPECT_EQ(repaired.built_shards, 1);
  EXPECT_GT(repaired.kept_shards, 0);
  lo.decode_less = false;
  LoaderOptions decoding = lo;
  decoding.pixel_cache = false;
  ExpectSameBatches(Drain(data, decoding, 0), Drain(data, lo, 0));
}

TEST(PixelCacheTest, ACorruptSampleStopsTrainingAndVerifyRebuildsItsShard) {
  testing::ScratchDir dir("pixel_cache_corrupt");
  const std::string data = PackedSyntheticDataset();
  const PixelCacheOptions o = CacheOptions(dir / "cache");
  ASSERT_TRUE(Build(data, o).ok());
  const std::string shard = o.directory + "/PART_00000.ffr";
  const ffr::ShardHeader header = testing::ReadShardHeader(shard);
  testing::FlipByte(shard, header.offsets[2] + header.sample_size(2) - 7);  // a pixel of sample 2

  LoaderOptions lo = TrainingLoader();
  lo.pixel_cache = true;
  lo.pixel_cache_dir = o.directory;
  lo.hyp.mosaic = 0;  // every sample alone: sample 2 is read this epoch whatever the draws
  lo.hyp.mixup = 0;
  const Drained stopped = Drain(data, lo, 0);
  EXPECT_TRUE(stopped.status.IsCorruption()) << stopped.status.ToString();
  EXPECT_NE(stopped.status.message().find("PART_00000.ffr sample 2"), std::string::npos) << stopped.status.ToString();
  EXPECT_NE(stopped.status.message().find("--verify"), std::string::npos) << stopped.status.ToString();

  PixelCacheSummary unverified, verified;
  ASSERT_TRUE(Build(data, o, &unverified).ok());
  EXPECT_TRUE(unverified.was_complete);  // only reading every byte finds a flipped pixel
  PixelCacheOptions verify = o;
  verify.verify = true;
  ASSERT_TRUE(Build(data, verify, &verified).ok());
  EXPECT_EQ(verified.built_shards, 1);
  EXPECT_GT(verified.kept_shards, 0);
  EXPECT_TRUE(Drain(data, lo, 0).status.ok());
}

// Fails each file-system call of a build in turn: no failure may leave a cache
// that opens, and building again (resuming) gives the cache of a clean build.
TEST(PixelCacheTest, AFailingDiskAtAnyCallLeavesNoCacheThatOpensAndARerunFinishesIt) {
  testing::ScratchDir dir("pixel_cache_faults");
  const std::string data = PackedSyntheticDataset();
  PixelCacheOptions clean_options = CacheOptions(dir / "clean");
  clean_options.shard_bytes = 1 << 20;  // three shards: fewer calls to fail
  FaultyEnv counting;
  PixelCacheOptions counted = clean_options;
  counted.env = &counting;
  ASSERT_TRUE(Build(data, counted).ok());
  std::vector<std::string> shards;
  for (const auto& e : fs::directory_iterator(clean_options.directory))
    if (e.path().extension() == ".ffr") shards.push_back(e.path().filename());
  ASSERT_GT(shards.size(), 1u);

  const std::unique_ptr<Dataset> d = OpenDataset(data);
  for (const WriteOp op : {WriteOp::kCreate, WriteOp::kAppend, WriteOp::kSync, WriteOp::kRename, WriteOp::kSyncDir,
                           WriteOp::kCreateDirs, WriteOp::kRemove}) {
    for (int64_t n = 0; n < counting.calls(op); ++n) {
      SCOPED_TRACE(std::string(testing::WriteOpName(op)) + " call " + std::to_string(n));
      FaultyEnv faulty;
      faulty.FailFrom(op, n);
      PixelCacheOptions o = clean_options;
      o.directory = dir / "faulty";
      o.env = &faulty;
      PixelCacheSummary summary;
      const Status failed = BuildPixelCache(*d, o, &summary);
      ASSERT_FALSE(failed.ok());
      EXPECT_NE(failed.message().find(faulty.failed_path()), std::string::npos) << failed.ToString();
      if (op == WriteOp::kAppend) {  // as a full disk fails
        EXPECT_NE(failed.message().find("the disk is full; the pixel cache needs about"), std::string::npos)
            << failed.ToString();
        EXPECT_NE(failed.message().find("run the same command again to resume"), std::string::npos)
            << failed.ToString();
      }
      const auto expect_clean_shards = [&] {
        for (const std::string& shard : shards)
          EXPECT_TRUE(testing::ReadFileToString(o.directory + "/" + shard) ==
                      testing::ReadFileToString(clean_options.directory + "/" + shard))
              << shard;
      };
      // Only a failure after cache.yaml (removing the state file, the last
      // fsync) leaves a cache that opens: it must be whole.
      std::unique_ptr<ffr::Reader> reader;
      if (OpenPixelCache(*d, o, ffr::ReaderOptions(), &reader).ok()) expect_clean_shards();

      o.env = nullptr;
      ASSERT_TRUE(BuildPixelCache(*d, o, &summary).ok());
      expect_clean_shards();
      ASSERT_TRUE(OpenPixelCache(*d, o, ffr::ReaderOptions(), &reader).ok());
      testing::RemoveTree(o.directory);
    }
  }
}

TEST(PixelCacheTest, AnInterruptedBuildResumesAfterItsLastShard) {
  testing::ScratchDir dir("pixel_cache_resume");
  const std::string data = PackedSyntheticDataset();
  FaultyEnv faulty;
  faulty.FailFrom(WriteOp::kRename, 3);  // the state file, shards 0 and 1, then shard 2 fails
  PixelCacheOptions o = CacheOptions(dir / "cache");
  o.env = &faulty;
  ASSERT_FALSE(Build(data, o).ok());
  o.env = nullptr;
  std::vector<std::string> messages;
  o.on_message = [&](const std::string& m) { messages.push_back(m); };
  PixelCacheSummary resumed;
  ASSERT_TRUE(Build(data, o, &resumed).ok());
  EXPECT_EQ(resumed.kept_shards, 2);
  EXPECT_GT(resumed.built_shards, 0);
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages[0].find("resuming"), std::string::npos) << messages[0];
}

// A stop asked for mid-build (yolo-train's SIGTERM during its setup) ends it before the next shard;
// the shards finished are kept for the next build.
TEST(PixelCacheTest, AStopRequestedMidBuildKeepsTheFinishedShards) {
  testing::ScratchDir dir("pixel_cache_stop");
  const std::string data = PackedSyntheticDataset();
  PixelCacheOptions o = CacheOptions(dir / "cache");
  int asked = 0;
  o.stop_requested = [&] { return ++asked > 2; };  // after shards 0 and 1
  const Status stopped = Build(data, o);
  EXPECT_TRUE(stopped.IsAborted()) << stopped.ToString();
  EXPECT_NE(stopped.message().find("the build stopped on request after 2 of"), std::string::npos) << stopped.message();
  o.stop_requested = nullptr;
  PixelCacheSummary resumed;
  ASSERT_TRUE(Build(data, o, &resumed).ok());
  EXPECT_EQ(resumed.kept_shards, 2);
}

// Every file of a cache directory but the lock: name -> bytes.
std::map<std::string, std::string> CacheFiles(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ffr" || e.path().filename() == "cache.yaml")
      files[e.path().filename().string()] = testing::ReadFileToString(e.path());
  return files;
}

// A build that cannot fit is refused before it decodes an image, saying what
// the cache needs (its size, known from the label index) and what is free; a
// disk that fills up mid-build (another writer) fails naming the file, the
// space needed and free. Neither leaves a cache that opens, and once there is
// room the same build finishes to the clean bytes. The disks are small tmpfs
// mounts: the test is skipped, saying why, where mounting is not allowed. The
// advice is the caller's (PixelCacheOptions::instead).
TEST(PixelCacheTest, AFullDiskSaysHowMuchSpaceIsNeededAndTheSameBuildResumes) {
  testing::ScratchDir dir("pixel_cache_full_disk");
  const std::string data = PackedSyntheticDataset();
  PixelCacheSummary clean;
  ASSERT_TRUE(Build(data, CacheOptions(dir / "clean"), &clean).ok());
  ASSERT_GT(clean.bytes, uint64_t{1} << 20);
  const std::string needs = "the pixel cache needs about " + ByteSize(clean.bytes) + " for its shards";
  const auto expect_no_cache = [&](const PixelCacheOptions& o) {
    std::unique_ptr<ffr::Reader> reader;
    const Status open = OpenPixelCache(*OpenDataset(data), o, ffr::ReaderOptions(), &reader);
    EXPECT_TRUE(open.IsNotFound()) << open.ToString();
  };
  {
    testing::SmallDisk disk(dir / "small", clean.bytes / 2);
    if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (" << disk.error() << "); needs root";
    PixelCacheOptions o = CacheOptions(dir / "small/cache");
    int reports = 0;
    o.on_progress = [&](const PixelCacheOptions::Progress&) { ++reports; };
    const Status s = Build(data, o);
    ASSERT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_EQ(s.message().rfind(o.directory + ": not enough free space: " + needs, 0), 0u) << s.message();
    EXPECT_NE(s.message().find("is free on its file system"), std::string::npos) << s.message();
    // Each caller says what its own user can do; yolo-train and a Python Loader cannot use `-o DIR`.
    EXPECT_NE(s.message().find("; free some space, then run the same command again to resume"), std::string::npos)
        << s.message();
    o.instead = "train without --cache";
    const Status advised = Build(data, o);
    EXPECT_NE(advised.message().find("; free some space or train without --cache, then run"), std::string::npos)
        << advised.message();
    EXPECT_EQ(reports, 0) << "refused only after decoding";
    for (const auto& e : fs::directory_iterator(o.directory))
      EXPECT_NE(e.path().extension(), ".ffr") << "a shard written: " << e.path();
    expect_no_cache(o);
  }
  testing::SmallDisk disk(dir / "filling", clean.bytes + (uint64_t{1} << 20));
  ASSERT_TRUE(disk.mounted()) << disk.error();
  PixelCacheOptions o = CacheOptions(dir / "filling/cache");
  const std::string filler = dir / "filling/filler";
  o.on_progress = [&](const PixelCacheOptions::Progress&) {
    if (fs::exists(filler)) return;
    std::ofstream f(filler, std::ios::binary);
    const std::string block(4096, 'x');
    while (f.write(block.data(), block.size())) {
    }
  };
  Status s = Build(data, o);
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find(o.directory + "/PART_"), std::string::npos) << "names the file: " << s.message();
  EXPECT_NE(s.message().find(std::strerror(ENOSPC)), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("the disk is full; " + needs + " in all;"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("is free on the output's file system now"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("run the same command again to resume"), std::string::npos) << s.message();
  expect_no_cache(o);

  fs::remove(filler);
  o.on_progress = nullptr;
  s = Build(data, o);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(CacheFiles(o.directory) == CacheFiles(dir / "clean")) << "the resumed cache differs from the clean one";
}

// A build killed (SIGKILL: no clean-up at all) at 30 moments spread (seeded)
// over a clean build's duration: each time the cache opens as the clean
// build byte for byte or is refused, and the next build resumes to the clean
// bytes. CI runs 10 kills (about 5 s); FFYOLO_KILL_LOOPS=30 runs the full loop
// (about 16 s).
TEST(PixelCacheTest, ABuildKilledAtRandomMomentsLeavesARefusedOrCompleteCacheThatResumes) {
  testing::ScratchDir dir("pixel_cache_killed");
  const std::string data = PackedSyntheticDataset(16, 4);
  const std::unique_ptr<Dataset> d = OpenDataset(data);
  PixelCacheOptions clean = CacheOptions(dir / "clean");
  clean.threads = 1;
  clean.shard_bytes = 100 << 10;
  PixelCacheSummary summary;
  const auto begin = std::chrono::steady_clock::now();
  ASSERT_TRUE(BuildPixelCache(*d, clean, &summary).ok());
  const double clean_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ASSERT_GT(summary.built_shards, 3);
  const auto want = CacheFiles(clean.directory);

  const char* loops_env = std::getenv("FFYOLO_KILL_LOOPS");
  const int loops = loops_env ? std::atoi(loops_env) : 10;
  std::mt19937 rng(14);
  std::uniform_real_distribution<double> moment(0, 1.1 * clean_seconds);
  PixelCacheOptions o = clean;
  o.directory = dir / "killed";
  int refused = 0, complete = 0, kept = 0;
  for (int k = 0; k < loops; ++k) {
    const double delay = moment(rng);
    SCOPED_TRACE("kill " + std::to_string(k) + " after " + std::to_string(delay) + " s");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      PixelCacheSummary s;
      _exit(BuildPixelCache(*d, o, &s).ok() ? 0 : 1);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 0);
    }
    std::unique_ptr<ffr::Reader> reader;
    const Status open = OpenPixelCache(*d, o, ffr::ReaderOptions(), &reader);
    if (open.ok()) {
      ++complete;
      EXPECT_EQ(CacheFiles(o.directory), want);
    } else {
      ++refused;
      EXPECT_TRUE(open.IsNotFound()) << open.ToString();
    }
    PixelCacheSummary resumed;
    ASSERT_TRUE(BuildPixelCache(*d, o, &resumed).ok());
    kept += resumed.kept_shards > 0 && resumed.built_shards > 0 ? 1 : 0;
    EXPECT_EQ(CacheFiles(o.directory), want);
    testing::RemoveTree(o.directory);
  }
  std::printf("clean build %.3f s; %d kills: %d left a refused cache (%d resumed after kept shards), %d a complete one\n",
              clean_seconds, loops, refused, kept, complete);
  if (loops >= 10) {
    EXPECT_GT(kept, 0) << "no kill landed between shards";
  }
}

TEST(PixelCacheTest, BuildersTakeTurnsAndOnlyOneBuilds) {
  testing::ScratchDir dir("pixel_cache_turns");
  const std::string data = PackedSyntheticDataset();
  const PixelCacheOptions o = CacheOptions(dir / "cache");
  PixelCacheSummary a, b;
  Status sa, sb;
  std::thread first([&] { sa = Build(data, o, &a); });
  std::thread second([&] { sb = Build(data, o, &b); });
  first.join();
  second.join();
  ASSERT_TRUE(sa.ok()) << sa.ToString();
  ASSERT_TRUE(sb.ok()) << sb.ToString();
  EXPECT_NE(a.was_complete, b.was_complete);
  EXPECT_EQ(a.built_shards + b.built_shards, std::max(a.built_shards, b.built_shards));
}

TEST(PixelCacheTest, ThePlaceMayNotOverlapTheDatasetOrHoldOtherFiles) {
  testing::ScratchDir dir("pixel_cache_place");
  const std::string data = dir / "data.ffr";
  fs::copy(PackedSyntheticDataset(), data, fs::copy_options::recursive);
  for (const std::string& bad : {data, data + "/", data + "/train2017", data + "/train2017/x", dir.path(),
                                 data + "/cache/../val2017"}) {
    SCOPED_TRACE(bad);
    const Status s = Build(data, CacheOptions(bad));
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  }
  EXPECT_TRUE(fs::exists(data + "/train2017/PART_00000.ffr"));
  EXPECT_FALSE(fs::exists(data + "/train2017/x"));

  const std::string other = dir / "other";
  fs::create_directories(other);
  ASSERT_TRUE(testing::WriteStringToFile(other + "/notes.txt", "mine"));
  const Status s = Build(data, CacheOptions(other));
  EXPECT_TRUE(s.IsAlreadyExists()) << s.ToString();
  EXPECT_NE(s.message().find("notes.txt"), std::string::npos) << s.ToString();
  EXPECT_EQ(testing::ReadFileToString(other + "/notes.txt"), "mine");
  EXPECT_FALSE(fs::exists(other + "/LOCK"));  // refused before the lock could be left there
}

TEST(PixelCacheTest, AMissingCacheIsRefusedWithHowToBuildIt) {
  testing::ScratchDir dir("pixel_cache_missing");
  LoaderOptions lo = TrainingLoader();
  lo.pixel_cache = true;
  lo.pixel_cache_dir = dir / "none";
  const Drained refused = Drain(PackedSyntheticDataset(), lo, 0);
  EXPECT_TRUE(refused.status.IsNotFound()) << refused.status.ToString();
  EXPECT_NE(refused.status.message().find("yolo-ffr cache"), std::string::npos) << refused.status.ToString();
}

}  // namespace
}  // namespace ffyolo
