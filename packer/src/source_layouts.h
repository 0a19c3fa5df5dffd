// The two source layouts ScanSource knows, one split at a time. Internal to
// ffyolo_source: source.cc detects the layout and handles the class names.
#pragma once

#include <string>
#include <vector>

#include "ffyolo/source.h"

namespace ffyolo::source_internal {

// Reads root/annotations/instances_<split>.json. The first split read sets
// dataset->class_names and category_ids; later splits must have the same
// categories. Warnings go to dataset->warnings.
Status ScanCocoJsonSplit(const std::string& root, const std::string& split, SourceDataset* dataset,
                         SourceSplit* out);

// Reads root/images/<split>/ and root/labels/<split>/. `num_classes` is the
// class count from the data YAML, 0 when unknown (classes are then only
// checked to be non-negative). *max_class gets the largest class index seen,
// -1 when there is none.
Status ScanYoloTxtSplit(const std::string& root, const std::string& split, size_t num_classes,
                        std::vector<std::string>* warnings, SourceSplit* out, int* max_class);

// The label file of an image file (relative to images/<split>/) in `label_dir`:
// its path with the extension .txt (Ultralytics' img2label_paths).
std::string YoloLabelPath(const std::string& label_dir, const std::string& image_file);

// The training box of a COCO annotation (bbox [x, y, w, h] in pixels, w and h
// positive) in an image of width x height: a normalized centre box. False when
// a value is past float's range, which the record stores.
bool CocoTrainingBox(const EvalBox& annotation, uint32_t width, uint32_t height, Box* out);

}  // namespace ffyolo::source_internal
