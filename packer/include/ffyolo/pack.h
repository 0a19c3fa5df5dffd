// Pack: turns a COCO-style source tree into a packed ffyolo dataset.
//
// Per split, images are grouped into shards of about `shard_bytes` (planned
// from the files' sizes, in source order). A pool of threads reads, checks and
// encodes one shard's images while the previous shard is written, so memory
// stays bounded by about two shards whatever the dataset's size, plus each
// image's metadata, which its label index holds (under 1 KB an image at COCO's
// boxes per image; docs/bench.md, "Packing memory").
//
// Crash safety: shards and the label index are written under temporary names,
// fsynced and renamed; dataset.yaml comes last. A `.pack-state` file records
// what is being packed and is removed after dataset.yaml, so that running the
// same pack again resumes after the last finished shard (or, with dataset.yaml
// already there, just finishes); any other non-empty output is refused unless
// `force`. An output that is, holds or lies inside an input (the source, the
// data YAML) is refused even with `force`, which would delete the input. Every
// write goes through `env`, where tests inject faults.
//
// Space: a pack whose images alone (as they are; unknown with max_size) do
// not fit in the output file system's free space is refused before it writes
// a shard, saying how much it needs; a disk that fills up mid-pack fails
// naming the file, the shard's size and the space needed, and leaves an
// unfinished pack that the same command resumes once there is room.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffyolo/manifest.h"
#include "ffyolo/source.h"

namespace ffyolo {

// What yolo-pack does with photos that carry an EXIF orientation (--exif; docs/format.md).
enum class ExifPolicy {
  // auto, the default: trained and shown as viewed (as cv::imread and YOLOv5 read them), labels in the
  // viewed frame (YOLO-txt's always; a COCO JSON's when its sizes are the viewed ones: a 90° photo whose
  // JSON gives the stored size is refused, naming the other two).
  kAuto,
  // apply: as viewed, the labels drawn on the stored pixels turned with them.
  kApply,
  // ignore: trained and shown as stored, labels as given (the orientation is recorded, not applied).
  kIgnore,
};

struct PackOptions {
  std::string source;
  std::string output;  // the dataset directory, e.g. "coco.ffr"
  ScanOptions scan;
  uint64_t shard_bytes = uint64_t{256} << 20;  // target shard size
  int shards = 0;                              // > 0: this many shards per split instead
  int threads = 0;                             // 0: all CPUs the process may use
  bool full_decode = false;                    // --check: decode every JPEG
  bool skip_bad = false;                       // report and skip bad images instead of failing
  int max_size = 0;                            // > 0: re-encode JPEGs whose longest side is larger
  int quality = 90;                            // JPEG quality of re-encoded images
  uint64_t align = 0;                          // > 0: each record starts at a multiple of this (O_DIRECT reads)
  bool force = false;                          // overwrite an existing output
  ExifPolicy exif = ExifPolicy::kAuto;         // --exif

  ffr::Env* env = ffr::Env::Default();         // the output's file system (source images are read directly)

  // Called from the packing thread, at most a few times per second.
  struct Progress {
    std::string split;
    int64_t done = 0, total = 0;
    uint64_t bytes = 0;
  };
  std::function<void(const Progress&)> on_progress;
  // Warnings and skipped images, one line each.
  std::function<void(const std::string&)> on_message;
};

struct PackSummary {
  int64_t images = 0;
  int64_t boxes = 0;
  int64_t background = 0;
  int64_t skipped = 0;
  int64_t warnings = 0;
  int64_t exif_oriented = 0;  // images whose EXIF orientation is not 1 (trained as viewed, or --exif ignore)
  int64_t resumed_shards = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  Manifest manifest;
};

Status Pack(const PackOptions& options, PackSummary* summary);

}  // namespace ffyolo
