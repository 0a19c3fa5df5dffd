// Deterministic synthetic datasets in the official COCO layout (and optionally the
// Ultralytics YOLO layout): coloured shapes on textured backgrounds with exact boxes.
// They let the pipeline, its tests and its benchmarks run without downloading COCO,
// and are easy enough that YOLOv5n trained from scratch on a CPU reaches a high mAP.
//
// Layout written under output_dir, for each split S (train_split, val_split):
//   annotations/instances_S.json   COCO instances JSON, written after all images
//   S/<id:012>.jpg                  the images (COCO layout), or with yolo_layout:
//   images/S/<id:012>.jpg           the images (Ultralytics layout, like coco128),
//   labels/S/<id:012>.txt           "cls cx cy w h" rows, normalised, %g; empty for
//                                   background images
//   data.yaml                       path, train, val, nc, names, category_ids
//   .yolo-synth                     what the run writes (layout, splits), before the rest
// The COCO JSON is written in both cases; only the image folder moves.
//
// Image i of split S depends only on (seed, S, i) and the scene options, never on
// threads or time, so the same options give byte-identical files.
#pragma once

#include <cstdint>
#include <string>

#include "ffr/env.h"
#include "ffr/status.h"
#include "ffyolo/synthetic_scene.h"

namespace ffyolo {

enum class JpegSubsampling {
  k420,   // YCbCr 4:2:0, as most photos
  k444,   // YCbCr 4:4:4
  kGray,  // one grey component
};

struct SyntheticOptions {
  std::string output_dir;
  int train_images = 256;
  int val_images = 64;  // 0 writes no val split
  std::string train_split = "train2017";
  std::string val_split = "val2017";
  int num_classes = 8;  // 1..MaxSyntheticClasses()
  // Image size: fixed when width and height are both > 0, else each side is drawn
  // uniformly from [min_size, max_size] (varied aspect ratios).
  int width = 0;
  int height = 0;
  int min_size = 256;
  int max_size = 640;
  // Instead: each image's size drawn from COCO train2017's sizes as coco128 samples
  // them (640x480 most often, 86% with a 640-pixel side).
  bool coco_sizes = false;
  int max_objects = 8;  // objects asked per non-background image: 1..max_objects
  double min_object_fraction = 0.05;
  double max_object_fraction = 0.5;
  // Share of images without objects; they are spread evenly (image i is one when
  // floor((i + 1) * f) > floor(i * f)), so a split of n images has floor(n * f).
  double background_fraction = 0.05;
  uint64_t seed = 0;
  int jpeg_quality = 90;
  JpegSubsampling subsampling = JpegSubsampling::k420;
  bool yolo_layout = false;
  // Replace what an earlier run wrote in output_dir: the files its record there
  // (.yolo-synth, which every run writes before its first image) names are removed
  // first, and the folders it made that are left empty; other files are left alone.
  // A non-empty output_dir without that record is someone else's: refused, forced or not.
  bool force = false;
  int num_threads = 0;  // 0: one per hardware thread
  // Every file operation goes through it (nullptr: ffr::Env::Default()), so tests fail any of them.
  ffr::Env* env = nullptr;
};

struct SyntheticSummary {
  int64_t images = 0;
  int64_t background_images = 0;
  int64_t objects = 0;
  int64_t bytes = 0;  // all files written: JPEGs, labels, JSON, YAML
};

// Writes the dataset that `options` describe. Fails with AlreadyExists when
// output_dir holds an earlier run's dataset and force is off, or files no run
// wrote; InvalidArgument on bad options.
ffr::Status GenerateSyntheticCoco(const SyntheticOptions& options, SyntheticSummary* summary);

// The scene of image `index` of `split`, exactly as GenerateSyntheticCoco renders it.
SyntheticSceneSpec SyntheticSceneSpecFor(const SyntheticOptions& options, const std::string& split, int index);

}  // namespace ffyolo
