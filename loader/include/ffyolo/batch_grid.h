// Batch grids: a batch drawn as a mosaic of its images with their boxes and
// class names, like Ultralytics' train_batch0.jpg. For looking at what the
// loader produces (yolo-ffr show) and for the trainer's run directory.
#pragma once

#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "ffr/env.h"
#include "ffr/status.h"
#include "ffyolo/batch.h"
#include "ffyolo/dataset.h"

namespace ffyolo {

struct GridOptions {
  int max_images = 16;     // the first images of the batch
  int max_side = 1920;     // the grid is scaled down to fit
  std::vector<std::string> names;  // class index -> label (indices are printed when absent)
};

// Ultralytics' palette colour (BGR) of class `cls`: utils/plots.py colors(cls, bgr=True).
cv::Scalar ClassColor(int cls);

// Annotator.box_label's cv2 drawing on a BGR image: a box p1-p2 of `line_width`
// and, unless `label` is empty, the label in white on a filled box of `color`
// above p1 (inside the box when there is no room above). Text of `font_scale`
// and thickness max(line_width - 1, 1); v7.0 uses line_width / 3.
void DrawBoxLabel(cv::Mat* image, cv::Point p1, cv::Point p2, const cv::Scalar& color, const std::string& label,
                  int line_width, double font_scale);

// A BGR image of the batch's images in a near-square grid, boxes drawn in a
// colour per class with the class name, each image's index in the corner.
cv::Mat RenderBatchGrid(const Batch& batch, const GridOptions& options);

// What `yolo-ffr show` draws: the first batch of a split, augmented as for
// training (mosaic, perspective, HSV, flips) or letterboxed as for validation.
struct ShowOptions {
  std::string split;  // "" = the training split (augment) or the validation split
  bool augment = false;
  uint64_t seed = 0;  // augmented grids differ by seed
  int img_size = 640;
  int images = 16;
};
ffr::Status RenderDatasetGrid(const Dataset& dataset, const ShowOptions& options, const std::string& path);

// Encodes a BGR image as JPEG (TurboJPEG) and writes it atomically through `env`.
ffr::Status WriteJpeg(const cv::Mat& bgr, const std::string& path, int quality = 90,
                      ffr::Env* env = ffr::Env::Default());

}  // namespace ffyolo
