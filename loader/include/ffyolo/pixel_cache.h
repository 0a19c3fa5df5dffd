// PixelCache: load_image's output (YOLOv5's, or Ultralytics 8's in that
// augmentation mode) for every image of one split, decoded once and stored raw, so that training reads pixels instead of decoding JPEGs
// (Ultralytics' --cache, but one copy per node shared by every rank through
// the page cache, and checked against the dataset it came from).
//
//   DATA.ffr/cache/<split>-<img>/        a training cache (load_image with augment)
//   DATA.ffr/cache/<split>-<img>-val/    a validation cache (INTER_AREA when shrinking)
//   DATA.ffr/cache/<split>-<img>-u8/     Ultralytics 8's load_image (its sizes, always
//                                        INTER_LINEAR), training and validation alike
//     PART_00000.ffr ...                 FFRecord shards of records whose image is
//                                        raw BGR pixels (ImageEncoding::kBgr)
//     cache.yaml                         what it was built from; written last
//     LOCK                               builders take turns on it
//
// The records are the dataset's own (file name, image id, size, boxes) with
// the image bytes replaced by the resized pixels, sample for sample in the
// split's order. cache.yaml records the dataset manifest's CRC and a CRC over
// every source sample's CRC, so a cache of another dataset, split, size or
// resize rule is rebuilt (BuildPixelCache) or refused (OpenPixelCache), never
// used. docs/format.md describes the files.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ffr/env.h"
#include "ffr/reader.h"
#include "ffyolo/augmentation.h"
#include "ffyolo/dataset.h"

namespace ffyolo {

struct LoaderOptions;  // loader.h

struct PixelCacheOptions {
  std::string split;       // "" = the dataset's default split for `training`
  int img_size = 640;
  bool training = true;    // load_image's augment: INTER_LINEAR when shrinking; false: INTER_AREA
  // Whose load_image: Ultralytics 8's sizes and interpolation do not depend on `training` (which then
  // picks only the default split), so one cache serves its training and validation.
  Augmentation augmentation = Augmentation::kYolov5;
  std::string directory;   // "" = PixelCacheDir's default under the dataset
  uint64_t shard_bytes = uint64_t{256} << 20;  // target shard size
  int threads = 0;         // decoding threads; 0: all CPUs the process may use
  // Read every cached sample back and check its CRC; damaged shards are rebuilt.
  bool verify = false;
  // What else the user can do when the disk is too small, for the message after "free some space or":
  // only the caller knows (yolo-ffr cache can build elsewhere, a loader can read without the cache).
  // Empty: free some space, nothing else.
  std::string instead;
  ffr::Env* env = nullptr;  // nullptr: Env::Default()

  struct Progress {
    int64_t done = 0, total = 0;  // samples
    uint64_t bytes = 0;           // written so far
  };
  // From the building thread, at most a few times per second.
  std::function<void(const Progress&)> on_progress;
  // What was found and done ("rebuilding: ..."), one line each.
  std::function<void(const std::string&)> on_message;
  // Asked before each shard: true stops the build (Aborted); the shards finished are kept, and the
  // next build resumes after them.
  std::function<bool()> stop_requested;
};

struct PixelCacheSummary {
  std::string directory;
  std::string split;
  int64_t samples = 0;
  uint64_t bytes = 0;          // on disk, all shards
  int64_t built_shards = 0;    // written by this call
  int64_t kept_shards = 0;     // complete from an earlier (maybe interrupted) build
  bool was_complete = false;   // nothing to do: a current cache was there
  double seconds = 0;
};

// The cache a loader of `options` reads (LoaderOptions::pixel_cache): its
// split, size, resize rule and folder. Building it makes the cache that loader
// then opens.
PixelCacheOptions PixelCacheFor(const LoaderOptions& options);

// Where the cache of `options` lives (options.directory when set).
Status PixelCacheDir(const Dataset& dataset, const PixelCacheOptions& options, std::string* dir);

// Builds the cache unless a complete, current one is there. A cache of another
// dataset or with other settings is rebuilt; an interrupted build resumes after
// its last finished shard. Holds LOCK meanwhile, so when several processes
// call this (the ranks of a node) one builds and the others wait, then find it
// complete. Writes go through options.env: temporary names, fsync, rename,
// cache.yaml last, so a crash never leaves a cache that opens as complete.
Status BuildPixelCache(const Dataset& dataset, const PixelCacheOptions& options, PixelCacheSummary* summary);

// Ultralytics' --cache mode as the backend that reads the cache's shards:
// "ram" maps them (kMmap: one copy per node, in the page cache), "disk" reads
// them (kAuto). InvalidArgument for another mode.
Status PixelCacheBackend(const std::string& mode, ffr::IoBackend* backend);

// Makes `options` read its split (resolved here when empty) from the pixel
// cache in --cache `mode` (PixelCacheBackend), building the cache first unless
// a complete, current one is there (BuildPixelCache; `summary` says which).
// In Ultralytics 8's augmentation "ram" also takes mosaic tiles from the whole
// split, not the buffer (LoaderOptions::mosaic_buffer), as its cache='ram' does.
// `instead` as PixelCacheOptions::instead.
Status UsePixelCache(const Dataset& dataset, const std::string& mode, LoaderOptions* options,
                     const std::string& instead = "", PixelCacheSummary* summary = nullptr);

// Opens a complete cache that matches `dataset` and `options` for reading
// (reader_options picks the backend: kMmap for --cache ram, io_uring for disk).
// Fails, saying why, for a missing, stale or incomplete cache.
Status OpenPixelCache(const Dataset& dataset, const PixelCacheOptions& options,
                      const ffr::ReaderOptions& reader_options, std::unique_ptr<ffr::Reader>* out);

}  // namespace ffyolo
