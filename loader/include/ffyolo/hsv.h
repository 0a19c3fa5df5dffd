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

// The draws themselves: U(-1, 1)^3 * [hgain, sgain, vgain].
struct HsvDraw {
  double h = 0, s = 0, v = 0;
};
HsvDraw DrawHsv(SampleRandom* rng, double hgain, double sgain, double vgain);

// YOLOv5's r = U(-1, 1)^3 * [hgain, sgain, vgain] + 1: DrawHsv's draws + 1.
HsvGains DrawHsvGains(SampleRandom* rng, double hgain, double sgain, double vgain);

// lut_h = uint8((x * h) % 180), lut_s = uint8(clip(x * s, 0, 255)), lut_v likewise (truncating casts).
struct HsvLuts {
  std::array<uint8_t, 256> h, s, v;
};
HsvLuts BuildHsvLuts(const HsvGains& gains);
// Ultralytics 8's RandomHSV (since 8.3.79) shifts hue instead of scaling it:
// lut_h = uint8((x + h * 180) % 180); lut_s and lut_v are YOLOv5's with gains
// s + 1 and v + 1 (the same doubles as YOLOv5's r). Its lut_s[0] = 0 is
// what 0 * gain gives anyway.
HsvLuts BuildShiftedHueLuts(const HsvDraw& draw);

// BGR -> HSV, LUT per channel, HSV -> BGR, in place on a CV_8UC3 image (may
// be a view), with OpenCV's own conversions as YOLOv5 runs them. The round
// trip is lossy even with identity tables, so, like YOLOv5, callers skip it
// altogether when hgain, sgain and vgain are all 0. Training samples take
// HsvToPlanes instead; this is the small-file baseline's step by step.
void ApplyHsv(const HsvLuts& luts, cv::Mat* bgr);

// augment_hsv on one row of `width` BGR pixels, written into the R, G and B
// plane rows `r`, `g`, `b` (source pixel x at width - 1 - x when `mirror`):
// the same bytes as ApplyHsv, in one pass and without OpenCV. It computes
// cvtColor's 8-bit fixed-point BGR->HSV, the tables, and its float HSV->BGR
// with the roundings of the code OpenCV runs for that column: its vector loop
// truncates, the last width % block pixels of a row (block: 32 with OpenCV's
// AVX2 build, 16 otherwise, as cv::checkHardwareSupport says) go through
// scalar code that rounds, and the AVX2 build fuses some multiply-subtracts
// (docs/loader.md, "After the warp").
void HsvToPlanes(const HsvLuts& luts, const uint8_t* bgr, int width, bool mirror, uint8_t* r, uint8_t* g, uint8_t* b);

}  // namespace ffyolo
