// The batch's image layout: RGB planes (CHW) from OpenCV's interleaved BGR (HWC).
#pragma once

#include <cstdint>

#include <opencv2/core.hpp>

#include "ffyolo/hsv.h"
#include "ffyolo/letterbox.h"

namespace ffyolo {

// Writes `bgr` (CV_8UC3) as 3 planes R, G, B of rows x cols bytes each.
void WriteRgbPlanes(const cv::Mat& bgr, uint8_t* dst);

// The end of a training sample: augment_hsv with `hsv` (none when null),
// flipud, fliplr, then the planes as WriteRgbPlanes writes them (or B, G, R). The same
// result as ApplyHsv, cv::flip and WriteRgbPlanes in turn, but in one pass
// (HsvToPlanes per row): each pixel of `bgr` is read once and written once,
// into its flipped place in the planes, and `bgr` is left unchanged.
struct PlaneAugment {
  const HsvLuts* hsv = nullptr;
  bool flip_up_down = false;
  bool flip_left_right = false;
  bool bgr = false;  // the planes B, G, R instead (Ultralytics 8's Format with its bgr)
};
void WriteRgbPlanes(const cv::Mat& bgr, const PlaneAugment& augment, uint8_t* dst);

// A validation image: ApplyLetterbox into a plan's target size, then
// WriteRgbPlanes, but without the letterboxed copy: the 114 border goes
// straight into the planes and `bgr` (resized first when the plan says so)
// into their middle.
void WriteLetterboxedPlanes(const cv::Mat& bgr, const LetterboxPlan& plan, uint8_t* dst);

}  // namespace ffyolo
