// The YOLOv5 v7.0 resize rules: load_image (longest side to img_size) and
// letterbox (resize into a target shape, pad with 114), with Python's rounding.
#pragma once

#include <opencv2/core.hpp>

#include "ffyolo/augmentation.h"
#include "ffyolo/py_round.h"

namespace ffyolo {

inline constexpr int kPadValue = 114;

// load_image's size: r = img_size / max(w0, h0); YOLOv5: (int(w0 * r), int(h0 * r));
// Ultralytics 8: (min(ceil(w0 * r), img_size), min(ceil(h0 * r), img_size)).
cv::Size LoadResizeSize(int w0, int h0, int img_size, Augmentation mode = Augmentation::kYolov5);
// load_image's interpolation: YOLOv5: INTER_LINEAR when augmenting or upscaling, else INTER_AREA;
// Ultralytics 8: always INTER_LINEAR.
int LoadResizeInterpolation(bool augment, int w0, int h0, int img_size, Augmentation mode = Augmentation::kYolov5);

// The pixels of a `src`-sized image that cv::resize to `dst` (INTER_LINEAR,
// which takes 2 x 2 neighbours, or the INTER_AREA it switches to for an exact
// halving) reads to compute dst's `region`, with a pixel of margin for rounding.
cv::Rect ResizeSourceRegion(const cv::Rect& region, cv::Size src, cv::Size dst);

// What letterbox(im, new_shape, auto, scaleup, stride) does to a w x h image.
struct LetterboxPlan {
  double ratio = 1;          // r
  int new_w = 0, new_h = 0;  // round(w * r), round(h * r) (banker's rounding)
  int top = 0, bottom = 0, left = 0, right = 0;
  double dw = 0, dh = 0;     // half paddings, as YOLOv5 returns them
};
// auto_stride > 0 is letterbox's auto=True with that stride (detect.py's
// LoadImages): only the padding to the next multiple of the stride is kept,
// so the result is at most target_w x target_h and no longer square.
LetterboxPlan PlanLetterbox(int w, int h, int target_w, int target_h, bool scaleup, int auto_stride = 0);

// Writes the letterboxed `src` into `dst`, which must be target_h x target_w
// CV_8UC3 (it may be a view into a larger buffer): resize (INTER_LINEAR) when
// the size changes, 114 around.
void ApplyLetterbox(const cv::Mat& src, const LetterboxPlan& plan, cv::Mat* dst);

}  // namespace ffyolo
