// Batch grids: a batch drawn as a mosaic of its images with their boxes and
// class names, like Ultralytics' train_batch0.jpg. For looking at what the
// loader produces (yolo-ffr show) and for the trainer's run directory.
#pragma once

#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "ffr/status.h"
#include "ffyolo/batch.h"

namespace ffyolo {

struct GridOptions {
  int max_images = 16;     // the first images of the batch
  int max_side = 1920;     // the grid is scaled down to fit
  std::vector<std::string> names;  // class index -> label (indices are printed when absent)
};

// A BGR image of the batch's images in a near-square grid, boxes drawn in a
// colour per class with the class name, each image's index in the corner.
cv::Mat RenderBatchGrid(const Batch& batch, const GridOptions& options);

// Encodes a BGR image as JPEG (TurboJPEG) and writes it atomically.
ffr::Status WriteJpeg(const cv::Mat& bgr, const std::string& path, int quality = 90);

}  // namespace ffyolo
