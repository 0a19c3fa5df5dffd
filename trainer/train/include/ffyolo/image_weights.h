// --image-weights: YOLOv5 v7.0's class-weighted image sampling (train.py with
// utils/general.py's labels_to_class_weights and labels_to_image_weights).
// Before each epoch an image weighs the sum over its labels of their class
// weights, a class weighing model.class_weights * (1 - its mAP50-95 at the
// last validation)^2 / nc; the loader then draws the epoch's images with
// those weights (Loader::SetSampleWeights). Torch-free.
#pragma once

#include <cstdint>
#include <vector>

#include "ffyolo/label_index.h"
#include "ffyolo/val_metrics.h"

namespace ffyolo {

// The classes of each image's training labels (crowd boxes left out, as the
// loader leaves them out); all 0 with single_cls.
std::vector<std::vector<int>> ImageLabelClasses(const LabelIndex& index, bool single_cls);

// model.class_weights: labels_to_class_weights(labels, nc) * nc, i.e. the
// inverse label count of each class (1 for a class without labels),
// normalized to sum 1 and held in float32 as the torch tensor is, times nc.
std::vector<float> ModelClassWeights(const std::vector<std::vector<int>>& labels, int nc);

// labels_to_image_weights(labels, nc, class_weights * (1 - maps)^2 / nc).
std::vector<double> ImageWeights(const std::vector<std::vector<int>>& labels, const std::vector<float>& class_weights,
                                 const std::vector<double>& maps);

// val.py's maps: each class's mAP50-95, the mean mAP50-95 for classes it has no row for.
std::vector<double> ClassMaps(const ValMetrics& metrics, int nc);

}  // namespace ffyolo
