// Loader: batches for training or validation from one split of a packed
// dataset. Pipeline: sampler -> batched reads through the reader -> decode ->
// augment -> written straight into the batch -> a bounded ring of batches,
// handed out in order.
//
// Worker threads claim sample slots in order; every sample's randomness comes
// from (seed, epoch, rank, position), so batches are identical whatever the
// number of threads, and Start(epoch, batch) resumes exactly. In training, a
// sample that cannot be read or decoded is reported, counted and replaced by
// another (drawn deterministically); it never stops the pipeline. Validation
// never replaces one: its batch fails with the sample's error, since scoring
// another image's boxes would give wrong metrics.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ffr/reader.h"
#include "ffyolo/augmentation.h"
#include "ffyolo/batch.h"
#include "ffyolo/dataset.h"
#include "ffyolo/decoded_image_store.h"
#include "ffyolo/hyp.h"

namespace ffyolo {

struct LoaderOptions {
  std::string split;        // "" = the dataset's default for training / validation
  bool training = true;     // mosaic and augmentation; false: letterbox only
  int img_size = 640;
  int batch_size = 16;      // per rank
  // Rectangular batches (always on when !training). Training with them is
  // YOLOv5's --rect: no mosaic (letterbox, random_perspective, HSV, flips), the
  // batches in aspect-ratio order, one rank only (v7.0's DDP sampler would mix
  // batches of different shapes). Ultralytics 8's (rect=True): no mosaic nor
  // MixUp, random_perspective straight into the batch's shape, over ranks as
  // its ContiguousDistributedSampler (rect_batches.h), and, when every batch
  // has one shape, shuffled as square batches are (`shuffle`).
  bool rect = false;
  double rect_pad = 0.5;    // YOLOv5: 0.5 for validation, 0 for rect training
  bool single_cls = false;  // every target of class 0 (--single-cls)
  int stride = 32;
  Hyp hyp;
  // Whose augmentation: YOLOv5 v7.0's, or Ultralytics 8's (docs/loader.md,
  // "Ultralytics 8's augmentation": mosaic tiles from a buffer of recently
  // loaded images, MixUp after any sample, hue shifted, load_image rounding
  // up, ...). Ultralytics 8's DataLoader workers each keep their own buffer:
  // `ultralytics_workers` is their number (its `workers`, 8 by default).
  Augmentation augmentation = Augmentation::kYolov5;
  int ultralytics_workers = 8;
  // Ultralytics 8's mosaic tiles from those buffers; false: from the whole split, as its cache='ram' takes
  // them (UsePixelCache sets it for --cache ram). YOLOv5's augmentation ignores it.
  bool mosaic_buffer = true;
  Ultralytics8Hyp ultralytics8_hyp;  // its cutmix and bgr: with `hyp`, Ultralytics 8's hyperparameters
  // Ultralytics 8's mosaic training keeps an image decoded while the plan's
  // later samples read it (decoded_image_store.h), as Ultralytics' buffers do:
  // about one decode per sample instead of one per tile. At most this many
  // bytes of images are held; at the cap a read decodes for itself instead.
  // 0: nothing held. The batches are the same whatever the cap.
  uint64_t decoded_store_bytes = uint64_t{2} << 30;
  // This process's share: training's sampler gives each rank every world_size-th sample (padded, as torch's
  // DistributedSampler); validation gives each rank every world_size-th rect batch (rect_batches.h's RankShare),
  // in Ultralytics 8's augmentation a run of consecutive ones (ContiguousRankShare), as rect training there.
  int rank = 0, world_size = 1;
  uint64_t seed = 0;
  bool shuffle = true;      // training only
  bool drop_last = false;   // drop the last partial batch
  // Decoding threads, at most kMaxWorkers: more than any machine has CPUs only cost memory, and past
  // the process's thread limit fail far from their cause.
  static constexpr int kMaxWorkers = 1024;
  int workers = 4;
  int prefetch = 4;         // batches in the ring, which must fit in the machine's memory
  std::vector<int> cpus;    // pin workers to these CPUs (empty: inherit the process affinity)
  // Decode JPEGs at 1/2, 1/4 or 1/8 scale when they will shrink that much, and
  // of a mosaic tile only the part the warp samples.
  bool decode_less = true;
  // Read load_image's output from the split's pixel cache (pixel_cache.h,
  // built for this img_size, `training` and `augmentation`) instead of decoding: the batches
  // are those of decode_less = false, bit for bit. `reader` then applies to
  // the cache's shards (kMmap: Ultralytics' --cache ram, shared by the ranks
  // of a node through the page cache).
  bool pixel_cache = false;
  std::string pixel_cache_dir;  // "" = the cache's default folder in the dataset
  ffr::ReaderOptions reader;
  BatchAllocator* allocator = nullptr;  // nullptr: BatchAllocator::Default()
  // Each corrupt sample, once: "split sample N (file): reason".
  std::function<void(const std::string&)> on_bad_sample;
};

class Loader {
 public:
  static Status Open(const Dataset& dataset, const LoaderOptions& options, std::unique_ptr<Loader>* out);
  ~Loader();  // stops the workers cleanly, even mid-epoch
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  const std::string& split() const;
  int64_t dataset_size() const;
  int64_t samples_per_epoch() const;  // this rank's
  int64_t batches_per_epoch() const;
  // Whether an epoch's samples are in the sampler's shuffled order: `shuffle` in training, but not over rect
  // batches of several shapes (their aspect-ratio order), as Ultralytics 8's get_dataloader turns it off.
  bool shuffled() const;

  // Starts producing the batches of `epoch` from batch `first_batch` on (resume).
  // Stops any epoch in progress. Aborted once the loader is closed.
  Status Start(int64_t epoch, int64_t first_batch = 0);
  // --image-weights: from the next Start on, an epoch reads n samples drawn
  // with replacement, sample i with probability weights[i] / sum (YOLOv5's
  // random.choices), from (seed, epoch) alone: every rank draws the same list
  // and reads its shard of it, and a resumed epoch draws it again. Empty:
  // every sample once. Training without rect batches only.
  Status SetSampleWeights(std::vector<double> weights);
  // The next batch in order; nullptr after the epoch's last batch. The batch
  // stays valid until Release or the next Start. Aborted once the loader is
  // closed, a Next waiting at that moment included. A failed batch (training's
  // corrupt samples in a row, validation's bad sample) ends
  // its epoch: that Next and every later one return its error, never a later
  // batch nor a wait, until Start (Start(epoch, failed batch + 1) skips it).
  Status Next(const Batch** batch);
  void Release(const Batch* batch);
  // Release, but the batch's images stay where they are and become the
  // caller's: its slot takes a new buffer from the allocator, and the caller
  // frees the old one, batch->images, with allocator->Free(images, bytes) when
  // done. For a caller that cannot tell when it will be done (Python's arrays).
  // IOError, and nothing done (the batch still the caller's to Release), when
  // no new buffer can be had. The allocator is called without the loader's
  // lock held, so it may call the loader itself.
  Status ReleaseKeepingImages(const Batch* batch, uint8_t** images, size_t* bytes);
  // Stops the workers for good and returns once they have stopped; a Start or
  // Next waiting in another thread returns Aborted, as every later one does.
  // Release and ReleaseKeepingImages still work, and batches handed out stay
  // valid until the loader is destroyed. Safe while other threads call the
  // loader (destroying it is not); the destructor closes.
  void Close();
  // Corrupt samples seen since Open.
  int64_t bad_samples() const;
  // Decodes and the decoded image store's use since Open.
  DecodeStats decode_stats() const;

 private:
  class Impl;
  explicit Loader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ffyolo
