// Augmentation: whose training pipeline the loader reproduces. YOLOv5 v7.0's
// (LoadImagesAndLabels) is the default; Ultralytics 8's (the `ultralytics`
// package 8.4: YOLOv8 / YOLO11, data/augment.py's v8_transforms and
// data/base.py's load_image) differs in the places docs/loader.md lists
// ("Ultralytics 8's augmentation"), and each operator takes the mode where
// it differs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

enum class Augmentation { kYolov5, kUltralytics8 };

// "yolov5" or "ultralytics8".
const char* AugmentationName(Augmentation a);
// The inverse of AugmentationName; an error naming the accepted values otherwise.
ffr::Status ParseAugmentation(const std::string& name, Augmentation* out);

// Ultralytics 8's augmentation probabilities that YOLOv5 v7.0's hyp files have
// no key for, by its default.yaml's names: the ultralytics8 mode's alone.
struct Ultralytics8Hyp {
  double cutmix = 0;  // CutMix, after MixUp (cutmix.h)
  double bgr = 0;     // Format's: a sample's planes B, G, R instead of R, G, B

  // Each key with its value, in default.yaml's order.
  std::vector<std::pair<std::string, double>> Values() const;
  // Sets key `name`; false for a name that is none of these.
  bool Set(const std::string& name, double value);
  // Each value in [0, 1], and all 0 unless `mode` is kUltralytics8: an error naming the key otherwise.
  ffr::Status Check(Augmentation mode) const;
};

}  // namespace ffyolo
