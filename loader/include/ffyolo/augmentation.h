// Augmentation: whose training pipeline the loader reproduces. YOLOv5 v7.0's
// (LoadImagesAndLabels) is the default; Ultralytics 8's (the `ultralytics`
// package 8.4: YOLOv8 / YOLO11, data/augment.py's v8_transforms and
// data/base.py's load_image) differs in the places docs/loader.md lists
// ("Ultralytics 8's augmentation"), and each operator takes the mode where
// it differs.
#pragma once

#include <string>

#include "ffr/status.h"

namespace ffyolo {

enum class Augmentation { kYolov5, kUltralytics8 };

// "yolov5" or "ultralytics8".
const char* AugmentationName(Augmentation a);
// The inverse of AugmentationName; an error naming the accepted values otherwise.
ffr::Status ParseAugmentation(const std::string& name, Augmentation* out);

}  // namespace ffyolo
