// YOLOv5's augment_hsv: random gains on H, S and V applied through 8-bit
// lookup tables in OpenCV's HSV (H in [0, 180)).
#pragma once

#include <array>
#include <cstdint>
#include <opencv2/core.hpp>

#include "ffyolo/random.h"

namespace ffyolo {

struct HsvGains {
  double h = 1, s = 1, v = 1;
};

// r = U(-1, 1)^3 * [hgain, sgain, vgain] + 1.
HsvGains DrawHsvGains(SampleRandom* rng, double hgain, double sgain, double vgain);

// lut_h = uint8((x * h) % 180), lut_s = uint8(clip(x * s, 0, 255)), lut_v likewise (truncating casts).
struct HsvLuts {
  std::array<uint8_t, 256> h, s, v;
};
HsvLuts BuildHsvLuts(const HsvGains& gains);

// BGR -> HSV, LUT per channel, HSV -> BGR, in place on a CV_8UC3 image (may
// be a view). The round trip is lossy even with identity tables, so, like
// YOLOv5, callers skip it altogether when hgain, sgain and vgain are all 0.
// Works a few rows at a time with OpenCV's own conversions: the result is
// cv::cvtColor's to the bit, without a full-size HSV image.
void ApplyHsv(const HsvLuts& luts, cv::Mat* bgr);

// The same from `src` into `dst` (CV_8UC3, same size; views allowed): lets a
// caller convert a strip into a buffer of its own.
void ApplyHsv(const HsvLuts& luts, const cv::Mat& src, cv::Mat* dst);

}  // namespace ffyolo
