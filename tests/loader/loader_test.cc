// Loader pipeline: determinism across threads, exact resume, validation
// batches, corrupt samples, stopping mid-epoch.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <set>
#include <thread>
#include <opencv2/core.hpp>

#include "ffr/format.h"
#include "ffyolo/batch_digest.h"
#include "ffyolo/batch_grid.h"
#include "ffyolo/dataset.h"
#include "ffyolo/decoded_image_store.h"
#include "ffyolo/image_decoder.h"
#include "ffyolo/letterbox.h"
#include "ffyolo/batch_digest.h"
#include "ffyolo/loader.h"
#include "ffyolo/pixel_cache.h"
#include "ffyolo/rect_batches.h"
#include "ffyolo/sampler.h"
#include "test_dataset.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

using testing::PackedSyntheticDataset;

struct Snapshot {
  int64_t index;
  int size, height, width;
  std::string images;
  std::vector<float> targets;
  std::vector<int64_t> dataset_indices;
};

LoaderOptions TrainOptions(int workers) {
  LoaderOptions o;
  o.training = true;
  o.img_size = 128;
  o.batch_size = 8;
  o.workers = workers;
  o.prefetch = 3;
  o.seed = 5;
  o.hyp.mixup = 0.5;   // exercise every branch
  o.hyp.mosaic = 0.7;  // both the mosaic and the letterbox path
  o.hyp.degrees = 5;
  o.hyp.flipud = 0.3;
  return o;
}

std::unique_ptr<Loader> OpenLoader(const LoaderOptions& o, const std::string& path = PackedSyntheticDataset()) {
  std::unique_ptr<Dataset> d;
  EXPECT_TRUE(Dataset::Open(path, &d).ok());
  std::unique_ptr<Loader> loader;
  Status s = Loader::Open(*d, o, &loader);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return loader;
}

std::vector<Snapshot> Drain(Loader* loader, int64_t epoch, int64_t first = 0, int64_t limit = 1 << 30) {
  std::vector<Snapshot> out;
  EXPECT_TRUE(loader->Start(epoch, first).ok());
  const Batch* b = nullptr;
  while (static_cast<int64_t>(out.size()) < limit) {
    Status s = loader->Next(&b);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!b) break;
    Snapshot snap{b->index, b->size, b->height, b->width,
                  std::string(reinterpret_cast<const char*>(b->images), b->image_bytes()), b->targets, {}};
    for (int k = 0; k < b->size; ++k) snap.dataset_indices.push_back(b->meta[k].dataset_index);
    out.push_back(std::move(snap));
    loader->Release(b);
  }
  return out;
}

void ExpectSame(const std::vector<Snapshot>& a, const std::vector<Snapshot>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].dataset_indices, b[i].dataset_indices) << "batch " << a[i].index;
    EXPECT_TRUE(a[i].images == b[i].images) << "batch " << a[i].index << " images differ";
    EXPECT_EQ(a[i].targets, b[i].targets) << "batch " << a[i].index;
  }
}

TEST(LoaderTest, TrainingBatchesHaveTheRightShape) {
  auto loader = OpenLoader(TrainOptions(2));
  ASSERT_TRUE(loader);
  EXPECT_EQ(loader->split(), "train2017");
  EXPECT_EQ(loader->batches_per_epoch(), 6);  // 48 samples / 8
  const auto batches = Drain(loader.get(), 0);
  ASSERT_EQ(batches.size(), 6u);
  size_t targets = 0;
  for (const Snapshot& s : batches) {
    EXPECT_EQ(s.size, 8);
    EXPECT_EQ(s.height, 128);
    EXPECT_EQ(s.width, 128);
    ASSERT_EQ(s.targets.size() % 6, 0u);
    for (size_t t = 0; t < s.targets.size(); t += 6) {
      EXPECT_GE(s.targets[t], 0);
      EXPECT_LT(s.targets[t], 8);  // image index in batch
      for (int c = 2; c < 6; ++c) {
        EXPECT_GE(s.targets[t + c], 0.f);
        EXPECT_LE(s.targets[t + c], 1.f);
      }
    }
    targets += s.targets.size() / 6;
  }
  EXPECT_GT(targets, 48u);  // mosaics of objects-rich synthetic images
}

TEST(LoaderTest, SameBatchesWhateverTheThreadCount) {
  auto one = OpenLoader(TrainOptions(1));
  auto three = OpenLoader(TrainOptions(3));
  ExpectSame(Drain(one.get(), 1), Drain(three.get(), 1));
}

TEST(LoaderTest, RegionDecodesGiveTheBatchesOfWholeDecodes) {
  // At 256 the synthetic images (160 to 320 pixels) are resized both ways but
  // never shrunk 2x, so decode_less changes only the mosaic tiles' region
  // decodes, and the batches must not change at all.
  LoaderOptions o = TrainOptions(2);
  o.img_size = 256;
  o.hyp.mosaic = 1;
  o.hyp.scale = 0.9;  // zoom in and out far: regions from slivers to whole tiles
  auto regions = OpenLoader(o);
  o.decode_less = false;
  auto whole = OpenLoader(o);
  ExpectSame(Drain(regions.get(), 0), Drain(whole.get(), 0));
}

TEST(LoaderTest, EpochsDiffer) {
  auto loader = OpenLoader(TrainOptions(2));
  const auto e0 = Drain(loader.get(), 0, 0, 1);
  const auto e1 = Drain(loader.get(), 1, 0, 1);
  EXPECT_NE(e0[0].dataset_indices, e1[0].dataset_indices);
  EXPECT_FALSE(e0[0].images == e1[0].images);
}

TEST(LoaderTest, ResumeGivesTheBatchesItWouldHaveGiven) {
  auto loader = OpenLoader(TrainOptions(2));
  const auto full = Drain(loader.get(), 2);
  auto fresh = OpenLoader(TrainOptions(3));
  const auto resumed = Drain(fresh.get(), 2, 3);
  ExpectSame(std::vector<Snapshot>(full.begin() + 3, full.end()), resumed);
}

TEST(LoaderTest, RanksReadDisjointShards) {
  LoaderOptions o = TrainOptions(2);
  o.world_size = 2;
  std::set<int64_t> seen;
  int64_t total = 0;
  for (int r = 0; r < 2; ++r) {
    o.rank = r;
    auto loader = OpenLoader(o);
    EXPECT_EQ(loader->samples_per_epoch(), 24);
    for (const Snapshot& s : Drain(loader.get(), 0)) {
      for (int64_t i : s.dataset_indices) seen.insert(i);
      total += s.size;
    }
  }
  EXPECT_EQ(total, 48);
  EXPECT_EQ(seen.size(), 48u);
}

TEST(LoaderTest, DropLastDropsThePartialBatch) {
  LoaderOptions o = TrainOptions(2);
  o.batch_size = 10;
  auto keep = OpenLoader(o);
  EXPECT_EQ(keep->batches_per_epoch(), 5);
  const auto batches = Drain(keep.get(), 0);
  EXPECT_EQ(batches.back().size, 8);
  o.drop_last = true;
  auto drop = OpenLoader(o);
  EXPECT_EQ(drop->batches_per_epoch(), 4);
  EXPECT_EQ(Drain(drop.get(), 0).size(), 4u);
}

TEST(LoaderTest, ValidationUsesRectBatchesAndRecordsTheLetterbox) {
  LoaderOptions o;
  o.training = false;
  o.img_size = 128;
  o.batch_size = 4;
  o.workers = 2;
  const std::string path = PackedSyntheticDataset();
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(path, &d).ok());
  LabelIndex index;
  ASSERT_TRUE(d->LoadLabelIndex("val2017", &index).ok());
  std::vector<int> w, h;
  for (size_t i = 0; i < index.size(); ++i) {
    w.push_back(static_cast<int>(index.width(i)));
    h.push_back(static_cast<int>(index.height(i)));
  }
  const RectBatches plan = PlanRectBatches(w, h, 4, 128, 32, 0.5);
  auto loader = OpenLoader(o);
  EXPECT_EQ(loader->split(), "val2017");
  std::unique_ptr<Loader> keep;
  ASSERT_TRUE(loader->Start(0).ok());
  const Batch* b = nullptr;
  int64_t k = 0;
  while (loader->Next(&b).ok() && b) {
    EXPECT_EQ(b->height, plan.shapes[b->index].first);
    EXPECT_EQ(b->width, plan.shapes[b->index].second);
    for (int i = 0; i < b->size; ++i) {
      const ImageMeta& m = b->meta[i];
      EXPECT_EQ(m.dataset_index, plan.order[k++]);
      EXPECT_EQ(m.orig_width, w[m.dataset_index]);
      const LetterboxPlan lb = PlanLetterbox(LoadResizeSize(m.orig_width, m.orig_height, 128).width,
                                             LoadResizeSize(m.orig_width, m.orig_height, 128).height, b->width,
                                             b->height, false);
      EXPECT_DOUBLE_EQ(m.pad_w, lb.dw);
      EXPECT_DOUBLE_EQ(m.pad_h, lb.dh);
      EXPECT_FALSE(m.mosaic);
      // Letterbox padding is grey 114 in every channel plane.
      if (lb.top > 0) {
        EXPECT_EQ(b->images[static_cast<size_t>(i) * 3 * b->height * b->width], 114);
      }
    }
    loader->Release(b);
  }
  EXPECT_EQ(k, 16);
}

// Validation with world_size > 1 read the whole split on every rank: each rank now reads every
// world_size-th batch of the one-rank loader, byte for byte, and together they read every sample once.
TEST(LoaderTest, ValidationRanksReadTheirShareOfTheBatches) {
  LoaderOptions o;
  o.training = false;
  o.img_size = 128;
  o.batch_size = 3;
  o.workers = 2;
  const std::vector<Snapshot> whole = Drain(OpenLoader(o).get(), 0);
  ASSERT_EQ(whole.size(), 6u);  // 16 samples: the last batch has one
  constexpr int kRanks = 4;
  o.world_size = kRanks;
  std::multiset<int64_t> seen;
  for (int r = 0; r < kRanks; ++r) {
    o.rank = r;
    auto loader = OpenLoader(o);
    const std::vector<Snapshot> mine = Drain(loader.get(), 0);
    std::vector<Snapshot> expected;
    for (size_t b = static_cast<size_t>(r); b < whole.size(); b += kRanks) {
      expected.push_back(whole[b]);
      expected.back().index = static_cast<int64_t>(expected.size()) - 1;  // numbered in the rank's epoch
    }
    EXPECT_EQ(loader->batches_per_epoch(), static_cast<int64_t>(expected.size())) << "rank " << r;
    ExpectSame(expected, mine);
    for (const Snapshot& s : mine) seen.insert(s.dataset_indices.begin(), s.dataset_indices.end());
  }
  EXPECT_EQ(seen.size(), 16u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 16u);
}

TEST(LoaderTest, CorruptSamplesAreReportedCountedAndReplaced) {
  const std::string src = PackedSyntheticDataset();
  testing::ScratchDir dir("corrupt");
  const std::string copy = dir / "data.ffr";
  std::filesystem::copy(src, copy, std::filesystem::copy_options::recursive);
  // Damage sample 3 of the first shard: its CRC no longer matches.
  const std::string shard = copy + "/train2017/PART_00000.ffr";
  std::string bytes = testing::ReadFileToString(shard);
  std::unique_ptr<ffr::Reader> r;
  ASSERT_TRUE(ffr::Reader::Open(shard, ffr::ReaderOptions(), &r).ok());
  ffr::ShardHeader header;
  const uint64_t at = 12 + 12 * r->size();
  ASSERT_TRUE(ffr::ParseShardHeader(shard, reinterpret_cast<const uint8_t*>(bytes.data()), at, bytes.size(), true,
                                    &header)
                  .ok());
  bytes[header.offsets[3] + header.sample_size(3) - 10] ^= 0x5a;
  ASSERT_TRUE(testing::WriteStringToFile(shard, bytes));

  LoaderOptions o = TrainOptions(2);
  std::vector<std::string> reports;
  o.on_bad_sample = [&](const std::string& m) { reports.push_back(m); };
  auto loader = OpenLoader(o, copy);
  const auto batches = Drain(loader.get(), 0);
  EXPECT_EQ(batches.size(), 6u);
  EXPECT_GT(loader->bad_samples(), 0);
  ASSERT_EQ(reports.size(), 1u);  // reported once, however often it was drawn
  EXPECT_NE(reports[0].find("PART_00000.ffr sample 3"), std::string::npos) << reports[0];
  EXPECT_NE(reports[0].find("checksum"), std::string::npos) << reports[0];
}

TEST(LoaderTest, ValidationStopsAtACorruptSampleInsteadOfReplacingIt) {
  testing::ScratchDir dir("corrupt_val");
  const std::string copy = dir / "data.ffr";
  std::filesystem::copy(PackedSyntheticDataset(), copy, std::filesystem::copy_options::recursive);
  const std::string shard = copy + "/val2017/PART_00000.ffr";
  std::string bytes = testing::ReadFileToString(shard);
  std::unique_ptr<ffr::Reader> r;
  ASSERT_TRUE(ffr::Reader::Open(shard, ffr::ReaderOptions(), &r).ok());
  ffr::ShardHeader header;
  ASSERT_TRUE(ffr::ParseShardHeader(shard, reinterpret_cast<const uint8_t*>(bytes.data()), 12 + 12 * r->size(),
                                    bytes.size(), true, &header)
                  .ok());
  bytes[header.offsets[1] + header.sample_size(1) - 10] ^= 0x5a;
  ASSERT_TRUE(testing::WriteStringToFile(shard, bytes));

  LoaderOptions o;
  o.training = false;
  o.img_size = 128;
  o.batch_size = 4;
  o.workers = 2;
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(copy, &d).ok());
  std::unique_ptr<Loader> loader;
  ASSERT_TRUE(Loader::Open(*d, o, &loader).ok());
  ASSERT_TRUE(loader->Start(0).ok());
  Status failed;
  for (const Batch* b = nullptr; failed.ok();) {
    failed = loader->Next(&b);
    if (!b) break;
    EXPECT_EQ(b->replaced_samples, 0);
    loader->Release(b);
  }
  EXPECT_TRUE(failed.IsCorruption()) << failed.ToString();
  EXPECT_NE(failed.message().find("PART_00000.ffr sample 1"), std::string::npos) << failed.ToString();
  EXPECT_NE(failed.message().find("checksum"), std::string::npos) << failed.ToString();
  // The error ends the epoch and stays: a caller asking again (more often than the ring has batches, whose
  // failed one is never released) gets it again rather than a wait, until Start.
  for (int k = 0; k < 2 * o.prefetch; ++k) {
    const Batch* b = nullptr;
    EXPECT_EQ(loader->Next(&b).ToString(), failed.ToString());
    EXPECT_EQ(b, nullptr);
  }
  ASSERT_TRUE(loader->Start(0, loader->batches_per_epoch()).ok());  // a Start clears it
  const Batch* past_the_end = nullptr;
  EXPECT_TRUE(loader->Next(&past_the_end).ok());
  EXPECT_EQ(past_the_end, nullptr);
}

TEST(LoaderTest, StopsCleanlyMidEpoch) {
  for (int workers : {1, 4}) {
    auto loader = OpenLoader(TrainOptions(workers));
    ASSERT_TRUE(loader->Start(0).ok());
    const Batch* b = nullptr;
    ASSERT_TRUE(loader->Next(&b).ok());
    ASSERT_NE(b, nullptr);
    // Hold the batch and restart: the ring is full and workers are blocked.
    ASSERT_TRUE(loader->Start(1, 2).ok());
    ASSERT_TRUE(loader->Next(&b).ok());
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->index, 2);
    EXPECT_EQ(b->epoch, 1);
    loader.reset();  // destroyed with batches outstanding and workers busy
  }
}

// The train split's rect plan at pad 0 (create_dataloader's pad for training).
RectBatches TrainRectPlan(int batch_size, int img_size) {
  std::unique_ptr<Dataset> d;
  EXPECT_TRUE(Dataset::Open(PackedSyntheticDataset(), &d).ok());
  LabelIndex index;
  EXPECT_TRUE(d->LoadLabelIndex("train2017", &index).ok());
  std::vector<int> w, h;
  for (size_t i = 0; i < index.size(); ++i) {
    w.push_back(static_cast<int>(index.width(i)));
    h.push_back(static_cast<int>(index.height(i)));
  }
  return PlanRectBatches(w, h, batch_size, img_size, 32, 0.0);
}

TEST(LoaderTest, RectTrainingFollowsThePlanWithAugmentationAndNoMosaic) {
  LoaderOptions o = TrainOptions(2);
  o.rect = true;
  o.rect_pad = 0.0;
  o.hyp.mosaic = 1.0;  // ignored: v7.0's rect datasets never mosaic
  o.hyp.fliplr = 0.5;
  const RectBatches plan = TrainRectPlan(8, 128);
  auto loader = OpenLoader(o);
  const auto e0 = Drain(loader.get(), 0);
  ASSERT_EQ(e0.size(), plan.shapes.size());
  bool not_square = false;
  size_t k = 0;
  for (const Snapshot& s : e0) {
    EXPECT_EQ(s.height, plan.shapes[s.index].first);
    EXPECT_EQ(s.width, plan.shapes[s.index].second);
    not_square |= s.height != s.width;
    for (int64_t i : s.dataset_indices) EXPECT_EQ(i, plan.order[k++]);  // no shuffle
  }
  EXPECT_TRUE(not_square) << "the synthetic images should give some non-square batches";
  // Augmented: the same images in the same order, transformed differently in another epoch.
  const auto e1 = Drain(loader.get(), 1);
  ASSERT_EQ(e1.size(), e0.size());
  EXPECT_EQ(e1[0].dataset_indices, e0[0].dataset_indices);
  EXPECT_FALSE(e1[0].images == e0[0].images);
  // Deterministic whatever the threads, and resumable.
  auto three = OpenLoader([&] {
    LoaderOptions t = o;
    t.workers = 3;
    return t;
  }());
  ExpectSame(std::vector<Snapshot>(e1.begin() + 1, e1.end()), Drain(three.get(), 1, 1));
  // Metadata of a letterboxed image, never a mosaic.
  ASSERT_TRUE(loader->Start(0).ok());
  const Batch* b = nullptr;
  ASSERT_TRUE(loader->Next(&b).ok());
  ASSERT_NE(b, nullptr);
  for (int i = 0; i < b->size; ++i) {
    EXPECT_FALSE(b->meta[i].mosaic);
    EXPECT_GT(b->meta[i].orig_width, 0);
  }
  loader->Release(b);
}

TEST(LoaderTest, RectTrainingRefusesSeveralRanks) {
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(PackedSyntheticDataset(), &d).ok());
  LoaderOptions o = TrainOptions(1);
  o.rect = true;
  o.world_size = 2;
  std::unique_ptr<Loader> loader;
  EXPECT_TRUE(Loader::Open(*d, o, &loader).IsInvalidArgument());
}

// `--img 100000` failed with "batch allocator failed for 120000000000 bytes": the flags are named.
TEST(LoaderTest, ABatchTooLargeForMemoryNamesImgAndBatch) {
  struct NoMemory : BatchAllocator {
    void* Allocate(size_t) override { return nullptr; }
    void Free(void*, size_t) override {}
  } no_memory;
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(PackedSyntheticDataset(), &d).ok());
  LoaderOptions o = TrainOptions(1);
  o.allocator = &no_memory;
  std::unique_ptr<Loader> loader;
  const Status s = Loader::Open(*d, o, &loader);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot allocate a batch of 8 images at --img 128 (--batch 8): 0.4 MB of memory for each "
                             "of 3 prefetched batches"),
            std::string::npos)
      << s.message();
}

// A batch released with its images kept: the images stay as they were while the loader runs on into the
// buffer's old slot (a prefetch of 1: every later batch reuses it), the caller frees them, and the batches
// are those of an ordinary run.
TEST(LoaderTest, ReleaseKeepingImagesHandsTheBufferOver) {
  LoaderOptions o = TrainOptions(2);
  o.prefetch = 1;
  const std::vector<Snapshot> expected = Drain(OpenLoader(o).get(), 0);
  std::unique_ptr<Loader> loader = OpenLoader(o);
  ASSERT_TRUE(loader->Start(0).ok());
  struct Kept {
    uint8_t* images;
    size_t bytes;
    size_t used;
  };
  std::vector<Kept> kept;
  const Batch* b = nullptr;
  for (size_t i = 0;; ++i) {
    ASSERT_TRUE(loader->Next(&b).ok());
    if (!b) break;
    ASSERT_LT(i, expected.size());
    Kept k{nullptr, 0, b->image_bytes()};
    ASSERT_TRUE(loader->ReleaseKeepingImages(b, &k.images, &k.bytes).ok());
    ASSERT_NE(k.images, nullptr);
    EXPECT_GE(k.bytes, k.used);
    kept.push_back(k);
  }
  ASSERT_EQ(kept.size(), expected.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_TRUE(std::string(reinterpret_cast<const char*>(kept[i].images), kept[i].used) == expected[i].images)
        << "batch " << i << " changed after it was handed over";
    BatchAllocator::Default()->Free(kept[i].images, kept[i].bytes);
  }
  uint8_t* images = reinterpret_cast<uint8_t*>(1);
  size_t bytes = 1;
  EXPECT_TRUE(loader->ReleaseKeepingImages(nullptr, &images, &bytes).ok());  // nothing to hand over
  EXPECT_EQ(images, nullptr);
}

// An allocator that fails after a number of buffers: a hand-over without a new buffer says so and leaves
// the batch as it was, the caller's to Release, after which the loader goes on.
TEST(LoaderTest, ReleaseKeepingImagesWithoutMemoryFailsAndReleases) {
  class Limited : public BatchAllocator {
   public:
    explicit Limited(int left) : left_(left) {}
    void* Allocate(size_t bytes) override { return left_-- > 0 ? BatchAllocator::Default()->Allocate(bytes) : nullptr; }
    void Free(void* p, size_t bytes) override { BatchAllocator::Default()->Free(p, bytes); }

   private:
    int left_;
  } limited(2);  // the two slots of the ring, nothing more
  LoaderOptions o = TrainOptions(2);
  o.prefetch = 2;
  o.allocator = &limited;
  std::unique_ptr<Loader> loader = OpenLoader(o);
  ASSERT_TRUE(loader->Start(0).ok());
  const Batch* b = nullptr;
  ASSERT_TRUE(loader->Next(&b).ok());
  uint8_t* images = nullptr;
  size_t bytes = 0;
  const Status s = loader->ReleaseKeepingImages(b, &images, &bytes);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("batch 0"), std::string::npos) << s.message();
  EXPECT_EQ(images, nullptr);
  loader->Release(b);
  int batches = 1;
  for (;; ++batches) {
    ASSERT_TRUE(loader->Next(&b).ok());
    if (!b) break;
    loader->Release(b);
  }
  EXPECT_EQ(batches, loader->batches_per_epoch());
}

// Close from another thread wakes a Next that waits for a batch: here one that cannot come, as the ring's one
// slot holds a batch not released. Every later Start and Next says the loader is closed, and the batch handed
// out stays as it was until the loader is destroyed.
TEST(LoaderTest, CloseWakesANextWaitingInAnotherThread) {
  LoaderOptions o = TrainOptions(2);
  o.prefetch = 1;
  std::unique_ptr<Loader> loader = OpenLoader(o);
  ASSERT_TRUE(loader->Start(0).ok());
  const Batch* held = nullptr;
  ASSERT_TRUE(loader->Next(&held).ok());
  const std::string images(reinterpret_cast<const char*>(held->images), held->image_bytes());
  Status waited;
  std::thread waiter([&] {
    const Batch* b = nullptr;
    waited = loader->Next(&b);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  loader->Close();
  waiter.join();
  EXPECT_TRUE(waited.IsAborted()) << waited.ToString();
  EXPECT_TRUE(loader->Start(1).IsAborted());
  EXPECT_TRUE(std::string(reinterpret_cast<const char*>(held->images), held->image_bytes()) == images);
}

// An allocator may call the loader (Python's memory hooks run Python code, which may): ReleaseKeepingImages
// calls it without the loader's lock.
TEST(LoaderTest, TheAllocatorOfAHandOverMayCallTheLoader) {
  class Calling : public BatchAllocator {
   public:
    void* Allocate(size_t bytes) override {
      if (loader) calls += 1 + loader->bad_samples();
      return Default()->Allocate(bytes);
    }
    void Free(void* p, size_t bytes) override { Default()->Free(p, bytes); }
    const Loader* loader = nullptr;
    int64_t calls = 0;
  } calling;
  LoaderOptions o = TrainOptions(2);
  o.allocator = &calling;
  std::unique_ptr<Loader> loader = OpenLoader(o);
  calling.loader = loader.get();
  ASSERT_TRUE(loader->Start(0).ok());
  const Batch* b = nullptr;
  ASSERT_TRUE(loader->Next(&b).ok());
  uint8_t* images = nullptr;
  size_t bytes = 0;
  ASSERT_TRUE(loader->ReleaseKeepingImages(b, &images, &bytes).ok());
  EXPECT_EQ(calling.calls, 1);
  calling.Free(images, bytes);
}

// yolo-ffr batches' digests: CRC-32s of exactly the batch's bytes, the same with 1 and 3 workers, and
// different for another seed.
TEST(BatchDigestTest, DigestsAreTheBatchesCrcsWhateverTheThreads) {
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(PackedSyntheticDataset(), &d).ok());
  const std::vector<Snapshot> batches = Drain(OpenLoader(TrainOptions(2)).get(), 1);
  std::vector<BatchDigest> digests[3];
  for (int run = 0; run < 3; ++run) {
    LoaderOptions o = TrainOptions(run == 1 ? 3 : 1);
    if (run == 2) o.seed = 6;
    ASSERT_TRUE(DigestBatches(*d, o, 1, -1, [&](const BatchDigest& b) { digests[run].push_back(b); }).ok());
  }
  ASSERT_EQ(digests[0].size(), batches.size());
  ASSERT_EQ(digests[1].size(), batches.size());
  for (size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(digests[0][i].images_crc, ffr::Crc32(batches[i].images.data(), batches[i].images.size()));
    EXPECT_EQ(digests[0][i].targets_crc,
              ffr::Crc32(batches[i].targets.data(), batches[i].targets.size() * sizeof(float)));
    EXPECT_EQ(digests[0][i].targets, batches[i].targets.size() / 6);
    EXPECT_EQ(digests[1][i].images_crc, digests[0][i].images_crc);
    EXPECT_EQ(digests[1][i].targets_crc, digests[0][i].targets_crc);
  }
  EXPECT_NE(digests[2][0].images_crc, digests[0][0].images_crc);
  std::vector<BatchDigest> two;
  ASSERT_TRUE(DigestBatches(*d, TrainOptions(1), 1, 2, [&](const BatchDigest& b) { two.push_back(b); }).ok());
  EXPECT_EQ(two.size(), 2u);
  BatchDigest digest;
  digest.index = 3;
  digest.size = 16;
  digest.width = 640;
  digest.height = 480;
  digest.targets = 97;
  digest.images_crc = 0x1a2b3c4d;
  digest.targets_crc = 0xff;
  EXPECT_EQ(FormatBatchDigest(digest),
            "batch 3: 16 images 640x480, 97 targets, images crc32 1a2b3c4d, targets crc32 000000ff");
}

TEST(LoaderTest, SingleClsMakesEveryTargetClassZero) {
  LoaderOptions o = TrainOptions(2);
  auto multi = OpenLoader(o);
  o.single_cls = true;
  auto single = OpenLoader(o);
  const auto a = Drain(multi.get(), 0), b = Drain(single.get(), 0);
  ASSERT_EQ(a.size(), b.size());
  bool other_class = false;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].targets.size(), b[i].targets.size());
    EXPECT_TRUE(a[i].images == b[i].images);
    for (size_t t = 0; t < a[i].targets.size(); t += 6) {
      other_class |= a[i].targets[t + 1] != 0;
      EXPECT_EQ(b[i].targets[t + 1], 0.f);
      for (int c : {0, 2, 3, 4, 5}) EXPECT_EQ(a[i].targets[t + c], b[i].targets[t + c]);
    }
  }
  EXPECT_TRUE(other_class) << "the synthetic data should have several classes";
}

TEST(LoaderTest, SampleWeightsDrawTheSameListOnEveryRankAndResume) {
  LoaderOptions o = TrainOptions(2);
  std::vector<double> weights(48, 0.0);
  weights[3] = 1, weights[7] = 2, weights[40] = 5;
  const std::multiset<int64_t> expected_e0 = [&] {
    const std::vector<int64_t> v = WeightedChoices(weights, o.seed, 0);
    return std::multiset<int64_t>(v.begin(), v.end());
  }();
  EXPECT_EQ(expected_e0.count(3) + expected_e0.count(7) + expected_e0.count(40), 48u);
  o.world_size = 2;
  std::multiset<int64_t> read;
  for (int r = 0; r < 2; ++r) {
    o.rank = r;
    auto loader = OpenLoader(o);
    ASSERT_TRUE(loader->SetSampleWeights(weights).ok());
    for (const Snapshot& s : Drain(loader.get(), 0)) read.insert(s.dataset_indices.begin(), s.dataset_indices.end());
  }
  EXPECT_EQ(read, expected_e0);  // the ranks' shards make up the one weighted list
  // One rank: a resumed epoch redraws the same list; another epoch draws another.
  o = TrainOptions(2);
  auto loader = OpenLoader(o);
  ASSERT_TRUE(loader->SetSampleWeights(weights).ok());
  const auto full = Drain(loader.get(), 2);
  auto fresh = OpenLoader(o);
  ASSERT_TRUE(fresh->SetSampleWeights(weights).ok());
  ExpectSame(std::vector<Snapshot>(full.begin() + 3, full.end()), Drain(fresh.get(), 2, 3));
  EXPECT_NE(WeightedChoices(weights, o.seed, 2), WeightedChoices(weights, o.seed, 3));
  // Cleared: every sample once again.
  ASSERT_TRUE(loader->SetSampleWeights({}).ok());
  std::set<int64_t> all;
  for (const Snapshot& s : Drain(loader.get(), 0)) all.insert(s.dataset_indices.begin(), s.dataset_indices.end());
  EXPECT_EQ(all.size(), 48u);
}

TEST(LoaderTest, BadSampleWeightsAreRejected) {
  auto loader = OpenLoader(TrainOptions(1));
  EXPECT_TRUE(loader->SetSampleWeights(std::vector<double>(47, 1.0)).IsInvalidArgument());
  EXPECT_TRUE(loader->SetSampleWeights(std::vector<double>(48, 0.0)).IsInvalidArgument());
  std::vector<double> w(48, 1.0);
  w[5] = -1;
  EXPECT_TRUE(loader->SetSampleWeights(w).IsInvalidArgument());
  w[5] = std::nan("");
  EXPECT_TRUE(loader->SetSampleWeights(w).IsInvalidArgument());
  LoaderOptions o = TrainOptions(1);
  o.rect = true;
  auto rect = OpenLoader(o);
  EXPECT_TRUE(rect->SetSampleWeights(std::vector<double>(48, 1.0)).IsInvalidArgument());
}

TEST(LoaderTest, BadOptionsAreRejected) {
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(PackedSyntheticDataset(), &d).ok());
  std::unique_ptr<Loader> loader;
  LoaderOptions o = TrainOptions(1);
  o.img_size = 100;
  EXPECT_TRUE(Loader::Open(*d, o, &loader).IsInvalidArgument());
  o = TrainOptions(1);
  o.split = "test2017";
  Status s = Loader::Open(*d, o, &loader);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_NE(s.message().find("train2017"), std::string::npos);
  // Workers and prefetch beyond what a machine can give are refused naming the option, not met as
  // std::bad_alloc or "Resource temporarily unavailable" (EAGAIN from the thread limit).
  o = TrainOptions(1);
  o.workers = 100000;
  s = Loader::Open(*d, o, &loader);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("workers 100000: more than 1024 loader threads"), std::string::npos) << s.message();
  o = TrainOptions(1);
  o.prefetch = 1000000000;
  s = Loader::Open(*d, o, &loader);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("prefetch 1000000000: a ring of 1000000000 batches of 0.4 MB (--batch 8 at --img 128) "
                             "needs more than this machine's "),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace ffyolo

namespace ffyolo {
namespace {

TEST(BatchGridTest, ShowWritesAGridOfTheFirstBatch) {
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(testing::PackedSyntheticDataset(), &d).ok());
  testing::ScratchDir dir("grid");
  ShowOptions o;
  o.augment = true;
  o.img_size = 128;
  o.images = 9;
  ASSERT_TRUE(RenderDatasetGrid(*d, o, dir / "grid.jpg").ok());
  const std::string jpeg = testing::ReadFileToString(dir / "grid.jpg");
  ASSERT_GT(jpeg.size(), 1000u);
  ImageDecoder decoder;
  cv::Mat img;
  int denominator = 0;
  ASSERT_TRUE(decoder.Decode(reinterpret_cast<const uint8_t*>(jpeg.data()), jpeg.size(), ImageEncoding::kJpeg, "grid",
                             DecodeOptions(), &img, &denominator)
                  .ok());
  EXPECT_EQ(img.cols, 3 * 128);  // 9 images in a 3 x 3 grid
  EXPECT_EQ(img.rows, 3 * 128);
  // A box is drawn in its class colour (Ultralytics' first palette colour, FF3838).
  Batch batch;
  std::vector<uint8_t> pixels(3 * 64 * 64, 0);
  batch.size = 1;
  batch.height = batch.width = 64;
  batch.images = pixels.data();
  GridOptions go;
  auto red_pixels = [&] {
    const cv::Mat drawn = RenderBatchGrid(batch, go);
    cv::Mat mask;
    cv::inRange(drawn, cv::Scalar(0x30, 0x30, 0xf0), cv::Scalar(0x40, 0x40, 0xff), mask);
    return cv::countNonZero(mask);
  };
  EXPECT_EQ(red_pixels(), 0);
  batch.targets = {0, 0, 0.5f, 0.5f, 0.5f, 0.5f};
  EXPECT_GT(red_pixels(), 4 * 20);  // the outline of a 32 x 32 box
  o.split = "nope";
  EXPECT_TRUE(RenderDatasetGrid(*d, o, dir / "x.jpg").IsNotFound());
}

}  // namespace
}  // namespace ffyolo

namespace ffyolo {
namespace {

LoaderOptions Ultralytics8Options(int workers) {
  LoaderOptions o = TrainOptions(workers);
  o.augmentation = Augmentation::kUltralytics8;
  o.ultralytics_workers = 2;
  return o;
}

TEST(LoaderUltralytics8Test, DeterministicResumableAndNotYolov5s) {
  auto one = OpenLoader(Ultralytics8Options(1));
  auto three = OpenLoader(Ultralytics8Options(3));
  const auto e1 = Drain(one.get(), 1);
  ASSERT_EQ(e1.size(), 6u);
  ExpectSame(e1, Drain(three.get(), 1));
  ExpectSame(std::vector<Snapshot>(e1.begin() + 2, e1.end()), Drain(three.get(), 1, 2));  // resume: same plan
  size_t targets = 0;
  for (const Snapshot& s : e1) {
    EXPECT_EQ(s.height, 128);
    for (size_t t = 0; t < s.targets.size(); t += 6)
      for (int c = 2; c < 6; ++c) EXPECT_TRUE(s.targets[t + c] >= 0.f && s.targets[t + c] <= 1.f);
    targets += s.targets.size() / 6;
  }
  EXPECT_GT(targets, 48u);
  auto v5 = OpenLoader(TrainOptions(2));
  EXPECT_FALSE(Drain(v5.get(), 1)[0].images == e1[0].images);
}

TEST(LoaderUltralytics8Test, ValidationAndRectTrainingRun) {
  LoaderOptions val = Ultralytics8Options(2);
  val.training = false;
  auto loader = OpenLoader(val);
  const auto batches = Drain(loader.get(), 0);
  EXPECT_EQ(batches.size(), 2u);  // 16 / 8
  LoaderOptions rect = Ultralytics8Options(2);
  rect.rect = true;
  rect.rect_pad = 0;
  auto rect_loader = OpenLoader(rect);
  EXPECT_EQ(Drain(rect_loader.get(), 0).size(), 6u);
}

TEST(LoaderUltralytics8Test, RefusesZeroWorkers) {
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(PackedSyntheticDataset(), &d).ok());
  std::unique_ptr<Loader> loader;
  LoaderOptions o = Ultralytics8Options(1);
  o.ultralytics_workers = 0;
  EXPECT_TRUE(Loader::Open(*d, o, &loader).IsInvalidArgument());
}

// Over ranks, validation and rect training read runs of consecutive batches of the one-rank plan (Ultralytics 8's
// ContiguousDistributedSampler), validation's byte for byte; together every sample once.
TEST(LoaderUltralytics8Test, RanksReadContiguousRunsOfRectBatches) {
  for (const bool training : {false, true}) {
    SCOPED_TRACE(training ? "rect training" : "validation");
    LoaderOptions o = Ultralytics8Options(2);
    o.training = training;
    o.rect = training;
    o.rect_pad = 0;
    o.batch_size = 3;
    const std::vector<Snapshot> whole = Drain(OpenLoader(o).get(), 0);
    constexpr int kRanks = 4;
    o.world_size = kRanks;
    std::vector<int64_t> seen;
    for (int r = 0; r < kRanks; ++r) {
      o.rank = r;
      const std::vector<Snapshot> mine = Drain(OpenLoader(o).get(), 0);
      for (const Snapshot& s : mine) {
        const Snapshot& same = whole[seen.size() / 3];  // the one-rank batch at this point of the run
        EXPECT_EQ(s.dataset_indices, same.dataset_indices) << "rank " << r;
        EXPECT_EQ(std::make_pair(s.height, s.width), std::make_pair(same.height, same.width)) << "rank " << r;
        if (!training) EXPECT_TRUE(s.images == same.images) << "rank " << r;
        seen.insert(seen.end(), s.dataset_indices.begin(), s.dataset_indices.end());
      }
      const size_t batches = whole.size() / kRanks + (r < static_cast<int>(whole.size() % kRanks) ? 1 : 0);
      EXPECT_EQ(mine.size(), batches) << "rank " << r;
    }
    std::vector<int64_t> expected;
    for (const Snapshot& s : whole) expected.insert(expected.end(), s.dataset_indices.begin(), s.dataset_indices.end());
    EXPECT_EQ(seen, expected);
    if (training) EXPECT_EQ(expected, TrainRectPlan(3, 128).order);
  }
}

// Rect training whose batches all have one shape (here one batch holds the split) is shuffled, as Ultralytics 8's
// get_dataloader keeps shuffle on then: the sampler's order, every batch of the plan's shape.
TEST(LoaderUltralytics8Test, RectTrainingOfOneShapeIsShuffled) {
  LoaderOptions o = Ultralytics8Options(2);
  o.rect = true;
  o.rect_pad = 0;
  o.batch_size = 64;  // the 48 images in one batch
  const RectBatches plan = TrainRectPlan(64, 128);
  ASSERT_EQ(plan.shapes.size(), 1u);
  auto loader = OpenLoader(o);
  EXPECT_TRUE(loader->shuffled());
  const auto e0 = Drain(loader.get(), 0), e1 = Drain(loader.get(), 1);
  ASSERT_EQ(e0.size(), 1u);
  EXPECT_EQ(std::make_pair(e0[0].height, e0[0].width), plan.shapes[0]);
  EXPECT_NE(e0[0].dataset_indices, plan.order);
  EXPECT_NE(e0[0].dataset_indices, e1[0].dataset_indices);
  EXPECT_EQ(std::multiset<int64_t>(e0[0].dataset_indices.begin(), e0[0].dataset_indices.end()),
            std::multiset<int64_t>(plan.order.begin(), plan.order.end()));
  o.shuffle = false;
  auto ordered = OpenLoader(o);
  EXPECT_FALSE(ordered->shuffled());
  EXPECT_EQ(Drain(ordered.get(), 0)[0].dataset_indices, plan.order);
  o = Ultralytics8Options(2);  // the synthetic images' batches of 8 have several shapes: their order
  o.rect = true;
  EXPECT_FALSE(OpenLoader(o)->shuffled());
}

TEST(LoaderUltralytics8Test, CutMixAndBgrAreUltralytics8sProbabilities) {
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(PackedSyntheticDataset(), &d).ok());
  std::unique_ptr<Loader> loader;
  LoaderOptions o = Ultralytics8Options(1);
  o.ultralytics8_hyp.cutmix = 0.5;
  o.ultralytics8_hyp.bgr = 1;
  ASSERT_TRUE(Loader::Open(*d, o, &loader).ok());
  o.ultralytics8_hyp.bgr = 1.5;
  Status s = Loader::Open(*d, o, &loader);
  EXPECT_TRUE(s.IsInvalidArgument() && s.message() == "bgr 1.5: a probability, in [0, 1]") << s.ToString();
  o = TrainOptions(1);  // yolov5
  o.ultralytics8_hyp.cutmix = 0.5;
  s = Loader::Open(*d, o, &loader);
  EXPECT_TRUE(s.IsInvalidArgument() && s.message().find("cutmix 0.5: Ultralytics 8's") == 0) << s.ToString();
}

}  // namespace
}  // namespace ffyolo

namespace ffyolo {
namespace {

// Ultralytics 8's default augmentation (mosaic always, no MixUp) over the synthetic split.
LoaderOptions MosaicAlwaysOptions() {
  LoaderOptions o = Ultralytics8Options(2);
  o.hyp.mosaic = 1;
  o.hyp.mixup = 0;
  return o;
}

TEST(DecodedImageStoreTest, HoldsASharedImageUntilItsLastSampleWithinItsCap) {
  DecodedImageStore store(150);
  store.Reset({3, 1, 2});
  cv::Mat image;
  ASSERT_EQ(store.Acquire(0, 100, &image), DecodedImageStore::Claim::kDecode);  // three samples read span 0
  const cv::Mat decoded(5, 20, CV_8UC1, cv::Scalar(9));
  store.Publish(0, decoded);
  ASSERT_EQ(store.Acquire(0, 100, &image), DecodedImageStore::Claim::kHeld);
  EXPECT_EQ(image.data, decoded.data);
  EXPECT_EQ(store.Acquire(1, 10, &image), DecodedImageStore::Claim::kUnstored);  // only one sample reads span 1
  EXPECT_EQ(store.Acquire(2, 100, &image), DecodedImageStore::Claim::kUnstored);  // 200 bytes: past the cap
  store.Release(0);
  store.Release(0);
  EXPECT_EQ(store.Acquire(0, 100, &image), DecodedImageStore::Claim::kHeld);  // its third sample still to come
  store.Release(0);  // gone with it: span 2 fits now
  ASSERT_EQ(store.Acquire(2, 100, &image), DecodedImageStore::Claim::kDecode);
  store.Abandon(2);  // its decode failed: the next read claims it again
  EXPECT_EQ(store.Acquire(2, 100, &image), DecodedImageStore::Claim::kDecode);
  const DecodeStats stats = store.stats();
  EXPECT_EQ(stats.store_hits, 2);
  EXPECT_EQ(stats.store_full, 1);
  EXPECT_EQ(stats.peak_images, 1);
  EXPECT_EQ(stats.peak_bytes, 100u);
}

TEST(DecodedImageStoreTest, LoaderDecodesAboutOneImagePerSample) {
  // Without the store a mosaic decodes each of its four tiles the warp samples; with it an image once while the
  // plan's samples share it, as Ultralytics' buffers decode one image per sample. Same batches either way.
  LoaderOptions o = MosaicAlwaysOptions();
  auto stored = OpenLoader(o);
  o.decoded_store_bytes = 0;
  auto unstored = OpenLoader(o);
  for (int64_t epoch : {0, 1}) {
    const int64_t before_stored = stored->decode_stats().decodes, before_unstored = unstored->decode_stats().decodes;
    ExpectSame(Drain(stored.get(), epoch), Drain(unstored.get(), epoch));
    const double samples = static_cast<double>(stored->samples_per_epoch());
    const double per_sample = (stored->decode_stats().decodes - before_stored) / samples;
    const double unstored_per_sample = (unstored->decode_stats().decodes - before_unstored) / samples;
    EXPECT_LE(per_sample, 1.25) << "epoch " << epoch;
    EXPECT_GE(unstored_per_sample, 2.5) << "epoch " << epoch;
  }
  const DecodeStats stats = stored->decode_stats();
  EXPECT_GT(stats.store_hits, stats.decodes);
  EXPECT_EQ(stats.store_full, 0);
  EXPECT_EQ(unstored->decode_stats().store_hits, 0);
}

TEST(DecodedImageStoreTest, AtItsCapReadsDecodeForThemselves) {
  // A cap of about eight of these images: the store fills, holds no more than the cap, and the reads it cannot
  // take decode for themselves; the batches do not change, resumed mid-epoch or not.
  LoaderOptions o = MosaicAlwaysOptions();
  o.workers = 3;
  o.decoded_store_bytes = 8 * 128 * 100 * 3;
  auto capped = OpenLoader(o);
  o.decoded_store_bytes = 0;
  auto unstored = OpenLoader(o);
  const auto epoch = Drain(capped.get(), 1);
  ExpectSame(epoch, Drain(unstored.get(), 1));
  const DecodeStats stats = capped->decode_stats();
  EXPECT_GT(stats.store_full, 0);
  EXPECT_GT(stats.store_hits, 0);
  EXPECT_LE(stats.peak_bytes, 8u * 128 * 100 * 3);
  EXPECT_LT(stats.decodes, unstored->decode_stats().decodes);  // still fewer than none held
  ExpectSame(std::vector<Snapshot>(epoch.begin() + 3, epoch.end()), Drain(capped.get(), 1, 3));
  EXPECT_LE(capped->decode_stats().peak_bytes, 8u * 128 * 100 * 3);
}

TEST(DecodedImageStoreTest, APixelCacheReadDecodesNothing) {
  // With the pixel cache the mode reads load_image's output: no decode, so no store either (ram: tiles from the
  // whole split; disk: from the buffers).
  testing::ScratchDir dir("store_cache");
  const std::string data = dir / "data.ffr";
  std::filesystem::copy(PackedSyntheticDataset(), data, std::filesystem::copy_options::recursive);
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(data, &d).ok());
  for (const std::string mode : {"ram", "disk"}) {
    LoaderOptions o = MosaicAlwaysOptions();
    const Status s = UsePixelCache(*d, mode, &o);
    ASSERT_TRUE(s.ok()) << s.ToString();
    auto loader = OpenLoader(o, data);
    ASSERT_EQ(Drain(loader.get(), 1).size(), 6u);
    const DecodeStats stats = loader->decode_stats();
    EXPECT_EQ(stats.decodes, 0) << mode;
    EXPECT_EQ(stats.store_hits + stats.peak_images, 0) << mode;
  }
}

// A copy of the synthetic dataset in `dir` whose training sample `sample` holds a JPEG that does not decode, its
// CRCs (the sample's, the header's in the manifest) right, so that only decoding finds it.
std::string UndecodableCopy(const testing::ScratchDir& dir, int sample) {
  const std::string copy = dir / "data.ffr";
  std::filesystem::copy(PackedSyntheticDataset(), copy, std::filesystem::copy_options::recursive);
  const std::string shard = copy + "/train2017/PART_00000.ffr";
  std::string bytes = testing::ReadFileToString(shard);
  std::unique_ptr<ffr::Reader> r;
  EXPECT_TRUE(ffr::Reader::Open(shard, ffr::ReaderOptions(), &r).ok());
  ffr::ShardHeader header;
  EXPECT_TRUE(ffr::ParseShardHeader(shard, reinterpret_cast<const uint8_t*>(bytes.data()), 12 + 12 * r->size(),
                                    bytes.size(), true, &header)
                  .ok());
  const size_t begin = header.offsets[sample], size = header.sample_size(sample);
  const size_t soi = bytes.find("\xff\xd8\xff", begin);
  EXPECT_LT(soi + 64, begin + size);
  std::fill(bytes.begin() + soi + 2, bytes.begin() + soi + 64, '\0');  // no marker after the SOI
  header.crcs[sample] = ffr::Crc32(bytes.data() + begin, size);
  header.offsets.pop_back();
  const std::string encoded = ffr::EncodeShardHeader(header.crcs, header.offsets);
  bytes.replace(0, encoded.size(), encoded);
  EXPECT_TRUE(testing::WriteStringToFile(shard, bytes));
  ffr::ShardHeader rewritten;
  EXPECT_TRUE(ffr::ParseShardHeader(shard, reinterpret_cast<const uint8_t*>(bytes.data()), encoded.size(),
                                    bytes.size(), true, &rewritten)
                  .ok());
  std::string manifest = testing::ReadFileToString(copy + "/dataset.yaml");
  const std::string listed = "meta_crc: " + std::to_string(header.meta_crc);
  const size_t at = manifest.find(listed);
  EXPECT_NE(at, std::string::npos);
  manifest.replace(at, listed.size(), "meta_crc: " + std::to_string(rewritten.meta_crc));
  EXPECT_TRUE(testing::WriteStringToFile(copy + "/dataset.yaml", manifest));
  return copy;
}

TEST(DecodedImageStoreTest, AnUndecodableImageIsReplacedAlikeWithOrWithoutTheStore) {
  // A shared image that fails to decode: the thread that claimed it gives it up, the others decode it themselves
  // and fail as they would without the store. Batches, errors and reports are those of the loader without the
  // store, and name the file and the sample. The image soon sits in the mosaic buffers, a tile of many samples:
  // each replaces it (SampleDraws::Replace) and the epochs complete, the image reported once.
  testing::ScratchDir dir("undecodable");
  const std::string copy = UndecodableCopy(dir, 5);
  struct Outcome {
    std::vector<Snapshot> batches;
    std::vector<std::string> errors, reports;
    std::vector<int64_t> replaced;  // per batch
    int64_t bad = 0;
  };
  const auto run = [&](uint64_t store_bytes, int workers) {
    Outcome out;
    LoaderOptions o = MosaicAlwaysOptions();
    o.workers = workers;
    o.decoded_store_bytes = store_bytes;
    o.on_bad_sample = [&](const std::string& m) { out.reports.push_back(m); };
    auto loader = OpenLoader(o, copy);
    for (int64_t epoch : {0, 1}) {
      EXPECT_TRUE(loader->Start(epoch).ok());
      for (int64_t b = 0; b < loader->batches_per_epoch(); ++b) {
        const Batch* batch = nullptr;
        const Status st = loader->Next(&batch);
        out.errors.push_back(st.ToString());
        if (!batch) break;
        out.replaced.push_back(batch->replaced_samples);
        out.batches.push_back({batch->index, batch->size, batch->height, batch->width,
                               std::string(reinterpret_cast<const char*>(batch->images), batch->image_bytes()),
                               batch->targets, {}});
        loader->Release(batch);
      }
    }
    out.bad = loader->bad_samples();
    return out;
  };
  const Outcome stored = run(LoaderOptions().decoded_store_bytes, 3), unstored = run(0, 1);  // whatever the threads
  ExpectSame(stored.batches, unstored.batches);
  EXPECT_EQ(stored.errors, unstored.errors);
  EXPECT_EQ(stored.reports, unstored.reports);
  EXPECT_EQ(stored.replaced, unstored.replaced);
  EXPECT_EQ(stored.batches.size(), 12u);  // both epochs whole
  EXPECT_EQ(stored.errors, std::vector<std::string>(12, Status::OK().ToString()));
  const int64_t replaced = std::accumulate(stored.replaced.begin(), stored.replaced.end(), int64_t{0});
  EXPECT_GT(replaced, 0);
  EXPECT_EQ(replaced, stored.bad);  // every failed use replaced and counted in its batch
  // Resumed mid-epoch, the replacements (some in its batches) are the same.
  EXPECT_GT(std::accumulate(stored.replaced.begin() + 9, stored.replaced.end(), int64_t{0}), 0);
  auto resumed = OpenLoader(MosaicAlwaysOptions(), copy);
  std::vector<Snapshot> tail = Drain(resumed.get(), 1, 3);
  for (Snapshot& batch : tail) batch.dataset_indices.clear();
  ExpectSame(std::vector<Snapshot>(stored.batches.begin() + 9, stored.batches.end()), tail);
  ASSERT_EQ(stored.reports.size(), 1u);
  EXPECT_NE(stored.reports[0].find("PART_00000.ffr sample 5"), std::string::npos) << stored.reports[0];
  EXPECT_NE(stored.reports[0].find(".jpg"), std::string::npos) << stored.reports[0];
}

}  // namespace
}  // namespace ffyolo
